// A network failure as a district's integration manager reads it: the class's sentence, with the address, the name
// or the certificate's fault the stored message names, never Node's or undici's codes.
import { describe, expect, it } from "vitest";
import { errorDetail, errorInWords } from "@/lib/dashboard/error-words";

const CODES = /ECONN|ENOTFOUND|EAI_|UND_ERR|ERR_TLS|CERT_|getaddrinfo/;

describe("a network failure in words", () => {
  const cases: [string, string, string][] = [
    ["connect_refused", "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4801", "Your endpoint refused the connection (nothing was listening at 127.0.0.1:4801)"],
    ["connect_refused", "EHOSTUNREACH: connect EHOSTUNREACH 10.0.0.5:443", "Your endpoint could not be reached (no route to 10.0.0.5:443)"],
    ["dns", "ENOTFOUND: getaddrinfo ENOTFOUND sis.example.org", "The name sis.example.org could not be found (DNS)"],
    ["dns", "EAI_AGAIN: getaddrinfo EAI_AGAIN sis.example.org", "The name sis.example.org could not be looked up just then (DNS); it is tried again"],
    ["reset", "UND_ERR_SOCKET: other side closed", "The connection was closed before an answer came"],
    ["reset", "ECONNRESET: read ECONNRESET", "The connection was closed before an answer came"],
    ["timeout", "No answer within 10000 ms; the request may have been received.", "Your endpoint did not answer in time (nothing within 10,000 ms)"],
    ["timeout", "UND_ERR_HEADERS_TIMEOUT: Headers Timeout Error", "Your endpoint did not answer in time"],
    [
      "connect_timeout",
      "The connection to the endpoint (TCP connect or TLS handshake) did not complete within 5000 ms; the request was not sent.",
      "A connection to your endpoint could not be opened in time (nothing within 5,000 ms)",
    ],
    ["tls", "CERT_HAS_EXPIRED: certificate has expired", "The secure connection (HTTPS) to your endpoint could not be set up: its certificate has expired"],
    ["tls", "DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate", "The secure connection (HTTPS) to your endpoint could not be set up: its certificate is self-signed"],
    ["tls", "ERR_SSL_WRONG_VERSION_NUMBER: wrong version number", "The secure connection (HTTPS) to your endpoint could not be set up"],
    ["network", "EPROTO: something odd", "The connection to your endpoint failed"],
  ];
  it.each(cases)("%s “%s”", (cls, message, words) => {
    expect(errorInWords(cls, message)).toBe(words);
    expect(words).not.toMatch(CODES);
  });

  it("leaves an HTTP answer, a redirect and an interrupted send to the words that already say them", () => {
    for (const cls of ["http_5xx", "http_4xx", "redirect", "lease_expired", "shutdown", null]) expect(errorInWords(cls, "anything")).toBeNull();
  });

  it("adds no detail a message does not give", () => {
    expect(errorDetail("connect_refused", null)).toBeNull();
    expect(errorInWords("connect_refused", null)).toBe("Your endpoint refused the connection");
    expect(errorInWords("dns", "")).toBe("Your endpoint's name could not be found (DNS)");
  });
});
