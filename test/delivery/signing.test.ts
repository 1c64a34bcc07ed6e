import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { signatureHeader } from "../../lib/signing/standard-webhooks";
import { generateSecret } from "../../lib/subscriptions/secrets";

describe("Standard Webhooks signatures", () => {
  const body = Buffer.from('{"id":"evt_1","type":"assignment.graded","timestamp":"2026-01-01T00:00:00.000Z","data":{"score":93,"name":"Zoë"}}');
  const id = "a".repeat(64);
  const ts = Math.floor(Date.now() / 1000);

  it("verifies with the standardwebhooks package", () => {
    const secret = generateSecret();
    const headers = { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": signatureHeader([secret], id, ts, body) };
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ id: "evt_1" });
    expect(headers["webhook-signature"]).toBe(new Webhook(secret).sign(id, new Date(ts * 1000), body));
  });

  it("during rotation there is one signature per secret and either secret verifies", () => {
    const [old, fresh] = [generateSecret(), generateSecret()];
    const sig = signatureHeader([fresh, old], id, ts, body);
    expect(sig.split(" ")).toHaveLength(2);
    const headers = { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": sig };
    expect(() => new Webhook(old).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(fresh).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
  });

  it("covers the exact bytes: one changed byte fails", () => {
    const secret = generateSecret();
    const headers = { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": signatureHeader([secret], id, ts, body) };
    const tampered = Buffer.from(body.toString().replace("93", "39"));
    expect(() => new Webhook(secret).verify(tampered, headers)).toThrow();
  });
});
