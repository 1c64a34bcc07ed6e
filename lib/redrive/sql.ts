// Redrive's own SQL: the channels it notifies and the batch items' outcomes
// (redrive_batch_items is the batches' job table). Every statement on the
// ledger's rows (the guarded redrive itself, what a filter matches, the items'
// deliveries) is lib/ledger/sql/redrive.ts.

import "server-only";
/** The channel the worker LISTENs on for newly due deliveries (named once, in lib/ledger/notify.ts). */
export { DELIVERIES_CHANNEL } from "../ledger/notify";
/** Wakes pacers when a batch is created. */
export const REDRIVES_CHANNEL = "hookledger_redrives";

/** Records each handled item's outcome in one statement. $1 batch, $2 int[] seqs, $3 text[] outcomes. */
export const RECORD_ITEMS_SQL = `
  UPDATE redrive_batch_items i
     SET outcome = x.outcome, processed_at = now()
    FROM unnest($2::int[], $3::text[]) AS x(seq, outcome)
   WHERE i.batch_id = $1 AND i.seq = x.seq`;
