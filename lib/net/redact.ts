// Masking credentials an endpoint echoes back. An echo is rarely byte for
// byte: a gateway's redirect URL-encodes an API key into its Location, a
// debugging receiver answers with the request as JSON (quotes, backslashes
// and slashes escaped), a proxy base64s a header into another. So the text is
// searched in three views: as it is, with one layer of percent and JSON
// escapes decoded, and with two (a value encoded twice, or JSON inside a URL);
// and the needles are each credential and the base64 of it at every
// alignment. A hit in any view masks the stretch of the original text it came
// from. Plain string searches over decoded copies, not one pattern of every
// encoding of every character: that pattern cost 1-3 ms per 4 KB answer,
// this costs a few hundredths.

/** Credentials shorter than this are left alone (they would mask ordinary words); base64 fragments too. */
const MIN_CHARS = 6;

/**
 * A text and, for each of its characters, the stretch [start, end) of the
 * original text it was decoded from (null: it is the original text).
 */
type View = { s: string; start: Int32Array | null; end: Int32Array | null };

const startOf = (v: View, i: number) => (v.start ? v.start[i] : i);
const endOf = (v: View, i: number) => (v.end ? v.end[i] : i + 1);

const hexDigit = (c: number) => (c >= 48 && c <= 57 ? c - 48 : (c | 32) >= 97 && (c | 32) <= 102 ? (c | 32) - 87 : -1);
/** The byte written as two hex digits at s[i], or -1. */
function hexAt(s: string, i: number, digits = 2): number {
  if (i + digits > s.length) return -1;
  let n = 0;
  for (let k = 0; k < digits; k++) {
    const d = hexDigit(s.charCodeAt(i + k));
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
}

const JSON_ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const PERCENT = 37;
const BACKSLASH = 92;

/** UTF-8 sequence length from its lead byte, or 0 when it cannot lead one. */
const utf8Length = (b: number) => (b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0);

/**
 * One layer of percent-encoding (a run of %XX as UTF-8 where it is, else as
 * Latin-1 bytes, which is how HTTP carries header values) and of JSON string
 * escapes decoded, each character still pointing at its original stretch.
 */
function decode(v: View): View {
  const { s } = v;
  const parts: string[] = [];
  const start = new Int32Array(s.length);
  const end = new Int32Array(s.length);
  let len = 0;
  // Each call adds one UTF-16 unit, made from v's characters [from, to).
  const emit = (c: string, from: number, to: number) => {
    parts.push(c);
    start[len] = startOf(v, from);
    end[len] = endOf(v, to - 1);
    len++;
  };
  let i = 0;
  while (i < s.length) {
    // Text without escapes is copied in one piece.
    let j = i;
    while (j < s.length && s.charCodeAt(j) !== PERCENT && s.charCodeAt(j) !== BACKSLASH) j++;
    if (j > i) {
      parts.push(s.slice(i, j));
      if (v.start && v.end) {
        start.set(v.start.subarray(i, j), len);
        end.set(v.end.subarray(i, j), len);
        len += j - i;
      } else
        for (let k = i; k < j; k++, len++) {
          start[len] = k;
          end[len] = k + 1;
        }
      i = j;
      continue;
    }
    if (s.charCodeAt(i) === PERCENT && hexAt(s, i + 1) >= 0) {
      const bytes: number[] = [];
      const at: number[] = [];
      for (let b = hexAt(s, i + 1); s.charCodeAt(i) === PERCENT && b >= 0; b = hexAt(s, i + 1)) {
        bytes.push(b);
        at.push(i);
        i += 3;
      }
      at.push(i);
      for (let k = 0; k < bytes.length;) {
        const n = utf8Length(bytes[k]);
        let valid = n > 0 && k + n <= bytes.length;
        for (let m = 1; valid && m < n; m++) valid = bytes[k + m] >= 0x80 && bytes[k + m] <= 0xbf;
        if (valid) {
          // A four-byte sequence is two UTF-16 units: both point at the whole sequence.
          const text = Buffer.from(bytes.slice(k, k + n)).toString("utf8");
          for (let u = 0; u < text.length; u++) emit(text[u], at[k], at[k + n]);
          k += n;
        } else {
          emit(String.fromCharCode(bytes[k]), at[k], at[k + 1]);
          k++;
        }
      }
      continue;
    }
    if (s.charCodeAt(i) === BACKSLASH) {
      const e = s[i + 1];
      if (e !== undefined && JSON_ESCAPES[e] !== undefined) {
        emit(JSON_ESCAPES[e], i, i + 2);
        i += 2;
        continue;
      }
      const u = e === "u" ? hexAt(s, i + 2, 4) : -1;
      if (u >= 0) {
        emit(String.fromCharCode(u), i, i + 6);
        i += 6;
        continue;
      }
    }
    emit(s[i], i, i + 1);
    i++;
  }
  return { s: parts.join(""), start: start.subarray(0, len), end: end.subarray(0, len) };
}

/**
 * Form encoding writes a space as +, and a credential may hold a + of its
 * own: both sides are compared with + read as a space (a space in a
 * credential matching a + in the text masks a little more, never less).
 */
const fold = (s: string) => (s.includes("+") ? s.replaceAll("+", " ") : s);

/**
 * The parts of base64(anything + s + anything) that depend on s alone, for
 * each of the three alignments s can have in the encoded text, in both
 * alphabets (base64 and base64url), from its UTF-8 and, where it has them,
 * its Latin-1 bytes (how HTTP carried a header value).
 */
function base64Fragments(s: string): string[] {
  const encodings = [Buffer.from(s, "utf8")];
  if (/^[\x00-\xff]*$/.test(s) && /[\x80-\xff]/.test(s)) encodings.push(Buffer.from(s, "latin1"));
  const out: string[] = [];
  for (const bytes of encodings)
    for (const k of [0, 1, 2]) {
      const b64 = Buffer.concat([Buffer.alloc(k), bytes]).toString("base64");
      // The k bytes before spill into the first ceil(8k/6) characters; the last one may share bits with what follows.
      const fragment = b64.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6));
      if (fragment.length >= MIN_CHARS) out.push(fragment, fragment.replace(/\+/g, "-").replace(/\//g, "_"));
    }
  return out;
}

/** What a header value gives away: itself, its token after a scheme, and for Basic the user:password it encodes and the password. */
function credentialStrings(value: string): string[] {
  const out = [value];
  const scheme = value.match(/^([A-Za-z][A-Za-z0-9-]{0,19}) +(\S.*)$/);
  if (scheme) {
    out.push(scheme[2]);
    if (/^basic$/i.test(scheme[1])) {
      const decoded = Buffer.from(scheme[2], "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon > 0) out.push(decoded, decoded.slice(colon + 1));
    }
  }
  return out.filter((v) => v.length >= MIN_CHARS);
}

/** Every string to search for, folded: each credential, and base64 of it or of the JSON or URL text that held it. */
function needlesOf(values: string[]): string[] {
  const needles = new Set<string>();
  for (const value of values)
    for (const c of credentialStrings(value)) {
      needles.add(fold(c));
      for (const source of new Set([c, JSON.stringify(c).slice(1, -1), encodeURIComponent(c)])) for (const f of base64Fragments(source)) needles.add(fold(f));
    }
  return [...needles];
}

const cache = new Map<string, string[]>();
/** Distinct sets of credentials whose needles are kept (a worker sends for many subscriptions; each set is built once). */
const MAX_CACHED = 1_000;

function cachedNeedles(values: string[]): string[] {
  const key = values.join("\u0000");
  let needles = cache.get(key);
  if (!needles) {
    needles = needlesOf(values);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(key, needles);
  }
  return needles;
}

/**
 * `text` with every stretch that holds one of `values` (in any of the forms
 * above) replaced by `mask`. Overlapping hits (a whole "Bearer <token>" and
 * its token) become one mask.
 */
export function maskCredentials(text: string, values: string[], mask: string): string {
  const needles = cachedNeedles(values);
  if (needles.length === 0 || text.length === 0) return text;
  const spans: [number, number][] = [];
  let view: View = { s: text, start: null, end: null };
  for (let layer = 0; ; layer++) {
    const hay = fold(view.s);
    for (const n of needles) for (let at = hay.indexOf(n); at !== -1; at = hay.indexOf(n, at + n.length)) spans.push([startOf(view, at), endOf(view, at + n.length - 1)]);
    // Two layers: a value encoded twice, or JSON-escaped inside a URL.
    if (layer === 2 || !/[%\\]/.test(view.s)) break;
    view = decode(view);
  }
  if (spans.length === 0) return text;
  spans.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let pos = 0;
  for (const [from, to] of spans) {
    if (to <= pos) continue;
    out += text.slice(pos, Math.max(pos, from)) + (from >= pos ? mask : "");
    pos = to;
  }
  return out + text.slice(pos);
}
