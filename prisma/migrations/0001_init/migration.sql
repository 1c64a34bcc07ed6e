-- hookledger ledger: subscriptions, events, deliveries (the queue), attempts, audit.
-- Invariant 2 (DESIGN.md): the delivery row *is* the job; there is no other queue.

-- Time-ordered ids: "<prefix><14 hex digits of epoch microseconds><12 random hex>".
-- Sorting by id is sorting by creation time, so cursors are just ids.
CREATE FUNCTION hl_new_id(prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT prefix
    || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000000)::bigint), 14, '0')
    || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12)
$$;

CREATE TABLE subscriptions (
  id                    text PRIMARY KEY,
  name                  text NOT NULL,
  tenant                text,
  url                   text NOT NULL,
  event_types           text[] NOT NULL,
  state                 text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused', 'disabled')),
  state_reason          text,
  -- {ladderSeconds, maxAttempts, maxAgeSeconds, timeoutMs, classify: {"<status>": "retry"|"dead_letter"}}
  retry_policy          jsonb NOT NULL DEFAULT '{}'::jsonb,
  rate_limit_per_second integer CHECK (rate_limit_per_second IS NULL OR rate_limit_per_second > 0),
  max_concurrency       integer NOT NULL DEFAULT 10 CHECK (max_concurrency > 0),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX subscriptions_tenant ON subscriptions (tenant);
CREATE INDEX subscriptions_event_types ON subscriptions USING gin (event_types);

-- Signing secrets; several may be active during a rotation. `secret` holds
-- ciphertext (AES-256-GCM) once the access-control work lands; never plaintext in logs.
CREATE TABLE subscription_secrets (
  id              text PRIMARY KEY,
  subscription_id text NOT NULL REFERENCES subscriptions (id) ON DELETE CASCADE,
  secret          text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz
);
CREATE INDEX subscription_secrets_sub ON subscription_secrets (subscription_id);

CREATE TABLE events (
  id             text PRIMARY KEY,               -- the producer's event id
  type           text NOT NULL,
  payload        bytea NOT NULL,                 -- the exact bytes sent, never re-serialised
  occurred_at    timestamptz NOT NULL,
  tenant         text,
  subject        jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- every subject value, and "key:value", for one-box lookup by any key
  subject_values text[] NOT NULL DEFAULT '{}',
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_subject_values ON events USING gin (subject_values);
CREATE INDEX events_tenant_created ON events (tenant, created_at DESC);
CREATE INDEX events_type_created ON events (type, created_at DESC);

CREATE TABLE deliveries (
  id                 text PRIMARY KEY DEFAULT hl_new_id('dlv_'),
  delivery_key       text NOT NULL UNIQUE,       -- sha256(subscription_id || ':' || event_id), hex
  event_id           text NOT NULL REFERENCES events (id),
  subscription_id    text NOT NULL REFERENCES subscriptions (id),
  event_type         text NOT NULL,
  state              text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'in_flight', 'scheduled', 'delivered', 'dead_letter')),
  attempt_count      integer NOT NULL DEFAULT 0, -- attempts in the current run (reset by redrive)
  total_attempts     integer NOT NULL DEFAULT 0, -- attempts ever
  run_started_at     timestamptz NOT NULL DEFAULT now(),
  next_attempt_at    timestamptz NOT NULL DEFAULT now(),
  lease_owner        text,
  lease_until        timestamptz,
  last_attempt_at    timestamptz,
  last_status_code   integer,
  last_error_class   text,
  last_error_message text,
  dead_letter_reason text,
  dead_lettered_at   timestamptz,
  delivered_at       timestamptz,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  UNIQUE (subscription_id, event_id)
);
-- The claim query: due rows only, ordered by due time.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE state IN ('pending', 'scheduled');
-- The reaper: expired leases.
CREATE INDEX deliveries_leased ON deliveries (lease_until) WHERE state = 'in_flight';
-- Per-subscription timelines.
CREATE INDEX deliveries_sub_timeline ON deliveries (subscription_id, id DESC);
-- The DLQ by subscription, reason and time.
CREATE INDEX deliveries_dlq ON deliveries (subscription_id, dead_letter_reason, dead_lettered_at)
  WHERE state = 'dead_letter';
CREATE INDEX deliveries_dlq_time ON deliveries (dead_lettered_at) WHERE state = 'dead_letter';
CREATE INDEX deliveries_event ON deliveries (event_id);

CREATE TABLE attempts (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id         text NOT NULL REFERENCES deliveries (id),
  subscription_id     text NOT NULL,
  attempt_number      integer NOT NULL,          -- 1-based, across the delivery's whole life
  trigger             text NOT NULL CHECK (trigger IN ('scheduled', 'redrive', 'manual')),
  actor               text,                      -- who asked, for redrive and manual
  started_at          timestamptz NOT NULL,
  duration_ms         integer,
  outcome             text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'dead_letter', 'abandoned')),
  status_code         integer,
  error_class         text,
  error_message       text,
  retry_after_seconds integer,
  response_headers    jsonb,
  response_excerpt    text,                      -- at most 4 KB
  worker_id           text,
  ambiguous           boolean NOT NULL DEFAULT false,
  created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX attempts_delivery ON attempts (delivery_id, attempt_number);
CREATE INDEX attempts_sub_started ON attempts (subscription_id, started_at DESC);

CREATE TABLE audit_entries (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  actor       text NOT NULL,                     -- "user:<email>", "token:<name>", "system"
  action      text NOT NULL,                     -- e.g. "subscription.pause", "delivery.redrive"
  target_type text NOT NULL,
  target_id   text NOT NULL,
  reason      text,
  details     jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_entries_created ON audit_entries (created_at DESC);
CREATE INDEX audit_entries_target ON audit_entries (target_type, target_id, created_at DESC);

CREATE TABLE api_tokens (
  id           text PRIMARY KEY,
  name         text NOT NULL,
  role         text NOT NULL CHECK (role IN ('producer', 'support', 'manager', 'engineer', 'admin')),
  token_hash   text NOT NULL UNIQUE,             -- sha256 of the token; the token itself is shown once
  created_at   timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at   timestamptz
);

CREATE TABLE worker_heartbeats (
  worker_id  text PRIMARY KEY,
  hostname   text NOT NULL,
  pid        integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  beat_at    timestamptz NOT NULL DEFAULT now(),
  stopped_at timestamptz
);
