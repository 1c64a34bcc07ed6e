import { execFileSync } from "node:child_process";
import type { APIRequestContext } from "@playwright/test";
import { E2E_DATA_DIR } from "../playwright.config";

const tokens = new Map<string, string>();

/** An API token for a role, created through the real CLI against the e2e database. */
export function tokenFor(role: "admin" | "producer" | "support" | "manager" | "engineer"): string {
  const cached = tokens.get(role);
  if (cached) return cached;
  const out = execFileSync(process.execPath, ["bin/hookledger.mjs", "token", "create", "--role", role, "--name", `e2e-${role}`], {
    env: { ...process.env, HOOKLEDGER_DATA_DIR: E2E_DATA_DIR, DATABASE_URL: "" },
    encoding: "utf8",
  });
  const token = out.trim().split("\n").pop()!;
  tokens.set(role, token);
  return token;
}

export async function api(request: APIRequestContext, method: "GET" | "POST" | "PATCH", path: string, body?: unknown, role: Parameters<typeof tokenFor>[0] = "admin") {
  const res = await request.fetch(path, {
    method,
    headers: { authorization: `Bearer ${tokenFor(role)}`, "content-type": "application/json" },
    data: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status(), json: await res.json().catch(() => null) };
}
