// Erasure on request (docs/DESIGN.md, Erasure): every event whose subject
// holds one key and value (a student id), in one tenant or all, becomes a
// tombstone (lib/ledger/sql/erase.ts), its unfinished deliveries resolved
// `erased`. One transaction per chunk of ERASE_CHUNK events, so no lock is
// held for the whole erasure and the worker keeps draining; the erasure's row
// in `erasures` is written first and counts what each chunk committed, so an
// erasure that fails half-way is visible as `running` and a rerun finishes
// the rest (the events already tombstoned no longer match). The receipt, the
// row and the `erasure.run` audit row name the subject KEY, the tenant, the
// counts, who and why; never the erased value. The value is also scrubbed from
// operators' reasons (lib/ledger/sql/erase.ts scrubOperatorText), and the row
// keeps a keyed MAC of it so that later reasons naming it are refused
// (./values.ts).
import "server-only";
import { randomBytes } from "node:crypto";
import type { PrismaClient } from "../db/prisma";
import { retryTransaction } from "../db/retry";
import { ledgerDb } from "../ledger/read/db";
import { AppError, fromZod } from "../errors";
import { writeAudit } from "../audit";
import type { Principal } from "../auth/principal";
import {
  addErasureCounts,
  countTombstone,
  ERASE_CHUNK,
  findOpsEventIds,
  findSubjectEventIds,
  finishErasure,
  insertErasure,
  tenantExists,
  scrubOperatorText,
  tombstoneEvents,
  type ErasureCounts,
  type ErasureTextCounts,
  type SubjectMatch,
} from "../ledger/sql/erase";
import { subjectPair, ZCreateErasure, type TCreateErasure } from "./erasure-input";
import { ERASED_TEXT, erasedValueRecord, namesValue, valuePattern } from "./values";

export type ErasureReceipt = {
  /** er_…; null for a dry run, which records nothing. */
  id: string | null;
  dryRun: boolean;
  status: "preview" | "finished";
  /** The key only: the value is what was erased. */
  subjectKey: string;
  tenant: string | null;
  reason: string;
  by: string;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number;
} & ErasureCounts &
  ErasureTextCounts;

/** A pass re-reads the subject's events after the chunks, for events published meanwhile; a few passes catch a producer that is still publishing. */
const MAX_PASSES = 3;

async function validated(prisma: PrismaClient, input: TCreateErasure) {
  const parsed = ZCreateErasure.safeParse(input);
  if (!parsed.success) throw fromZod(parsed.error);
  const v = parsed.data;
  const tenant = v.tenant ?? null;
  if (tenant !== null && !(await tenantExists(ledgerDb(), tenant)))
    throw new AppError(
      "bad_request",
      `tenant ${JSON.stringify(tenant)} is unknown: no subscription or event names it. Check the spelling, or leave tenant out to erase in every tenant.`,
    );
  const { key, value } = subjectPair(v.subject);
  return { match: { key, value, tenant } satisfies SubjectMatch, reason: v.reason, dryRun: v.dryRun };
}

function sum(a: ErasureCounts, b: ErasureCounts): ErasureCounts {
  return {
    events: a.events + b.events,
    opsEvents: a.opsEvents + b.opsEvents,
    deliveries: a.deliveries + b.deliveries,
    resolved: a.resolved + b.resolved,
    attempts: a.attempts + b.attempts,
  };
}

const ZERO: ErasureCounts = { events: 0, opsEvents: 0, deliveries: 0, resolved: 0, attempts: 0 };

/** The operators' texts to scrub: the value as a word, in the erasure's tenant and tenant-less rows (lib/ledger/sql/erase.ts). */
const scrubOf = (m: SubjectMatch) => ({ pattern: valuePattern(m.value), tenant: m.tenant, replacement: ERASED_TEXT });

/**
 * Of these event ids, how many contain the value. An erasure cannot change an id (it is the delivery key's identity,
 * docs/DESIGN.md invariant 1), so it reports them, by number only: the receipt must not carry the value.
 */
const idsNaming = (ids: string[], value: string) => ids.filter((id) => namesValue(id, value)).length;

