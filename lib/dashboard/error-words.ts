// A network failure in plain words, for the people whose endpoint it is: the
// sender stores the error as Node and undici report it ("ECONNREFUSED: connect
// ECONNREFUSED 127.0.0.1:4801", "UND_ERR_SOCKET: other side closed"), which an
// engineer reads at a glance and a district's integration manager cannot. The
// class is the classifier's (lib/net/sender.ts classifyError); the message
// only adds the address, the name or the certificate's fault it names.
import { num } from "../words";

/** The first address an error names after one of `codes` ("connect ECONNREFUSED 127.0.0.1:4801" → "127.0.0.1:4801"). */
function after(message: string, codes: string): string | null {
  const m = new RegExp(`\\b(?:${codes})\\s+([^\\s,;()]+)`).exec(message);
  return m ? m[1].replace(/[.:]+$/, "") : null;
}

const CERTIFICATE_FAULTS: [RegExp, string][] = [
  [/CERT_HAS_EXPIRED|certificate has expired/i, "its certificate has expired"],
  [/CERT_NOT_YET_VALID/i, "its certificate is not valid yet"],
  [/SELF_SIGNED|self[- ]signed/i, "its certificate is self-signed"],
  [/ALTNAME_INVALID|does not match certificate|Hostname\/IP does not match/i, "its certificate is for another name"],
  [/UNABLE_TO_(VERIFY|GET_ISSUER)/i, "its certificate could not be checked against a trusted authority"],
];

/**
 * What a short detail the error adds to its class, as a reader says it: "nothing was listening at 127.0.0.1:4801",
 * "the name sis.example.org could not be found", "its certificate has expired". null when the message adds nothing a
 * reader can use.
 */
export function errorDetail(errorClass: string | null, message: string | null | undefined): string | null {
  const m = message ?? "";
  switch (errorClass) {
    case "connect_refused": {
      const refused = after(m, "ECONNREFUSED");
      if (refused) return `nothing was listening at ${refused}`;
      const unreachable = after(m, "EHOSTUNREACH|ENETUNREACH");
      return unreachable ? `no route to ${unreachable}` : null;
    }
    case "dns": {
      const name = after(m, "ENOTFOUND|EAI_NONAME|EAI_FAIL");
      if (name) return `the name ${name} could not be found`;
      const later = after(m, "EAI_AGAIN");
      return later ? `the name ${later} could not be looked up just then` : null;
    }
    case "reset":
      return "closed before an answer came";
    case "timeout":
    case "connect_timeout": {
      const ms = /within (\d+) ms/.exec(m)?.[1];
      return ms ? `nothing within ${num(Number(ms))} ms` : null;
    }
    case "tls":
      return CERTIFICATE_FAULTS.find(([re]) => re.test(m))?.[1] ?? null;
    default:
      return null;
  }
}

/**
 * The failure as a sentence (no closing full stop), or null for a class whose stored message already speaks plainly
 * or is not the endpoint's (an HTTP answer, a redirect, an interrupted send): "Your endpoint refused the connection
 * (nothing was listening at 127.0.0.1:4801)", "The name sis.example.org could not be found (DNS)", "The connection
 * was closed before an answer came".
 */
export function errorInWords(errorClass: string | null, message: string | null | undefined): string | null {
  const m = message ?? "";
  const detail = errorDetail(errorClass, m);
  const paren = detail ? ` (${detail})` : "";
  switch (errorClass) {
    case "connect_refused":
      return /EHOSTUNREACH|ENETUNREACH/.test(m) && !/ECONNREFUSED/.test(m)
        ? `Your endpoint could not be reached${paren}`
        : `Your endpoint refused the connection${paren}`;
    case "dns": {
      const name = /\bthe name (\S+)/.exec(detail ?? "")?.[1];
      if (!name) return "Your endpoint's name could not be found (DNS)";
      return /EAI_AGAIN/.test(m) ? `The name ${name} could not be looked up just then (DNS); it is tried again` : `The name ${name} could not be found (DNS)`;
    }
    case "reset":
      return "The connection was closed before an answer came";
    case "timeout":
      // The sender's own sentence when no connection was free: the request never left.
      if (/was not sent/.test(m)) return `The request waited for a connection to your endpoint and was not sent${paren}`;
      return `Your endpoint did not answer in time${paren}`;
    case "connect_timeout":
      return `A connection to your endpoint could not be opened in time${paren}`;
    case "tls":
      return `The secure connection (HTTPS) to your endpoint could not be set up${detail ? `: ${detail}` : ""}`;
    case "network":
      return "The connection to your endpoint failed";
    case "target_blocked":
      return "Your endpoint's address is not one deliveries may be sent to";
    default:
      return null;
  }
}
