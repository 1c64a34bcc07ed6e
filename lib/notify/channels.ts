// How a notice goes out: e-mail through the operator's SMTP server
// (HOOKLEDGER_SMTP_URL, one pooled nodemailer transport per process) and a
// Slack-compatible incoming webhook (`{"text": …}`) through the delivery
// sender, so the SSRF guard stands between a district's URL and the network.
import "server-only";
import { randomBytes } from "node:crypto";
import type { Transporter } from "nodemailer";
import type { Sender } from "../net/sender";
import { webhookText, type Message } from "./messages";

const SMTP_URL_ENV = "HOOKLEDGER_SMTP_URL";
const NOTIFY_FROM_ENV = "HOOKLEDGER_NOTIFY_FROM";

export type MailConfig = { url: string; from: string };

/** The SMTP settings from the environment; null when HOOKLEDGER_SMTP_URL is unset. Throws on a malformed URL, naming it. */
export function mailConfigFromEnv(env: NodeJS.ProcessEnv = process.env): MailConfig | null {
  const url = env[SMTP_URL_ENV]?.trim();
  if (!url) return null;
  smtpOptions(url);
  return { url, from: env[NOTIFY_FROM_ENV]?.trim() || "hookledger <hookledger@localhost>" };
}

function smtpOptions(raw: string) {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`${SMTP_URL_ENV} must be a URL such as smtp://user:pass@smtp.example.com:587 (got something that is not a URL).`);
  }
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new Error(`${SMTP_URL_ENV} must start with smtp:// or smtps:// (got ${u.protocol}//).`);
  const secure = u.protocol === "smtps:";
  return {
    pool: true as const,
    host: u.hostname,
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
    maxConnections: 2,
    // A mail server that hangs must not hold a notice (or the loop) for minutes.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  };
}

export type Mailer = { send: (to: string, m: Message) => Promise<void>; close: () => void };

/** The transport (and nodemailer, about 9 MB a process) is loaded at the first notice sent, not by every worker at start. */
export function createMailer(cfg: MailConfig): Mailer {
  const options = smtpOptions(cfg.url);
  let transport: Promise<Transporter> | null = null;
  return {
    async send(to, m) {
      transport ??= import("nodemailer").then((n) => n.default.createTransport(options));
      await (await transport).sendMail({ from: cfg.from, to, subject: m.subject, text: m.body });
    },
    close: () => void transport?.then((t) => t.close()),
  };
}

/** Posts `{"text": …}` to the webhook; throws with the reason unless it answers 2xx. */
export async function postWebhook(sender: Sender, url: string, m: Message): Promise<void> {
  const id = `ntf_${randomBytes(9).toString("hex")}`;
  const res = await sender.send({ url, deliveryKey: id, body: Buffer.from(JSON.stringify({ text: webhookText(m) })), secrets: [], timeoutMs: 15_000 });
  if (res.statusCode !== null && res.statusCode >= 200 && res.statusCode < 300) return;
  throw new Error(res.statusCode !== null ? `the webhook answered HTTP ${res.statusCode}` : `${res.errorClass}: ${res.errorMessage ?? "no answer"}`);
}