/** What an erasure would touch, changing nothing. */
async function preview(prisma: PrismaClient, m: SubjectMatch): Promise<ErasureCounts & ErasureTextCounts> {
  const ids = await findSubjectEventIds(ledgerDb(), m);
  const ops = await findOpsEventIds(ledgerDb(), ids);
  const c = await countTombstone(ledgerDb(), [...ids, ...ops]);
  const reasonsScrubbed = await scrubOperatorText(ledgerDb(), scrubOf(m), { dryRun: true });
  return { events: ids.length, opsEvents: ops.length, ...c, eventIdsWithValue: idsNaming(ids, m.value), reasonsScrubbed };
}

/**
 * Erases the subject's events (or, with dryRun, counts them) and returns the
 * receipt. Bad input (no subject or reason, a key that is not searchable, an
 * empty value, an unknown tenant) is a 400 before anything is written.
 */
export async function createErasure(prisma: PrismaClient, input: TCreateErasure, principal: Principal): Promise<ErasureReceipt> {
  const { match, reason, dryRun } = await validated(prisma, input);
  const t0 = Date.now();
  const started = new Date();
  if (dryRun) {
    const c = await preview(prisma, match);
    return {
      id: null,
      dryRun,
      status: "preview",
      subjectKey: match.key,
      tenant: match.tenant,
      reason,
      by: principal.actor,
      startedAt: started.toISOString(),
      finishedAt: null,
      durationMs: Date.now() - t0,
      ...c,
    };
  }

  const id = `er_${randomBytes(8).toString("hex")}`;
  const value = erasedValueRecord(match.value);
  await insertErasure(ledgerDb(), { id, subjectKey: match.key, tenant: match.tenant, reason, actor: principal.actor, valueMac: value.mac, valueLength: value.length });
  const tomb = { kind: "erased" as const, erasureId: id, actor: principal.actor, reason };
  let total = ZERO;
  let eventIdsWithValue = 0;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const ids = await findSubjectEventIds(ledgerDb(), match);
    if (ids.length === 0) break;
    eventIdsWithValue += idsNaming(ids, match.value);
    for (let i = 0; i < ids.length; i += ERASE_CHUNK) {
      const chunk = ids.slice(i, i + ERASE_CHUNK);
      total = sum(total, await eraseChunk(prisma, id, chunk, tomb));
    }
  }
  // The scrub reads audit_entries and redrive_batches whole (no index finds a word in free text): more time than a chunk.
  const done = await prisma.$transaction(
    async (tx) => {
      const reasonsScrubbed = await scrubOperatorText(tx, scrubOf(match), { dryRun: false });
      const row = await finishErasure(tx, id, { eventIdsWithValue, reasonsScrubbed });
      await writeAudit(tx, {
        actor: principal.actor,
        action: "erasure.run",
        targetType: "erasure",
        targetId: id,
        reason,
        details: { subjectKey: match.key, tenant: match.tenant, ...total },
        // A district's erasure shows in that district's audit trail.
        tenantId: match.tenant ?? undefined,
      });
      return row;
    },
    { timeout: 120_000, maxWait: 10_000 },
  );
  return {
    id,
    dryRun,
    status: "finished",
    subjectKey: match.key,
    tenant: match.tenant,
    reason,
    by: principal.actor,
    startedAt: new Date(done.startedAt).toISOString(),
    finishedAt: done.finishedAt ? new Date(done.finishedAt).toISOString() : null,
    durationMs: Date.now() - t0,
    ...total,
    eventIdsWithValue: done.eventIdsWithValue,
    reasonsScrubbed: done.reasonsScrubbed,
  };
}

/**
 * One chunk in one transaction: its events, the operational events about their deliveries, and the counts on the
 * erasure's row; run again when it loses a deadlock against a worker's result write on the same rows.
 */
function eraseChunk(prisma: PrismaClient, id: string, chunk: string[], tomb: Parameters<typeof tombstoneEvents>[2]): Promise<ErasureCounts> {
  return retryTransaction(() =>
    prisma.$transaction(
      async (tx) => {
        const ops = await findOpsEventIds(tx, chunk);
        const c = await tombstoneEvents(tx, [...chunk, ...ops], tomb);
        await addErasureCounts(tx, id, c);
        return c;
      },
      { timeout: 60_000, maxWait: 10_000 },
    ),
  );
}
