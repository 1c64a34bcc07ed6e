// displayUrl: an endpoint URL as every reader may see it. The credential a
// district put in its URL (user:password, ?code= and its kin) becomes ****;
// scheme, host, port, path, parameter names and other values stay as stored.
import { describe, expect, it } from "vitest";
import { URL_MASK, displayUrl, hasMaskedCredential, urlSecrets } from "../../lib/display-url";

describe("displayUrl", () => {
  it("masks the userinfo password and keeps the user", () => {
    expect(displayUrl("https://sis:hunter2@sis.example/hook")).toBe("https://sis:****@sis.example/hook");
  });

  it("masks a user given without a password (a token sent as Basic's user)", () => {
    expect(displayUrl("https://sk_live_abc@api.example/hook")).toBe("https://****@api.example/hook");
  });

  const names = [
    "code",
    "token",
    "sig",
    "key",
    "apikey",
    "api_key",
    "api-key",
    "access_token",
    "secret",
    "password",
    "signature",
    "auth",
    "client_secret",
    "refresh_token",
    "X-Amz-Signature",
    "x-api-key",
  ];
  it.each(names)("masks the value of ?%s= and keeps the other parameters", (name) => {
    expect(displayUrl(`https://sis.example/hook?district=lincoln&${name}=abc123&v=2`)).toBe(`https://sis.example/hook?district=lincoln&${name}=****&v=2`);
  });

  it("compares names case-insensitively", () => {
    expect(displayUrl("https://fn.example/api/hook?CODE=abc&Api_Key=def&ACCESS_TOKEN=ghi")).toBe("https://fn.example/api/hook?CODE=****&Api_Key=****&ACCESS_TOKEN=****");
  });

  it("masks every occurrence of a repeated parameter", () => {
    expect(displayUrl("https://sis.example/hook?token=a1&x=1&token=b2")).toBe("https://sis.example/hook?token=****&x=1&token=****");
  });

  it("reads a percent-encoded name (api%5Fkey is api_key)", () => {
    expect(displayUrl("https://sis.example/hook?api%5Fkey=abc")).toBe("https://sis.example/hook?api%5Fkey=****");
  });

  it("leaves names that merely contain a short secret word alone", () => {
    const url = "https://sis.example/hook?zipcode=90210&sortkey=name&monkey=1&authority=x&signed=yes";
    expect(displayUrl(url)).toBe(url);
  });

  it("leaves an empty value and a bare name as they are", () => {
    expect(displayUrl("https://sis.example/hook?code=&token")).toBe("https://sis.example/hook?code=&token");
  });

  it("keeps a URL without a query (or without credentials) byte for byte", () => {
    for (const url of ["https://sis.example/hook", "https://SIS.example:8443/a%20b/c?q=1%202+3&x=~y#frag", "http://127.0.0.1:9000/"]) expect(displayUrl(url)).toBe(url);
  });

  it("keeps an IPv6 host and its port", () => {
    expect(displayUrl("https://u:p4ss@[2001:db8::1]:8443/hook?sig=abc")).toBe("https://u:****@[2001:db8::1]:8443/hook?sig=****");
    expect(displayUrl("https://[::1]:8443/hook")).toBe("https://[::1]:8443/hook");
  });

  it("masks an access_token in the fragment", () => {
    expect(displayUrl("https://sis.example/cb#access_token=abc&state=1")).toBe("https://sis.example/cb#access_token=****&state=1");
  });

  it("reads a string that is not a URL the same way", () => {
    expect(displayUrl("not a url")).toBe("not a url");
    expect(displayUrl("")).toBe("");
    expect(displayUrl("sis.example/hook?token=abc")).toBe("sis.example/hook?token=****");
    expect(displayUrl("https:\\\\u:pw@sis.example\\hook")).toBe("https:\\\\u:****@sis.example\\hook");
  });

  it("changes nothing in a masked URL", () => {
    const once = displayUrl("https://u:p@sis.example/hook?code=abc");
    expect(displayUrl(once)).toBe(once);
  });
});

describe("urlSecrets and hasMaskedCredential", () => {
  it("lists each credential value, as written and decoded", () => {
    expect(urlSecrets("https://u:p%40ss@sis.example/hook?code=a%2Bb&x=1").sort()).toEqual(["a%2Bb", "a+b", "p%40ss", "p@ss"].sort());
    expect(urlSecrets("https://sis.example/hook")).toEqual([]);
  });

  it("tells a URL copied from a masked view", () => {
    expect(hasMaskedCredential(`https://sis.example/hook?code=${URL_MASK}`)).toBe(true);
    expect(hasMaskedCredential("https://sis.example/hook?code=abc&note=****")).toBe(false);
  });
});
