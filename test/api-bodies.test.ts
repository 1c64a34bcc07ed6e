// server.ts hands the publish routes a Request whose body it has already read
// (lib/api/bodies.ts): the route reads those bytes, under the same limit and
// with the same 413 as a streamed body, and the answer's bytes are the text it
// was made from. test/server.test.ts compares whole answers with Next's.
import { describe, expect, it } from "vitest";
import { json, readBodyLimited } from "../lib/api/handler";
import { answerTextOf, readBodyOf, withReadBody } from "../lib/api/bodies";
import { toWebRequest } from "../lib/server/http";
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

  it("toWebRequest attaches the body it was given and builds no stream", async () => {
    const req = { method: "POST", url: "/api/v1/events?x=1", headers: { "content-type": "application/json", host: "h" } } as unknown as IncomingMessage;
    const web = toWebRequest(req, Buffer.from("{}"), { hostname: "127.0.0.1", port: 3000 });
    expect(web.body).toBeNull();
    expect(readBodyOf(web)?.toString()).toBe("{}");
    expect(web.url).toBe("http://127.0.0.1:3000/api/v1/events?x=1");
    expect(web.headers.get("content-type")).toBe("application/json");
    // GET carries none.
    expect(readBodyOf(toWebRequest({ ...req, method: "GET" } as IncomingMessage, Buffer.alloc(0), { hostname: "127.0.0.1", port: 3000 }))).toBeUndefined();
  });

  it("an answer keeps the text it was made from, the same bytes its stream holds", async () => {
    const res = json({ eventId: "evt_1", deliveries: [] }, 202);
    expect(answerTextOf(res)).toBe(await res.clone().text());
    expect(answerTextOf(new Response("x"))).toBeUndefined();
  });
});
