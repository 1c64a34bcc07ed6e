-- Redrive batches (DESIGN.md invariant 9): a bulk redrive is a
-- persisted, paced, cancellable job. Its matching deliveries are snapshotted
-- into redrive_batch_items when the batch is created (the exact count the
-- operator confirmed, oldest dead letter first, original ids kept as
-- provenance the way pg-boss keeps them), and the pacer in the worker moves
-- them back to pending at the batch's rate.

CREATE TABLE redrive_batches (
  id                text PRIMARY KEY DEFAULT hl_new_id('rdb_'),
  -- {subscriptionId?, deadLetterReason?, errorClass?, statusCode?, deadLetteredFrom?, deadLetteredTo?}
  filter            jsonb NOT NULL DEFAULT '{}'::jsonb,
  reason            text NOT NULL CHECK (length(btrim(reason)) > 0), -- the incident or ticket id
  actor             text NOT NULL,
  rate_per_second   integer NOT NULL CHECK (rate_per_second > 0),
  latest_state_wins boolean NOT NULL DEFAULT false,
  status            text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'cancelled', 'done')),
  matched           integer NOT NULL DEFAULT 0,
  redriven          integer NOT NULL DEFAULT 0,
  skipped           integer NOT NULL DEFAULT 0,
  position          integer NOT NULL DEFAULT 0,   -- the last item seq the pacer has handled
  -- Pacing credit: items may be moved while paced_until + n/rate <= now().
  -- Kept in the row (and in database time) so several pacers, on several
  -- machines, share one budget and a restart neither loses nor doubles it.
  paced_until       timestamptz NOT NULL DEFAULT now(),
  cancelled_by      text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz
);
CREATE INDEX redrive_batches_running ON redrive_batches (created_at) WHERE status = 'running';
CREATE INDEX redrive_batches_created ON redrive_batches (created_at DESC);

CREATE TABLE redrive_batch_items (
  batch_id     text NOT NULL REFERENCES redrive_batches (id) ON DELETE CASCADE,
  seq          integer NOT NULL,                 -- 1..matched, oldest dead letter first
  delivery_id  text NOT NULL REFERENCES deliveries (id),
  -- NULL: not reached yet (or never, if the batch was cancelled)
  outcome      text CHECK (outcome IS NULL OR outcome IN
                 ('redriven', 'skipped_not_dead_lettered', 'skipped_subscription_inactive', 'skipped_superseded')),
  processed_at timestamptz,
  PRIMARY KEY (batch_id, seq)
);
CREATE INDEX redrive_batch_items_delivery ON redrive_batch_items (delivery_id);
-- The Audit page filters by actor and action.
CREATE INDEX audit_entries_actor ON audit_entries (actor, created_at DESC);
CREATE INDEX audit_entries_action ON audit_entries (action, created_at DESC);
