// Validation of a subscription's target URL when it is saved. The connect-time
// guard in the worker (lib/net/ssrf.ts) is what actually stops SSRF (DNS can
// change); this check gives the caller a clear 400 early.
import "server-only";
import { AppError } from "../errors";
import { ALLOW_PRIVATE_ENV, checkHost, privateTargetsAllowed, type LookupFunction } from "./ssrf";

const ALLOW_HTTP_ENV = "HOOKLEDGER_ALLOW_HTTP_TARGETS";

/**
 * Plain http targets are refused unless HOOKLEDGER_ALLOW_HTTP_TARGETS=1 or
 * private targets are allowed (tests, the demo and trusted networks send to
 * local http receivers): a payload of student records and the endpoint's
 * bearer token would otherwise cross the internet in clear text.
 */
function httpTargetsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[ALLOW_HTTP_ENV] === "1" || privateTargetsAllowed(env);
}

export async function validateTargetUrl(raw: string, opts: { lookup?: LookupFunction; allowPrivate?: boolean; allowHttp?: boolean } = {}): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError("validation_failed", `url: ${JSON.stringify(raw)} is not an absolute URL.`, [{ path: "body.url", message: "not a URL" }]);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new AppError("validation_failed", `url: only http and https targets are allowed (got ${url.protocol}).`, [{ path: "body.url", message: "scheme" }]);
  if (url.username || url.password)
    throw new AppError("validation_failed", "url: credentials in the URL are not allowed; the signature authenticates the sender.", [
      { path: "body.url", message: "credentials" },
    ]);
  const blocked = await checkHost(url.hostname, opts);
  if (blocked) throw new AppError("validation_failed", `url: ${blocked}`, [{ path: "body.url", message: "target_blocked" }]);
  // After the SSRF check, so a private http target is refused for being private (the more serious reason).
  if (url.protocol === "http:" && !(opts.allowHttp ?? (opts.allowPrivate || httpTargetsAllowed())))
    throw new AppError(
      "validation_failed",
      `url: http:// targets are refused: the payload, its signature and any endpoint headers would travel unencrypted. Use https://, or set ${ALLOW_HTTP_ENV}=1 (or ${ALLOW_PRIVATE_ENV}=1 for tests and demos) on the dashboard to allow plain http.`,
      [{ path: "body.url", message: "http_not_allowed" }],
    );
  return url;
}
