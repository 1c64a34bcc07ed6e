// The retention policy from the environment (docs/DESIGN.md, Retention):
//   HOOKLEDGER_RETENTION_DAYS          finished deliveries (delivered, resolved), their
//                                      attempts and the events nothing else needs are
//                                      removed once this many days old (default 90);
//   HOOKLEDGER_PAYLOAD_RETENTION_DAYS  optional: events' payloads and subject values are
//                                      expunged (tombstone 'expunged') after this many
//                                      days, keeping the delivery record; at most the
//                                      retention days, since a payload cannot outlive
//                                      the row it belongs to.
// Read one way everywhere (lib/env.ts): a malformed or absurd value stops the
// process with a message naming the variable, instead of becoming NaN, which
// compares false with everything and would silently keep or remove everything.
// Client-safe (no server-only import): the admin page shows the same limits.
import { envInt } from "../env";

export const DEFAULT_RETENTION_DAYS = 90;
/** A hundred years: anything beyond is a typo (an extra zero), not a policy. */
export const MAX_RETENTION_DAYS = 36_500;

export type RetentionDays = { retentionDays: number; payloadRetentionDays: number | null };

/** The environment's policy; throws with the variable's name on a bad value (checked at start by `hookledger start` and the worker). */
export function retentionFromEnv(): RetentionDays {
  const retentionDays = envInt("HOOKLEDGER_RETENTION_DAYS", { default: DEFAULT_RETENTION_DAYS, min: 1, max: MAX_RETENTION_DAYS });
  const raw = process.env.HOOKLEDGER_PAYLOAD_RETENTION_DAYS;
  const payloadRetentionDays =
    raw === undefined || raw.trim() === "" ? null : envInt("HOOKLEDGER_PAYLOAD_RETENTION_DAYS", { default: 0, min: 1, max: MAX_RETENTION_DAYS });
  if (payloadRetentionDays !== null && payloadRetentionDays > retentionDays)
    throw new Error(
      `HOOKLEDGER_PAYLOAD_RETENTION_DAYS (${payloadRetentionDays}) must be at most HOOKLEDGER_RETENTION_DAYS (${retentionDays}): a payload cannot be kept longer than its delivery record.`,
    );
  return { retentionDays, payloadRetentionDays };
}

/** The same rule for a tenant's override (API, CLI): the message, or null when the pair is valid. */
export function checkDays(d: RetentionDays): string | null {
  const ok = (n: number) => Number.isSafeInteger(n) && n >= 1 && n <= MAX_RETENTION_DAYS;
  if (!ok(d.retentionDays)) return `retentionDays must be a whole number of days from 1 to ${MAX_RETENTION_DAYS} (got ${d.retentionDays})`;
  if (d.payloadRetentionDays !== null) {
    if (!ok(d.payloadRetentionDays))
      return `payloadRetentionDays must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}, or null for none (got ${d.payloadRetentionDays})`;
    if (d.payloadRetentionDays > d.retentionDays)
      return `payloadRetentionDays (${d.payloadRetentionDays}) must be at most retentionDays (${d.retentionDays}): a payload cannot be kept longer than its delivery record`;
  }
  return null;
}
