// An endpoint URL as it may be shown to anyone who can read the subscription.
// A district's endpoint sometimes carries its credential in the URL: a
// user:password before the host, or a query parameter such as Azure
// Functions' ?code=, a SAS ?sig=, an API gateway's ?api_key=. The URL keeps
// its scheme, host, port, path and every parameter's name (what tells one
// endpoint from another and what a support reader needs to recognise it),
// and the credential's value becomes the mask. Used by the dashboard (client
// components too: no imports here), the notices, the lookup and the API's
// read answers; the worker's redaction of stored answers takes the same
// values (urlSecrets).

export const URL_MASK = "****";

/**
 * Query parameter names whose value is a credential, compared lower-cased
 * with "-", "_" and "." removed (api_key, Api-Key and apikey are one name).
 * Short generic names match exactly only: "key" and "code" are Google's and
 * Azure Functions' credentials, "sortkey" and "zipcode" are not.
 */
const SECRET_NAMES = new Set(["code", "token", "sig", "signature", "key", "apikey", "accesstoken", "secret", "password", "passwd", "pwd", "auth", "authorization"]);
/**
 * Endings that make any name a credential: client_secret, refresh_token,
 * X-Amz-Signature, X-Amz-Security-Token, x-api-key, hub.secret. A page token
 * is masked too, which costs a reader nothing they need.
 */
const SECRET_ENDINGS = ["token", "secret", "password", "signature", "apikey"];

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return raw;
  }
}

function isSecretName(raw: string): boolean {
  const name = decodeName(raw)
    .toLowerCase()
    .replace(/[-_.\s]/g, "");
  return SECRET_NAMES.has(name) || SECRET_ENDINGS.some((e) => name.endsWith(e));
}

/**
 * RFC 3986's appendix B split (scheme, authority, path, query, fragment),
 * which every string matches. The authority also starts after two
 * backslashes, as the WHATWG parser that sends the request reads them.
 */
const PARTS = /^([^:/?#\\]+:)?((?:\/\/|\\\\)[^/?#\\]*)?([^?#]*)(\?[^#]*)?(#.*)?$/s;

type Part = { text: string; secret: boolean };

/** The URL cut into pieces, each credential value a piece of its own. */
function pieces(url: string): Part[] {
  const m = PARTS.exec(url);
  if (!m) return [{ text: url, secret: false }];
  const [, scheme = "", authority = "", path, query = "", fragment = ""] = m;
  const out: Part[] = [{ text: scheme, secret: false }];
  const at = authority.lastIndexOf("@");
  if (at === -1) out.push({ text: authority, secret: false });
  else {
    // Everything before the last @ is userinfo (an IPv6 host's colons come after it). Its password is the credential;
    // a user alone is one too (a token sent as Basic's user, as Stripe and GitHub take it).
    const userinfo = authority.slice(2, at);
    const colon = userinfo.indexOf(":");
    out.push({ text: authority.slice(0, 2), secret: false });
    if (colon === -1) out.push({ text: userinfo, secret: userinfo !== "" });
    else out.push({ text: userinfo.slice(0, colon + 1), secret: false }, { text: userinfo.slice(colon + 1), secret: colon + 1 < userinfo.length });
    out.push({ text: authority.slice(at), secret: false });
  }
  out.push({ text: path, secret: false });
  // The fragment never leaves the browser, but an OAuth implicit grant puts access_token there: it is read the same way.
  for (const part of [query, fragment]) {
    if (!part) continue;
    out.push({ text: part[0], secret: false });
    part
      .slice(1)
      .split(/([&;])/)
      .forEach((pair, i) => {
        const eq = pair.indexOf("=");
        if (i % 2 === 1 || eq === -1 || eq === pair.length - 1 || !isSecretName(pair.slice(0, eq))) out.push({ text: pair, secret: false });
        else out.push({ text: pair.slice(0, eq + 1), secret: false }, { text: pair.slice(eq + 1), secret: true });
      });
  }
  return out;
}

/**
 * `url` with its userinfo password (or a user alone) and the values of
 * credential-named query parameters replaced by ****; every other character
 * as stored. A string that is not a URL is read the same way (it has no
 * authority, and may have a query), so nothing in it that looks like a
 * credential parameter is shown either. Masking a masked URL changes nothing.
 */
export function displayUrl(url: string): string {
  return pieces(url)
    .map((p) => (p.secret ? URL_MASK : p.text))
    .join("");
}

/** The credential values `url` carries, as written in it and decoded: what the worker masks in an answer that echoes them. */
export function urlSecrets(url: string): string[] {
  const out = new Set<string>();
  for (const p of pieces(url))
    if (p.secret) {
      out.add(p.text);
      out.add(decodeName(p.text));
    }
  return [...out];
}

/** Whether a credential's place in `url` holds the mask itself: a URL copied from a masked view, not one to store. */
export function hasMaskedCredential(url: string): boolean {
  return pieces(url).some((p) => p.secret && p.text === URL_MASK);
}
