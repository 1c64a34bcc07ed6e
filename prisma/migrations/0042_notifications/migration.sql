-- Notifications to a district (lib/notify, worker/notifier.ts): whom to tell
-- (tenant_contacts), and every notice made for it, sent or not and why
-- (notifications). The worker turns the operational events of a subscription
-- paused, disabled or recovered and of a dead-letter threshold into rows here
-- after a stored cursor (notify_cursor), adds a row when a signing secret's
-- overlap is about to end or a dead letter has waited a day, and sends the due rows by e-mail and to a
-- Slack-compatible webhook.
--
-- New tables only: nothing existing is rewritten or locked beyond the
-- ACCESS SHARE the foreign key's check takes on tenants while this runs (an
-- instant: tenant_contacts is empty).

CREATE TABLE tenant_contacts (
  tenant      text PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  emails      text[] NOT NULL DEFAULT '{}',
  webhook_url text,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  updated_by  text NOT NULL,
  CONSTRAINT tenant_contacts_emails_max CHECK (cardinality(emails) <= 20)
);

CREATE TABLE notifications (
  id              text PRIMARY KEY,
  tenant          text NOT NULL,
  subscription_id text,
  kind            text NOT NULL CHECK (kind IN ('paused', 'disabled', 'recovered', 'dlq_threshold', 'dlq_old', 'secret_expiring')),
  channel         text NOT NULL CHECK (channel IN ('email', 'webhook')),
  recipient       text NOT NULL,
  subject         text NOT NULL,
  body            text NOT NULL,
  -- What it was made from ('<event id>' or 'secret:<secret id>'): a source read twice makes no second notice.
  source          text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'suppressed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_error      text,
  sent_at         timestamptz,
  -- A notice folded into the hour's digest (suppressed) and the digest itself both name the hour's first notice;
  -- the digest counts the notices folded into it.
  digest_of       text,
  digest_count    integer NOT NULL DEFAULT 0,
  CONSTRAINT notifications_pending_due CHECK (status <> 'pending' OR next_attempt_at IS NOT NULL)
);

-- The sender's claim reads only what is pending, in due order.
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE status = 'pending';
-- The audit page and GET /api/v1/notifications: a tenant's newest first.
CREATE INDEX notifications_tenant_created ON notifications (tenant, created_at DESC);
-- The once-an-hour rule: the newest notice of a kind to a recipient about a subscription.
CREATE INDEX notifications_recent ON notifications (subscription_id, kind, channel, recipient, created_at DESC);
CREATE UNIQUE INDEX notifications_source ON notifications (source, channel, recipient) WHERE digest_count = 0;

-- How far the operational events have been read: one row.
CREATE TABLE notify_cursor (
  id       boolean PRIMARY KEY DEFAULT true CHECK (id),
  at       timestamptz NOT NULL,
  event_id text NOT NULL
);
INSERT INTO notify_cursor (id, at, event_id) VALUES (true, now(), '');
