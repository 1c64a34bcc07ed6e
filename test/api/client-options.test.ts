// A service builds its client from environment variables; an unset or mistyped one must be named when the client is
// made, not surface later as "Cannot read properties of undefined", "fetch failed" after the retries, a 404 for
// /api/v1/api/v1/events or a 401 for "Bearer undefined".
import { describe, expect, it } from "vitest";
import { HookledgerClient } from "../../client/src/index";

type Options = ConstructorParameters<typeof HookledgerClient>[0];
/** As a plain-JavaScript caller passes them: whatever the environment held. */
const make = (opts: Record<string, unknown>) => () => new HookledgerClient(opts as Options);

describe("new HookledgerClient(options)", () => {
  it("names a missing, empty or non-http baseUrl", () => {
    expect(make({ token: "hl_x" })).toThrow(
      new TypeError('HookledgerClient: baseUrl is missing; pass the hookledger server\'s address, such as "http://localhost:3000".'),
    );
    expect(make({ baseUrl: " ", token: "hl_x" })).toThrow(/^HookledgerClient: baseUrl is empty;/);
    expect(make({ baseUrl: 3000, token: "hl_x" })).toThrow(/^HookledgerClient: baseUrl is a number, not a string;/);
    expect(make({ baseUrl: "localhost:3000", token: "hl_x" })).toThrow(/^HookledgerClient: baseUrl "localhost:3000" is not an http:\/\/ or https:\/\/ address;/);
    expect(make({ baseUrl: "hookledger.internal", token: "hl_x" })).toThrow(/is not an http:\/\/ or https:\/\/ address/);
  });

  it("refuses a baseUrl that already ends with /api/v1, naming the one to pass", () => {
    expect(make({ baseUrl: "http://localhost:3000/api/v1/", token: "hl_x" })).toThrow(
      new TypeError('HookledgerClient: baseUrl "http://localhost:3000/api/v1/" ends with /api/v1, which the client adds to every call; pass "http://localhost:3000".'),
    );
  });

  it("names a missing or empty token", () => {
    expect(make({ baseUrl: "http://localhost:3000" })).toThrow(
      /^HookledgerClient: token is missing; pass an API token \(`npx hookledger token create --role producer` prints one;/,
    );
    expect(make({ baseUrl: "http://localhost:3000", token: "" })).toThrow(/^HookledgerClient: token is empty;/);
    expect(make({ baseUrl: "http://localhost:3000", token: null })).toThrow(/^HookledgerClient: token is a null, not a string;/);
  });

  it("takes an origin or a proxy's path prefix, with or without a trailing slash", async () => {
    const urls: string[] = [];
    const fetch = async (input: string | URL | Request) => {
      urls.push(String(input));
      return new Response(JSON.stringify({ eventId: "e1", deliveries: [] }), { status: 202, headers: { "content-type": "application/json" } });
    };
    for (const baseUrl of ["http://localhost:3000", "http://localhost:3000/", "https://tools.example.org/hookledger/"]) {
      await new HookledgerClient({ baseUrl, token: "hl_x", fetch }).publish({ id: "e1", type: "assignment.graded", data: {} });
    }
    expect(urls).toEqual(["http://localhost:3000/api/v1/events", "http://localhost:3000/api/v1/events", "https://tools.example.org/hookledger/api/v1/events"]);
  });
});
