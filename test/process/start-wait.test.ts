// How `hookledger start` waits for its dashboard before it says "running": a dashboard that takes the connection and
// never answers must not hold the start past its minute (fetch's own header timeout is five minutes).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { waitForHttp } from "../../cli/start";

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: http.RequestListener): Promise<string> {
  const s = http.createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/api/health`;
}

describe("waitForHttp", () => {
  it("gives up on time when the dashboard takes the connection and never answers", async () => {
    const url = await serve(() => {
      /* never answers */
    });
    const t0 = Date.now();
    await expect(waitForHttp(url, 1_500)).rejects.toThrow(/did not answer within 1500 ms/);
    expect(Date.now() - t0).toBeLessThan(4_000);
  });

  it("takes a 503 (up, its database not yet) as an answer, and waits through a 500", async () => {
    const up = await serve((_req, res) => res.writeHead(503).end());
    await expect(waitForHttp(up, 2_000)).resolves.toBeUndefined();
    const broken = await serve((_req, res) => res.writeHead(500).end());
    await expect(waitForHttp(broken, 1_000)).rejects.toThrow(/did not answer/);
  });
});
