// Validation of a subscription's target URL when it is saved. The connect-time
// guard in the worker (lib/net/ssrf.ts) is what actually stops SSRF (DNS can
// change); this check gives the caller a clear 400 early.
import { AppError } from "../errors";
import { checkHost, type LookupFunction } from "./ssrf";

export async function validateTargetUrl(raw: string, opts: { lookup?: LookupFunction; allowPrivate?: boolean } = {}): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError("validation_failed", `url: ${JSON.stringify(raw)} is not an absolute URL.`, [{ path: "body.url", message: "not a URL" }]);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new AppError("validation_failed", `url: only http and https targets are allowed (got ${url.protocol}).`, [{ path: "body.url", message: "scheme" }]);
  if (url.username || url.password)
    throw new AppError("validation_failed", "url: credentials in the URL are not allowed; the signature authenticates the sender.", [{ path: "body.url", message: "credentials" }]);
  const blocked = await checkHost(url.hostname, opts);
  if (blocked) throw new AppError("validation_failed", `url: ${blocked}`, [{ path: "body.url", message: "target_blocked" }]);
  return url;
}
