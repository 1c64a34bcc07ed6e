// An erased value in operators' free text. An erasure scrubs its value out of
// the reasons already written (lib/ledger/sql/erase.ts scrubOperatorText) and
// records a keyed MAC of it, so that a reason written afterwards that names
// the value is refused (assertNoErasedValue) without the value being kept
// anywhere.
//
// "Names the value" means: the value, in any case, as a whole word, not inside
// a longer run of letters and digits ("stu_881" in "Stu_881's grade", not in
// "stu_8810"; "881" not in "INC-8812"). The SQL pattern and the candidate
// words below apply the same rule, so what the scrub leaves the check accepts.
import "server-only";
import { createHmac, hkdfSync } from "node:crypto";
import { AppError } from "../errors";
import { parseKey, PREVIOUS_KEYS_ENV, secretKey } from "../auth/keys";
import { ledgerDb, type LedgerDb } from "../ledger/read/db";
import { erasedValueLengths, hasErasedValueMac } from "../ledger/sql/erase";
import type { Scope } from "../tenants/scope";

/** What a scrubbed value becomes in the text that held it. */
export const ERASED_TEXT = "[erased]";

/** A value as it is compared: trimmed (as the erasure takes it) and lower-case. */
const normalise = (value: string): string => value.trim().toLowerCase();

const WORD_CHAR = /[A-Za-z0-9]/;

/** Whether `text` names `value` as a whole word, in any case. */
export function namesValue(text: string, value: string): boolean {
  const v = normalise(value);
  if (v === "") return false;
  const t = text.toLowerCase();
  for (let i = t.indexOf(v); i >= 0; i = t.indexOf(v, i + 1)) if (isWordAt(t, i, v.length)) return true;
  return false;
}

/** The text from `i` for `len` characters is not part of a longer run of letters and digits. */
function isWordAt(t: string, i: number, len: number): boolean {
  return !(i > 0 && WORD_CHAR.test(t[i - 1])) && !(i + len < t.length && WORD_CHAR.test(t[i + len]));
}

/** A PostgreSQL regular expression (for ~* and regexp_replace with 'gi') that finds `value` as namesValue does. */
export function valuePattern(value: string): string {
  const escaped = value.trim().replace(/[.^$*+?()[\]{}|\\]/g, "\\$&");
  return `(?<![A-Za-z0-9])${escaped}(?![A-Za-z0-9])`;
}

/**
 * The MAC keys: the current HOOKLEDGER_SECRET_KEY's first (it writes), then any previous keys still configured for a
 * rotation (HOOKLEDGER_SECRET_KEY_PREVIOUS), so erasures recorded before a rotation are still recognised until the old
 * key is removed. A subkey of its own, so the bytes are never those that seal secrets or sessions.
 */
function macKeys(): Buffer[] {
  const previous = (process.env[PREVIOUS_KEYS_ENV] ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean)
    .map((k) => parseKey(k, PREVIOUS_KEYS_ENV));
  return [secretKey(), ...previous].map((k) => Buffer.from(hkdfSync("sha256", k, Buffer.alloc(0), "hookledger erased-values v1", 32)));
}

const mac = (key: Buffer, normalised: string): Buffer => createHmac("sha256", key).update(normalised, "utf8").digest();

/** What an erasure records of its value: the MAC under the current key and the length the check slices reasons at. */
export function erasedValueRecord(value: string): { mac: Buffer; length: number } {
  const v = normalise(value);
  return { mac: mac(macKeys()[0], v), length: v.length };
}

/** Every whole word of `text` (lower-case) of each length: the candidates an erased value of that length could be. */
function candidates(text: string, lengths: number[]): Set<string> {
  const t = text.toLowerCase();
  const out = new Set<string>();
  for (const len of lengths)
    for (let i = 0; i + len <= t.length; i++) {
      if (!isWordAt(t, i, len)) continue;
      const s = t.slice(i, i + len);
      // Values are trimmed, so a stretch that starts or ends with a space is none of them.
      if (s.trim().length === len) out.add(s);
    }
  return out;
}

/**
 * 400 when one of `texts` (operators' reasons: redrive, resolve, resend, batches, pause, archive…) names a value an
 * erasure removed. Only erasures the caller's scope could see are consulted (a tenant's own and tenant-less ones), so
 * the refusal tells a district nothing about another district's erasures. Two short reads of `erasures`; the texts are
 * checked by MAC, the values themselves being nowhere.
 */
async function assertNoErasedValue(db: LedgerDb, scope: Scope, texts: { path: string; text: string | null | undefined }[]): Promise<void> {
  const given = texts.filter((t): t is { path: string; text: string } => typeof t.text === "string" && t.text.trim() !== "");
  if (given.length === 0) return;
  const lengths = await erasedValueLengths(db, scope.tenantId);
  if (lengths.length === 0) return;
  const keys = macKeys();
  for (const { path, text } of given) {
    const macs = [...candidates(text, lengths)].flatMap((c) => keys.map((k) => mac(k, c)));
    if (macs.length > 0 && (await hasErasedValueMac(db, macs, scope.tenantId)))
      throw new AppError(
        "validation_failed",
        `${path}: it names an erased value (an erasure removed it from the ledger), and reasons are kept in the audit log; give the ticket or request number instead.`,
        [{ path, message: "names an erased value; leave it out" }],
      );
  }
}

/** assertNoErasedValue of one request's reason, on the request pool: what every route that takes an operator's reason calls before acting. */
export function assertReasonNotErased(scope: Scope, reason: string | null | undefined, path = "body.reason"): Promise<void> {
  return assertNoErasedValue(ledgerDb(), scope, [{ path, text: reason }]);
}
