// server.ts hands the publish routes a request whose body it has already read
// (lib/api/bodies.ts): the route reads those bytes, under the same limit and
// with the same 413 as a streamed body, and the answer's bytes are the text it
// was made from. test/process/server.test.ts compares whole answers with Next's.
import { describe, expect, it } from "vitest";
import { json, readBodyLimited } from "../../lib/api/handler";
import { answerBytesOf, readBodyOf, withReadBody } from "../../lib/api/bodies";
import { toApiRequest } from "../../lib/server/http";
import type { IncomingMessage } from "node:http";

const url = "http://127.0.0.1:3000/api/v1/events";

describe("bodies server.ts has already read", () => {
  it("a route reads the attached body; over the limit it answers as for a streamed body", async () => {
    const body = Buffer.from('{"id":"evt_1"}');
    expect(await readBodyLimited(withReadBody(new Request(url, { method: "POST" }), body), 1024)).toBe(body);
    const over = Buffer.alloc(1025, 0x20);
    const streamed = await readBodyLimited(new Request(url, { method: "POST", body: over }), 1024).catch((e: Error) => e);
    const attached = await readBodyLimited(withReadBody(new Request(url, { method: "POST" }), over), 1024).catch((e: Error) => e);
    expect(attached).toMatchObject({ code: "payload_too_large" });
    expect((attached as Error).message).toBe((streamed as Error).message);
  });

  it("toApiRequest carries what Next's Request would (method, URL, headers) and the body beside it, with no stream", async () => {
    const req = {
      method: "POST",
      url: "/api/v1/events?x=1&y=a%20b",
      headers: { "content-type": "application/json", host: "h", "x-forwarded-proto": "https", accept: ["a", "b"] },
    } as unknown as IncomingMessage;
    const server = { hostname: "127.0.0.1", port: 3000 };
    const api = toApiRequest(req, Buffer.from("{}"), server);
    // What undici's Request would say for the same URL and headers.
    const web = new Request(`https://127.0.0.1:3000${req.url}`, { method: "POST", headers: api.headers });
    expect({ method: api.method, url: api.url, body: api.body }).toEqual({ method: web.method, url: web.url, body: null });
    expect([...api.headers]).toEqual([...web.headers]);
    expect(api.headers.get("accept")).toBe("a, b");
    expect(readBodyOf(api)?.toString()).toBe("{}");
    expect(await readBodyLimited(api, 1024)).toEqual(Buffer.from("{}"));
    // GET carries none.
    const get = toApiRequest({ ...req, method: "GET" } as IncomingMessage, Buffer.alloc(0), server);
    expect(readBodyOf(get)).toBeUndefined();
    expect(await readBodyLimited(get, 1024)).toEqual(Buffer.alloc(0));
  });

  it("an answer keeps the bytes it was made from, the same bytes its stream holds", async () => {
    const res = json({ eventId: "evt_1", name: "Zoë 😀", deliveries: [] }, 202);
    expect(await res.clone().json()).toEqual({ eventId: "evt_1", name: "Zoë 😀", deliveries: [] });
    expect(answerBytesOf(res)!.equals(Buffer.from(await res.clone().arrayBuffer()))).toBe(true);
    expect(answerBytesOf(new Response("x"))).toBeUndefined();
  });
});
