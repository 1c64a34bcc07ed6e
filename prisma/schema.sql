-- The schema that `hookledger migrate` produces on a fresh database: what the SQL is now.
-- Written by `npm run schema:dump` from the catalog (lib/db/schema-dump.ts); test/database/schema-dump.test.ts
-- fails when the migrations produce anything else. Month partitions (<table>_pYYYY_MM) are left out.
-- Edit the migrations, never this file.

CREATE TABLE _hookledger_migrations (
  name text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT _hookledger_migrations_pkey PRIMARY KEY (name)
);

CREATE TABLE api_tokens (
  id text NOT NULL,
  name text NOT NULL,
  role text NOT NULL,
  token_hash text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  last_used_at timestamp with time zone,
  revoked_at timestamp with time zone,
  tenant_id text,
  CONSTRAINT api_tokens_role_check CHECK ((role = ANY (ARRAY['producer'::text, 'support'::text, 'manager'::text, 'engineer'::text, 'admin'::text, 'portal'::text]))),
  CONSTRAINT api_tokens_tenant_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  CONSTRAINT api_tokens_pkey PRIMARY KEY (id),
  CONSTRAINT api_tokens_token_hash_key UNIQUE (token_hash)
);

CREATE TABLE attempt_stats_hour (
  subscription_id text NOT NULL,
  bucket timestamp with time zone NOT NULL,
  attempts integer DEFAULT 0 NOT NULL,
  delivered integer DEFAULT 0 NOT NULL,
  retried integer DEFAULT 0 NOT NULL,
  dead_lettered integer DEFAULT 0 NOT NULL,
  abandoned integer DEFAULT 0 NOT NULL,
  latency_hist integer[] DEFAULT '{}'::integer[] NOT NULL,
  CONSTRAINT attempt_stats_hour_pkey PRIMARY KEY (subscription_id, bucket)
);
CREATE INDEX attempt_stats_hour_bucket ON public.attempt_stats_hour USING btree (bucket);

CREATE TABLE attempt_stats_minute (
  subscription_id text NOT NULL,
  bucket timestamp with time zone NOT NULL,
  attempts integer DEFAULT 0 NOT NULL,
  delivered integer DEFAULT 0 NOT NULL,
  retried integer DEFAULT 0 NOT NULL,
  dead_lettered integer DEFAULT 0 NOT NULL,
  abandoned integer DEFAULT 0 NOT NULL,
  latency_hist integer[] DEFAULT '{}'::integer[] NOT NULL,
  CONSTRAINT attempt_stats_minute_pkey PRIMARY KEY (subscription_id, bucket)
);
CREATE INDEX attempt_stats_minute_bucket ON public.attempt_stats_minute USING btree (bucket);

CREATE TABLE attempts (
  id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
  delivery_id text NOT NULL,
  subscription_id text NOT NULL,
  attempt_number integer NOT NULL,
  trigger text NOT NULL,
  actor text,
  started_at timestamp with time zone NOT NULL,
  duration_ms integer,
  outcome text NOT NULL,
  status_code integer,
  error_class text,
  error_message text,
  retry_after_seconds integer,
  response_headers jsonb,
  response_excerpt text,
  worker_id text,
  ambiguous boolean DEFAULT false NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT attempts_outcome_check CHECK ((outcome = ANY (ARRAY['delivered'::text, 'retry'::text, 'dead_letter'::text, 'abandoned'::text]))),
  CONSTRAINT attempts_trigger_check CHECK ((trigger = ANY (ARRAY['scheduled'::text, 'redrive'::text, 'manual'::text, 'resend'::text]))),
  CONSTRAINT attempts_pkey PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX attempts_delivery ON ONLY public.attempts USING btree (delivery_id, attempt_number);
CREATE INDEX attempts_sub_failed ON ONLY public.attempts USING btree (subscription_id, started_at DESC) WHERE (outcome <> 'delivered'::text);
CREATE INDEX attempts_sub_started ON ONLY public.attempts USING btree (subscription_id, started_at DESC);

CREATE TABLE attempts_default PARTITION OF attempts DEFAULT;

CREATE TABLE audit_entries (
  id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
  actor text NOT NULL,
  action text NOT NULL,
  target_type text NOT NULL,
  target_id text NOT NULL,
  reason text,
  details jsonb DEFAULT '{}'::jsonb NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  tenant_id text,
  CONSTRAINT audit_entries_pkey PRIMARY KEY (id)
);
CREATE INDEX audit_entries_action ON public.audit_entries USING btree (action, created_at DESC);
CREATE INDEX audit_entries_actor ON public.audit_entries USING btree (actor, created_at DESC);
CREATE INDEX audit_entries_corrected_event ON public.audit_entries USING btree (((details ->> 'correctedEventId'::text))) WHERE ((action = 'delivery.resolve'::text) AND (details ? 'correctedEventId'::text));
CREATE INDEX audit_entries_created ON public.audit_entries USING btree (created_at DESC);
CREATE INDEX audit_entries_target ON public.audit_entries USING btree (target_type, target_id, created_at DESC);
CREATE INDEX audit_entries_tenant ON public.audit_entries USING btree (tenant_id, created_at DESC) WHERE (tenant_id IS NOT NULL);

CREATE TABLE dashboard_rollups (
  name text NOT NULL,
  last_id bigint DEFAULT 0 NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT dashboard_rollups_pkey PRIMARY KEY (name)
);

CREATE TABLE deliveries (
  id text DEFAULT hl_new_id('dlv_'::text) NOT NULL,
  delivery_key text NOT NULL,
  event_id text NOT NULL,
  subscription_id text NOT NULL,
  event_type text NOT NULL,
  state text DEFAULT 'pending'::text NOT NULL,
  attempt_count integer DEFAULT 0 NOT NULL,
  total_attempts integer DEFAULT 0 NOT NULL,
  run_started_at timestamp with time zone DEFAULT now() NOT NULL,
  next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
  lease_owner text,
  lease_until timestamp with time zone,
  last_attempt_at timestamp with time zone,
  last_status_code integer,
  last_error_class text,
  last_error_message text,
  dead_letter_reason text,
  dead_lettered_at timestamp with time zone,
  delivered_at timestamp with time zone,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  next_trigger text DEFAULT 'scheduled'::text NOT NULL,
  next_actor text,
  leased_at timestamp with time zone,
  resolution text,
  resolved_at timestamp with time zone,
  resolved_by text,
  resolution_reason text,
  event_at timestamp with time zone NOT NULL,
  CONSTRAINT deliveries_next_trigger_check CHECK ((next_trigger = ANY (ARRAY['scheduled'::text, 'redrive'::text, 'manual'::text, 'resend'::text]))),
  CONSTRAINT deliveries_resolution_check CHECK ((((state = 'resolved'::text) = (resolution IS NOT NULL)) AND ((resolution IS NULL) OR ((resolution = ANY (ARRAY['discarded'::text, 'fixed_at_source'::text, 'superseded'::text, 'erased'::text])) AND (resolved_at IS NOT NULL) AND (resolved_by IS NOT NULL) AND (resolution_reason IS NOT NULL))))),
  CONSTRAINT deliveries_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'in_flight'::text, 'scheduled'::text, 'delivered'::text, 'dead_letter'::text, 'resolved'::text]))),
  CONSTRAINT deliveries_pkey PRIMARY KEY (id, event_at),
  CONSTRAINT deliveries_event_id_subscription_id_key UNIQUE (event_id, subscription_id, event_at)
) PARTITION BY RANGE (event_at);
CREATE INDEX deliveries_delivery_key ON ONLY public.deliveries USING hash (delivery_key);
CREATE INDEX deliveries_dlq ON ONLY public.deliveries USING btree (subscription_id, dead_letter_reason, dead_lettered_at) WHERE (state = 'dead_letter'::text);
CREATE INDEX deliveries_dlq_time ON ONLY public.deliveries USING btree (dead_lettered_at) WHERE (state = 'dead_letter'::text);
CREATE INDEX deliveries_finished ON ONLY public.deliveries USING btree (GREATEST(delivered_at, resolved_at), id) INCLUDE (subscription_id, state) WHERE (state = ANY (ARRAY['delivered'::text, 'resolved'::text]));
CREATE INDEX deliveries_sub_due ON ONLY public.deliveries USING btree (subscription_id, next_attempt_at) WHERE (state = ANY (ARRAY['pending'::text, 'scheduled'::text]));
CREATE INDEX deliveries_sub_in_flight ON ONLY public.deliveries USING btree (subscription_id) WHERE (state = 'in_flight'::text);
CREATE INDEX deliveries_sub_timeline ON ONLY public.deliveries USING btree (subscription_id, id DESC);

CREATE TABLE deliveries_default PARTITION OF deliveries DEFAULT;

CREATE TABLE delivery_state_counts (
  subscription_id text NOT NULL,
  state text NOT NULL,
  reason text DEFAULT ''::text NOT NULL,
  backend integer NOT NULL,
  n bigint NOT NULL,
  CONSTRAINT delivery_state_counts_pkey PRIMARY KEY (subscription_id, state, reason, backend)
);
CREATE INDEX delivery_state_counts_queue ON public.delivery_state_counts USING btree (state, subscription_id, reason) WHERE (state = ANY (ARRAY['pending'::text, 'scheduled'::text, 'in_flight'::text, 'dead_letter'::text]));
CREATE INDEX delivery_state_counts_queued ON public.delivery_state_counts USING btree (subscription_id) WHERE (state = ANY (ARRAY['pending'::text, 'scheduled'::text]));
CREATE INDEX delivery_state_counts_unfolded ON public.delivery_state_counts USING btree (backend) WHERE (backend <> 0);

CREATE TABLE dlq_sample_groups (
  id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
  sampled_at timestamp with time zone NOT NULL,
  subscription_id text NOT NULL,
  reason text,
  error_class text,
  status_code integer,
  depth integer NOT NULL,
  oldest_at timestamp with time zone,
  CONSTRAINT dlq_sample_groups_sampled_at_fkey FOREIGN KEY (sampled_at) REFERENCES dlq_samples(sampled_at) ON DELETE CASCADE,
  CONSTRAINT dlq_sample_groups_pkey PRIMARY KEY (id)
);
CREATE INDEX dlq_sample_groups_sampled ON public.dlq_sample_groups USING btree (sampled_at);
CREATE INDEX dlq_sample_groups_sub ON public.dlq_sample_groups USING btree (subscription_id, sampled_at);

CREATE TABLE dlq_samples (
  sampled_at timestamp with time zone NOT NULL,
  depth integer NOT NULL,
  oldest_at timestamp with time zone,
  CONSTRAINT dlq_samples_pkey PRIMARY KEY (sampled_at)
);

CREATE TABLE erasures (
  id text NOT NULL,
  subject_key text NOT NULL,
  tenant text,
  reason text NOT NULL,
  actor text NOT NULL,
  status text DEFAULT 'running'::text NOT NULL,
  events_erased integer DEFAULT 0 NOT NULL,
  ops_events_erased integer DEFAULT 0 NOT NULL,
  deliveries_erased integer DEFAULT 0 NOT NULL,
  deliveries_resolved integer DEFAULT 0 NOT NULL,
  attempts_scrubbed integer DEFAULT 0 NOT NULL,
  started_at timestamp with time zone DEFAULT now() NOT NULL,
  finished_at timestamp with time zone,
  value_mac bytea,
  value_length integer,
  event_ids_with_value integer DEFAULT 0 NOT NULL,
  reasons_scrubbed integer DEFAULT 0 NOT NULL,
  CONSTRAINT erasures_status_check CHECK ((status = ANY (ARRAY['running'::text, 'finished'::text]))),
  CONSTRAINT erasures_pkey PRIMARY KEY (id)
);

CREATE TABLE event_keys (
  id text NOT NULL,
  created_at timestamp with time zone NOT NULL,
  CONSTRAINT event_keys_pkey PRIMARY KEY (id)
);
CREATE INDEX event_keys_created ON public.event_keys USING btree (created_at);

CREATE TABLE event_types (
  type text NOT NULL,
  description text NOT NULL,
  schema jsonb,
  example jsonb,
  summary_fields text[] DEFAULT '{}'::text[] NOT NULL,
  deprecated boolean DEFAULT false NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  created_by text NOT NULL,
  updated_by text NOT NULL,
  CONSTRAINT event_types_pkey PRIMARY KEY (type)
);

CREATE TABLE events (
  id text NOT NULL,
  type text NOT NULL,
  payload bytea NOT NULL,
  occurred_at timestamp with time zone NOT NULL,
  tenant text,
  subject jsonb DEFAULT '{}'::jsonb NOT NULL,
  subject_values text[] DEFAULT '{}'::text[] NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  content_hash bytea,
  tombstone text,
  tombstoned_at timestamp with time zone,
  erasure_id text,
  CONSTRAINT events_tombstone_check CHECK ((((tombstone IS NULL) = (tombstoned_at IS NULL)) AND ((tombstone IS NULL) OR (tombstone = ANY (ARRAY['erased'::text, 'expunged'::text]))) AND ((NOT (tombstone IS DISTINCT FROM 'erased'::text)) = (erasure_id IS NOT NULL)))),
  CONSTRAINT events_pkey PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX events_subject_values ON ONLY public.events USING gin (subject_values);
CREATE INDEX events_tenant_created ON ONLY public.events USING btree (tenant, created_at DESC);
CREATE INDEX events_type_created ON ONLY public.events USING btree (type, created_at DESC);

CREATE TABLE events_default PARTITION OF events DEFAULT;

CREATE TABLE notifications (
  id text NOT NULL,
  tenant text NOT NULL,
  subscription_id text,
  kind text NOT NULL,
  channel text NOT NULL,
  recipient text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  source text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  status text DEFAULT 'pending'::text NOT NULL,
  attempts integer DEFAULT 0 NOT NULL,
  next_attempt_at timestamp with time zone,
  last_error text,
  sent_at timestamp with time zone,
  digest_of text,
  digest_count integer DEFAULT 0 NOT NULL,
  CONSTRAINT notifications_channel_check CHECK ((channel = ANY (ARRAY['email'::text, 'webhook'::text, 'none'::text]))),
  CONSTRAINT notifications_kind_check CHECK ((kind = ANY (ARRAY['paused'::text, 'disabled'::text, 'recovered'::text, 'dlq_threshold'::text, 'dlq_old'::text, 'secret_expiring'::text]))),
  CONSTRAINT notifications_pending_due CHECK (((status <> 'pending'::text) OR (next_attempt_at IS NOT NULL))),
  CONSTRAINT notifications_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'sent'::text, 'failed'::text, 'suppressed'::text, 'unaddressed'::text]))),
  CONSTRAINT notifications_unaddressed CHECK (((channel = 'none'::text) = (status = 'unaddressed'::text))),
  CONSTRAINT notifications_pkey PRIMARY KEY (id)
);
CREATE INDEX notifications_created ON public.notifications USING btree (created_at DESC, id DESC);
CREATE INDEX notifications_due ON public.notifications USING btree (next_attempt_at) WHERE (status = 'pending'::text);
CREATE INDEX notifications_recent ON public.notifications USING btree (subscription_id, kind, channel, recipient, created_at DESC);
CREATE UNIQUE INDEX notifications_source ON public.notifications USING btree (source, channel, recipient) WHERE (digest_count = 0);
CREATE INDEX notifications_tenant_created_id ON public.notifications USING btree (tenant, created_at DESC, id DESC);

CREATE TABLE notify_cursor (
  id boolean DEFAULT true NOT NULL,
  at timestamp with time zone NOT NULL,
  event_id text NOT NULL,
  CONSTRAINT notify_cursor_id_check CHECK (id),
  CONSTRAINT notify_cursor_pkey PRIMARY KEY (id)
);

CREATE TABLE ops_settings (
  id boolean DEFAULT true NOT NULL,
  dlq_threshold integer DEFAULT 100 NOT NULL,
  CONSTRAINT ops_settings_dlq_threshold_check CHECK ((dlq_threshold > 0)),
  CONSTRAINT ops_settings_id_check CHECK (id),
  CONSTRAINT ops_settings_pkey PRIMARY KEY (id)
);

CREATE TABLE partition_freezes (
  gen bigint DEFAULT nextval('partition_freezes_gen_seq'::regclass) NOT NULL,
  partition text NOT NULL,
  lo timestamp with time zone NOT NULL,
  hi timestamp with time zone NOT NULL,
  in_flight jsonb,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  CONSTRAINT partition_freezes_pkey PRIMARY KEY (gen),
  CONSTRAINT partition_freezes_partition_key UNIQUE (partition)
);

CREATE TABLE portal_sessions (
  id text NOT NULL,
  tenant text NOT NULL,
  subscription_id text,
  read_only boolean DEFAULT false NOT NULL,
  token_hash text NOT NULL,
  created_by text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  used_at timestamp with time zone,
  revoked_at timestamp with time zone,
  revoked_by text,
  CONSTRAINT portal_sessions_expiry CHECK ((expires_at > created_at)),
  CONSTRAINT portal_sessions_subscription_id_fkey FOREIGN KEY (subscription_id) REFERENCES subscriptions(id) ON DELETE CASCADE,
  CONSTRAINT portal_sessions_tenant_fkey FOREIGN KEY (tenant) REFERENCES tenants(id) ON DELETE CASCADE,
  CONSTRAINT portal_sessions_pkey PRIMARY KEY (id),
  CONSTRAINT portal_sessions_token_hash_key UNIQUE (token_hash)
);
CREATE INDEX portal_sessions_tenant ON public.portal_sessions USING btree (tenant, created_at DESC);

CREATE TABLE redrive_batch_items (
  batch_id text NOT NULL,
  seq integer NOT NULL,
  delivery_id text,
  outcome text,
  processed_at timestamp with time zone,
  event_id text,
  CONSTRAINT redrive_batch_items_outcome_check CHECK (((outcome IS NULL) OR (outcome = ANY (ARRAY['redriven'::text, 'skipped_not_dead_lettered'::text, 'skipped_subscription_inactive'::text, 'skipped_superseded'::text, 'resent'::text, 'skipped_in_progress'::text, 'skipped_state_changed'::text, 'created'::text, 'skipped_exists'::text])))) NOT VALID,
  CONSTRAINT redrive_batch_items_target_check CHECK (((delivery_id IS NOT NULL) OR (event_id IS NOT NULL))) NOT VALID,
  CONSTRAINT redrive_batch_items_batch_id_fkey FOREIGN KEY (batch_id) REFERENCES redrive_batches(id) ON DELETE CASCADE,
  CONSTRAINT redrive_batch_items_pkey PRIMARY KEY (batch_id, seq)
);
CREATE INDEX redrive_batch_items_delivery ON public.redrive_batch_items USING btree (delivery_id);
CREATE INDEX redrive_batch_items_event ON public.redrive_batch_items USING btree (event_id) WHERE (event_id IS NOT NULL);

CREATE TABLE redrive_batches (
  id text DEFAULT hl_new_id('rdb_'::text) NOT NULL,
  filter jsonb DEFAULT '{}'::jsonb NOT NULL,
  reason text NOT NULL,
  actor text NOT NULL,
  rate_per_second integer NOT NULL,
  latest_state_wins boolean DEFAULT false NOT NULL,
  status text DEFAULT 'running'::text NOT NULL,
  matched integer DEFAULT 0 NOT NULL,
  redriven integer DEFAULT 0 NOT NULL,
  skipped integer DEFAULT 0 NOT NULL,
  position integer DEFAULT 0 NOT NULL,
  paced_until timestamp with time zone DEFAULT now() NOT NULL,
  cancelled_by text,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  finished_at timestamp with time zone,
  kind text DEFAULT 'redrive'::text NOT NULL,
  tenant_id text,
  settled_at timestamp with time zone,
  settle_seq integer,
  CONSTRAINT redrive_batches_kind_check CHECK ((kind = ANY (ARRAY['redrive'::text, 'recover'::text, 'backfill'::text]))) NOT VALID,
  CONSTRAINT redrive_batches_rate_per_second_check CHECK ((rate_per_second > 0)),
  CONSTRAINT redrive_batches_reason_check CHECK ((length(btrim(reason)) > 0)),
  CONSTRAINT redrive_batches_status_check CHECK ((status = ANY (ARRAY['running'::text, 'cancelled'::text, 'done'::text]))),
  CONSTRAINT redrive_batches_pkey PRIMARY KEY (id)
);
CREATE INDEX redrive_batches_created ON public.redrive_batches USING btree (created_at DESC);
CREATE INDEX redrive_batches_kind_created ON public.redrive_batches USING btree (kind, created_at DESC);
CREATE INDEX redrive_batches_running ON public.redrive_batches USING btree (created_at) WHERE (status = 'running'::text);
CREATE INDEX redrive_batches_unsettled ON public.redrive_batches USING btree (finished_at, id) WHERE ((status = ANY (ARRAY['done'::text, 'cancelled'::text])) AND (settled_at IS NULL));

CREATE TABLE retention_policies (
  tenant text NOT NULL,
  retention_days integer NOT NULL,
  payload_retention_days integer,
  updated_by text NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT retention_policies_check CHECK (((payload_retention_days IS NULL) OR (payload_retention_days <= retention_days))),
  CONSTRAINT retention_policies_payload_retention_days_check CHECK (((payload_retention_days >= 1) AND (payload_retention_days <= 36500))),
  CONSTRAINT retention_policies_retention_days_check CHECK (((retention_days >= 1) AND (retention_days <= 36500))),
  CONSTRAINT retention_policies_pkey PRIMARY KEY (tenant)
);

CREATE TABLE retention_runs (
  id text NOT NULL,
  trigger text NOT NULL,
  actor text NOT NULL,
  status text DEFAULT 'running'::text NOT NULL,
  policy jsonb NOT NULL,
  deliveries_removed integer DEFAULT 0 NOT NULL,
  attempts_removed integer DEFAULT 0 NOT NULL,
  events_removed integer DEFAULT 0 NOT NULL,
  events_expunged integer DEFAULT 0 NOT NULL,
  partitions_dropped integer DEFAULT 0 NOT NULL,
  error text,
  started_at timestamp with time zone DEFAULT now() NOT NULL,
  finished_at timestamp with time zone,
  CONSTRAINT retention_runs_status_check CHECK ((status = ANY (ARRAY['running'::text, 'finished'::text, 'failed'::text]))),
  CONSTRAINT retention_runs_trigger_check CHECK ((trigger = ANY (ARRAY['schedule'::text, 'manual'::text]))),
  CONSTRAINT retention_runs_pkey PRIMARY KEY (id)
);
CREATE INDEX retention_runs_started ON public.retention_runs USING btree (started_at DESC);

CREATE TABLE sign_in_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
  email text NOT NULL,
  ip text NOT NULL,
  attempted_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT sign_in_attempts_pkey PRIMARY KEY (id)
);
CREATE INDEX sign_in_attempts_ip ON public.sign_in_attempts USING btree (ip, attempted_at);
CREATE INDEX sign_in_attempts_key ON public.sign_in_attempts USING btree (email, ip, attempted_at);

CREATE TABLE subscription_ops_state (
  subscription_id text NOT NULL,
  failing_since timestamp with time zone,
  dlq_alerted_at timestamp with time zone,
  CONSTRAINT subscription_ops_state_subscription_id_fkey FOREIGN KEY (subscription_id) REFERENCES subscriptions(id) ON DELETE CASCADE,
  CONSTRAINT subscription_ops_state_pkey PRIMARY KEY (subscription_id)
);

CREATE TABLE subscription_secrets (
  id text NOT NULL,
  subscription_id text NOT NULL,
  secret text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  expires_at timestamp with time zone,
  CONSTRAINT subscription_secrets_subscription_id_fkey FOREIGN KEY (subscription_id) REFERENCES subscriptions(id) ON DELETE CASCADE,
  CONSTRAINT subscription_secrets_pkey PRIMARY KEY (id)
);
CREATE INDEX subscription_secrets_expiring ON public.subscription_secrets USING btree (expires_at) WHERE (expires_at IS NOT NULL);
CREATE INDEX subscription_secrets_sub ON public.subscription_secrets USING btree (subscription_id);

CREATE TABLE subscriptions (
  id text NOT NULL,
  name text NOT NULL,
  tenant text,
  url text NOT NULL,
  event_types text[] NOT NULL,
  state text DEFAULT 'active'::text NOT NULL,
  state_reason text,
  retry_policy jsonb DEFAULT '{}'::jsonb NOT NULL,
  rate_limit_per_second integer,
  max_concurrency integer DEFAULT 10 NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  failure_window_seconds integer DEFAULT 86400,
  failure_min_attempts integer DEFAULT 20,
  probe_interval_seconds integer DEFAULT 900,
  paused_reason text,
  paused_at timestamp with time zone,
  failing_since timestamp with time zone,
  failing_attempts integer DEFAULT 0 NOT NULL,
  next_probe_at timestamp with time zone,
  probe_count integer DEFAULT 0 NOT NULL,
  last_probe_at timestamp with time zone,
  last_probe_status integer,
  last_probe_error text,
  last_probe_latency_ms integer,
  endpoint_headers text,
  endpoint_header_view jsonb,
  endpoint_tls text,
  endpoint_tls_view jsonb,
  archived_at timestamp with time zone,
  archive_reason text,
  archived_by text,
  held_until timestamp with time zone,
  CONSTRAINT subscriptions_archive_check CHECK ((((archived_at IS NULL) = (archive_reason IS NULL)) AND ((archived_at IS NULL) = (archived_by IS NULL)))) NOT VALID,
  CONSTRAINT subscriptions_failure_policy_check CHECK ((((failure_window_seconds IS NULL) AND (failure_min_attempts IS NULL) AND (probe_interval_seconds IS NULL)) OR ((failure_window_seconds IS NOT NULL) AND (failure_min_attempts IS NOT NULL) AND (probe_interval_seconds IS NOT NULL) AND (failure_window_seconds >= 1) AND (failure_min_attempts >= 1) AND (probe_interval_seconds >= 1) AND (probe_interval_seconds <= failure_window_seconds)))),
  CONSTRAINT subscriptions_max_concurrency_check CHECK ((max_concurrency > 0)),
  CONSTRAINT subscriptions_paused_reason_check CHECK (((paused_reason IS NULL) OR (paused_reason = ANY (ARRAY['manual'::text, 'failing'::text])))),
  CONSTRAINT subscriptions_rate_limit_per_second_check CHECK (((rate_limit_per_second IS NULL) OR (rate_limit_per_second > 0))),
  CONSTRAINT subscriptions_state_check CHECK ((state = ANY (ARRAY['active'::text, 'paused'::text, 'disabled'::text]))),
  CONSTRAINT subscriptions_tenant_fkey FOREIGN KEY (tenant) REFERENCES tenants(id),
  CONSTRAINT subscriptions_pkey PRIMARY KEY (id)
);
CREATE INDEX subscriptions_by_created ON public.subscriptions USING btree (created_at, id);
CREATE INDEX subscriptions_by_name ON public.subscriptions USING btree (lower(name), id);
CREATE INDEX subscriptions_by_state ON public.subscriptions USING btree (state, lower(name), id);
CREATE INDEX subscriptions_by_tenant ON public.subscriptions USING btree (COALESCE(tenant, ''::text), lower(name), id);
CREATE INDEX subscriptions_event_types ON public.subscriptions USING gin (event_types);
CREATE INDEX subscriptions_next_probe ON public.subscriptions USING btree (next_probe_at) WHERE (next_probe_at IS NOT NULL);
CREATE INDEX subscriptions_tenant ON public.subscriptions USING btree (tenant);

CREATE TABLE tenant_contacts (
  tenant text NOT NULL,
  emails text[] DEFAULT '{}'::text[] NOT NULL,
  webhook_url text,
  updated_at timestamp with time zone DEFAULT now() NOT NULL,
  updated_by text NOT NULL,
  dlq_threshold integer,
  CONSTRAINT tenant_contacts_dlq_threshold_check CHECK (((dlq_threshold >= 1) AND (dlq_threshold <= 100000))),
  CONSTRAINT tenant_contacts_emails_max CHECK ((cardinality(emails) <= 20)),
  CONSTRAINT tenant_contacts_tenant_fkey FOREIGN KEY (tenant) REFERENCES tenants(id) ON DELETE CASCADE,
  CONSTRAINT tenant_contacts_pkey PRIMARY KEY (tenant)
);

CREATE TABLE tenants (
  id text NOT NULL,
  name text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT tenants_pkey PRIMARY KEY (id)
);

CREATE TABLE test_sends (
  id text DEFAULT hl_new_id('tst_'::text) NOT NULL,
  subscription_id text NOT NULL,
  actor text NOT NULL,
  event_id text,
  event_type text NOT NULL,
  url text NOT NULL,
  status_code integer,
  error_class text,
  error_message text,
  duration_ms integer NOT NULL,
  response_headers jsonb,
  response_excerpt text,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT test_sends_subscription_id_fkey FOREIGN KEY (subscription_id) REFERENCES subscriptions(id) ON DELETE CASCADE,
  CONSTRAINT test_sends_pkey PRIMARY KEY (id)
);
CREATE INDEX test_sends_subscription_created ON public.test_sends USING btree (subscription_id, created_at DESC);

CREATE TABLE users (
  id text NOT NULL,
  email text NOT NULL,
  role text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamp with time zone DEFAULT now() NOT NULL,
  last_sign_in_at timestamp with time zone,
  disabled_at timestamp with time zone,
  session_version integer DEFAULT 0 NOT NULL,
  must_change_password boolean DEFAULT false NOT NULL,
  password_changed_at timestamp with time zone,
  tenant_id text,
  CONSTRAINT users_role_check CHECK ((role = ANY (ARRAY['support'::text, 'manager'::text, 'engineer'::text, 'admin'::text]))),
  CONSTRAINT users_tenant_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  CONSTRAINT users_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX users_email ON public.users USING btree (email);

CREATE TABLE worker_heartbeats (
  worker_id text NOT NULL,
  hostname text NOT NULL,
  pid integer NOT NULL,
  started_at timestamp with time zone DEFAULT now() NOT NULL,
  beat_at timestamp with time zone DEFAULT now() NOT NULL,
  stopped_at timestamp with time zone,
  freeze_seen bigint,
  CONSTRAINT worker_heartbeats_pkey PRIMARY KEY (worker_id)
);

CREATE OR REPLACE FUNCTION public.hl_audit_tenant()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NEW.tenant_id IS NULL THEN
    SELECT s.tenant INTO NEW.tenant_id FROM subscriptions s
     WHERE s.id = CASE WHEN NEW.target_type = 'subscription' THEN NEW.target_id ELSE NEW.details ->> 'subscriptionId' END;
  END IF;
  RETURN NEW;
END
$function$;

CREATE OR REPLACE FUNCTION public.hl_count_delivery_states()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO delivery_state_counts AS c (subscription_id, state, reason, backend, n)
    SELECT subscription_id, state, CASE WHEN state = 'dead_letter' THEN coalesce(dead_letter_reason, '') ELSE '' END,
           pg_backend_pid(), count(*)
    FROM new_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (subscription_id, state, reason, backend) DO UPDATE SET n = c.n + excluded.n;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO delivery_state_counts AS c (subscription_id, state, reason, backend, n)
    SELECT subscription_id, state, reason, pg_backend_pid(), sum(d)
    FROM (
      SELECT subscription_id, state, CASE WHEN state = 'dead_letter' THEN coalesce(dead_letter_reason, '') ELSE '' END AS reason, 1 AS d FROM new_rows
      UNION ALL
      SELECT subscription_id, state, CASE WHEN state = 'dead_letter' THEN coalesce(dead_letter_reason, '') ELSE '' END, -1 FROM old_rows
    ) x
    GROUP BY 1, 2, 3 HAVING sum(d) <> 0 ORDER BY 1, 2, 3
    ON CONFLICT (subscription_id, state, reason, backend) DO UPDATE SET n = c.n + excluded.n;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO delivery_state_counts AS c (subscription_id, state, reason, backend, n)
    SELECT subscription_id, state, CASE WHEN state = 'dead_letter' THEN coalesce(dead_letter_reason, '') ELSE '' END,
           pg_backend_pid(), -count(*)
    FROM old_rows GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (subscription_id, state, reason, backend) DO UPDATE SET n = c.n + excluded.n;
  END IF;
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_delivery_key(p_subscription_id text, p_event_id text)
 RETURNS text
 LANGUAGE sql
 STABLE PARALLEL SAFE STRICT
AS $function$
  SELECT encode(sha256(convert_to(p_subscription_id || ':' || p_event_id, 'UTF8')), 'hex')
$function$;

CREATE OR REPLACE FUNCTION public.hl_enqueue_events(p_ids text[], p_types text[], p_payloads bytea[], p_occurred_at timestamp with time zone[], p_tenants text[], p_subjects jsonb[], p_subject_values text[], p_sv_from integer[], p_sv_to integer[], p_subscriptions text[] DEFAULT NULL::text[], p_hashes bytea[] DEFAULT NULL::bytea[], p_wake boolean DEFAULT true, p_payload_blob bytea DEFAULT NULL::bytea, p_payload_ends integer[] DEFAULT NULL::integer[], p_hash_blob bytea DEFAULT NULL::bytea)
 RETURNS TABLE(event_id text, delivery_id text, subscription_id text, delivery_key text)
 LANGUAGE sql
AS $function$
  WITH inp AS (
    SELECT i.id, i.type,
           CASE WHEN p_payload_blob IS NULL THEN i.payload
                ELSE substring(p_payload_blob FROM coalesce(p_payload_ends[i.n - 1], 0) + 1 FOR p_payload_ends[i.n] - coalesce(p_payload_ends[i.n - 1], 0)) END AS payload,
           i.occurred_at, i.tenant, i.subject, p_subject_values[i.sv_from:i.sv_to] AS subject_values,
           CASE WHEN p_hash_blob IS NULL THEN i.content_hash ELSE substring(p_hash_blob FROM 32 * (i.n - 1)::int + 1 FOR 32) END AS content_hash
    FROM unnest(p_ids, p_types, p_payloads, p_occurred_at, p_tenants, p_subjects, p_hashes, p_sv_from, p_sv_to) WITH ORDINALITY
         AS i(id, type, payload, occurred_at, tenant, subject, content_hash, sv_from, sv_to, n)
  ), k AS (
    INSERT INTO event_keys (id, created_at)
    SELECT id, now() FROM inp ORDER BY id
    ON CONFLICT (id) DO NOTHING
    RETURNING id, created_at
  ), ev AS (
    INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values, content_hash, created_at)
    SELECT inp.id, inp.type, inp.payload, inp.occurred_at, inp.tenant, coalesce(inp.subject, '{}'), coalesce(inp.subject_values, '{}'), inp.content_hash, k.created_at
      FROM inp JOIN k ON k.id = inp.id ORDER BY inp.id
    RETURNING id, type, tenant, created_at
  ), dl AS (
    INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type, event_at)
    SELECT hl_delivery_key(s.id, ev.id), ev.id, s.id, ev.type, ev.created_at
    FROM ev JOIN subscriptions s
      ON hl_subscription_matches(s.event_types, s.tenant, ev.type, ev.tenant)
     AND s.archived_at IS NULL
     AND (p_subscriptions IS NULL OR s.id = ANY (p_subscriptions))
    ORDER BY ev.id, s.id
    RETURNING id, event_id, subscription_id, delivery_key
  ), held AS (
    SELECT s.id FROM subscriptions s WHERE s.id IN (SELECT dl.subscription_id FROM dl) ORDER BY s.id FOR KEY SHARE OF s
  ), wake AS (
    SELECT pg_notify('hookledger_deliveries', '') WHERE p_wake AND EXISTS (SELECT 1 FROM dl)
  )
  SELECT ev.id, dl.id, dl.subscription_id, dl.delivery_key
  FROM ev LEFT JOIN dl ON dl.event_id = ev.id
  WHERE (SELECT count(*) FROM held) >= 0 AND (SELECT count(*) FROM wake) >= 0
$function$;

CREATE OR REPLACE FUNCTION public.hl_ensure_partition(p_parent text, p_at timestamp with time zone)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_from timestamptz := date_trunc('month', p_at, 'UTC');
  v_to   timestamptz := date_trunc('month', date_trunc('month', p_at, 'UTC') + interval '40 days', 'UTC');
  v_name text := p_parent || '_p' || to_char(date_trunc('month', p_at, 'UTC') AT TIME ZONE 'UTC', 'YYYY_MM');
  v_key  text := CASE p_parent WHEN 'deliveries' THEN 'event_at' ELSE 'created_at' END;
BEGIN
  IF p_parent NOT IN ('events', 'attempts', 'deliveries') THEN
    RAISE EXCEPTION 'hl_ensure_partition: % is not a partitioned ledger table', p_parent;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_class WHERE relname = v_name AND relnamespace = current_schema()::regnamespace) THEN
    RETURN false;
  END IF;
  -- "hlpart" in ASCII; the same lock for every partition change (lib/ledger/sql/partitions.ts).
  PERFORM pg_advisory_xact_lock(x'686c70617274'::bigint);
  IF EXISTS (SELECT 1 FROM pg_class WHERE relname = v_name AND relnamespace = current_schema()::regnamespace) THEN
    RETURN false;
  END IF;
  EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)', v_name, p_parent);
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I >= %L AND %I < %L)', v_name, v_name || '_bounds', v_key, v_from, v_key, v_to);
  EXECUTE format('WITH m AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING *) INSERT INTO %I SELECT * FROM m',
                 p_parent || '_default', v_key, v_from, v_key, v_to, v_name);
  EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', p_parent, v_name, v_from, v_to);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', v_name, v_name || '_bounds');
  RETURN true;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_event_keys_from_events()
 RETURNS trigger
 LANGUAGE plpgsql
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
  INSERT INTO event_keys (id, created_at)
  SELECT n.id, n.created_at FROM new_events n
   WHERE NOT EXISTS (SELECT 1 FROM event_keys k WHERE k.id = n.id AND k.created_at = n.created_at OFFSET 0);
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_fold_delivery_state_counts()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  zero_subs text[];
  zero_states text[];
  zero_reasons text[];
BEGIN
  WITH moved AS (
    DELETE FROM delivery_state_counts
    WHERE ctid IN (SELECT ctid FROM delivery_state_counts WHERE backend <> 0 FOR UPDATE SKIP LOCKED)
    RETURNING subscription_id, state, reason, n
  ), folded AS (
    INSERT INTO delivery_state_counts AS c (subscription_id, state, reason, backend, n)
    SELECT subscription_id, state, reason, 0, sum(n) FROM moved GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (subscription_id, state, reason, backend) DO UPDATE SET n = c.n + excluded.n
    RETURNING subscription_id, state, reason, n
  )
  SELECT array_agg(subscription_id), array_agg(state), array_agg(reason) INTO zero_subs, zero_states, zero_reasons
    FROM folded WHERE n = 0;
  IF zero_subs IS NOT NULL THEN
    DELETE FROM delivery_state_counts c
     USING unnest(zero_subs, zero_states, zero_reasons) AS z(subscription_id, state, reason)
     WHERE c.subscription_id = z.subscription_id AND c.state = z.state AND c.reason = z.reason AND c.backend = 0 AND c.n = 0;
  END IF;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_new_id(prefix text)
 RETURNS text
 LANGUAGE sql
AS $function$
  SELECT prefix
    || lpad(to_hex((date_part('epoch', clock_timestamp()) * 1000000)::bigint), 14, '0')
    || lpad(to_hex(floor(random() * 281474976710656)::bigint), 12, '0')
$function$;

CREATE OR REPLACE FUNCTION public.hl_ops_on_delivery_update()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  r         record;
  os        record;
  v_depth   bigint;
  v_limit   integer;
BEGIN
  -- The fast path: nothing below can act unless a row is dead-lettered now,
  -- was dead-lettered before, or was delivered for a subscription marked
  -- failing. A claim (pending -> in_flight) and a batch of deliveries of
  -- healthy subscriptions leave here after three scans without a join.
  IF NOT EXISTS (SELECT 1 FROM new_rows WHERE state = 'dead_letter')
     AND NOT EXISTS (SELECT 1 FROM old_rows WHERE state = 'dead_letter')
     AND NOT EXISTS (SELECT 1 FROM subscription_ops_state st
                      WHERE st.failing_since IS NOT NULL
                        AND st.subscription_id IN (SELECT subscription_id FROM new_rows WHERE state = 'delivered')) THEN
    RETURN NULL;
  END IF;

  -- One hookledger.delivery.dead_lettered per delivery entering the DLQ.
  FOR r IN
    SELECT n.id, n.delivery_key, n.event_id, n.event_type, n.subscription_id, n.dead_letter_reason,
           n.total_attempts, n.last_status_code, n.last_error_class, left(n.last_error_message, 500) AS last_error_message,
           n.dead_lettered_at, s.name AS sub_name, s.tenant AS sub_tenant
    FROM new_rows n
    JOIN old_rows o ON o.id = n.id
    JOIN subscriptions s ON s.id = n.subscription_id
    WHERE n.state = 'dead_letter' AND o.state <> 'dead_letter' AND n.event_type NOT LIKE 'hookledger.%'
    ORDER BY n.subscription_id, n.id
  LOOP
    PERFORM hl_publish_ops_event(
      'hookledger.delivery.dead_lettered', r.sub_tenant,
      jsonb_build_object('subscriptionId', r.subscription_id, 'deliveryId', r.id, 'eventId', r.event_id),
      jsonb_build_object(
        'deliveryId', r.id, 'deliveryKey', r.delivery_key, 'eventId', r.event_id, 'eventType', r.event_type,
        'subscriptionId', r.subscription_id, 'subscriptionName', r.sub_name, 'reason', r.dead_letter_reason,
        'attempts', r.total_attempts, 'lastStatusCode', r.last_status_code, 'lastErrorClass', r.last_error_class,
        'lastErrorMessage', r.last_error_message, 'deadLetteredAt', r.dead_lettered_at));
  END LOOP;

  -- Per subscription: failing / recovered / DLQ threshold. The unlocked
  -- pre-check keeps the common path (deliveries of healthy subscriptions)
  -- free of row locks; the row is then locked and re-read.
  FOR r IN
    WITH ch AS (
      SELECT n.subscription_id,
             bool_or(n.state = 'dead_letter') AS dl,
             bool_or(n.state = 'delivered') AS ok,
             bool_or(o.state = 'dead_letter') AS left_dlq,
             min(n.id) FILTER (WHERE n.state = 'delivered') AS ok_delivery
      FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE n.state <> o.state AND n.event_type NOT LIKE 'hookledger.%'
      GROUP BY n.subscription_id
    )
    SELECT ch.*, s.name AS sub_name, s.tenant AS sub_tenant
    FROM ch
    JOIN subscriptions s ON s.id = ch.subscription_id
    LEFT JOIN subscription_ops_state st ON st.subscription_id = ch.subscription_id
    WHERE ch.dl OR (ch.ok AND st.failing_since IS NOT NULL) OR (ch.left_dlq AND st.dlq_alerted_at IS NOT NULL)
    ORDER BY ch.subscription_id
  LOOP
    INSERT INTO subscription_ops_state (subscription_id) VALUES (r.subscription_id) ON CONFLICT DO NOTHING;
    SELECT * INTO os FROM subscription_ops_state WHERE subscription_id = r.subscription_id FOR UPDATE;

    IF r.dl THEN
      IF os.failing_since IS NULL THEN
        UPDATE subscription_ops_state SET failing_since = now() WHERE subscription_id = r.subscription_id;
      END IF;
    ELSIF r.ok AND os.failing_since IS NOT NULL THEN
      UPDATE subscription_ops_state SET failing_since = NULL WHERE subscription_id = r.subscription_id;
      PERFORM hl_publish_ops_event(
        'hookledger.subscription.recovered', r.sub_tenant,
        jsonb_build_object('subscriptionId', r.subscription_id),
        jsonb_build_object('subscriptionId', r.subscription_id, 'subscriptionName', r.sub_name,
                           'failingSince', os.failing_since, 'recoveredAt', now(), 'deliveryId', r.ok_delivery));
    END IF;

    IF r.dl OR (r.left_dlq AND os.dlq_alerted_at IS NOT NULL) THEN
      SELECT coalesce(sum(n), 0) INTO v_depth FROM delivery_state_counts
      WHERE subscription_id = r.subscription_id AND state = 'dead_letter';
      -- The district's own threshold when it set one (tenant_contacts), else the operator's.
      SELECT coalesce((SELECT tc.dlq_threshold FROM tenant_contacts tc WHERE tc.tenant = r.sub_tenant), o.dlq_threshold)
        INTO v_limit FROM ops_settings o;
      IF v_depth >= v_limit AND os.dlq_alerted_at IS NULL THEN
        UPDATE subscription_ops_state SET dlq_alerted_at = now() WHERE subscription_id = r.subscription_id;
        PERFORM hl_publish_ops_event(
          'hookledger.dlq.threshold_exceeded', r.sub_tenant,
          jsonb_build_object('subscriptionId', r.subscription_id),
          jsonb_build_object('subscriptionId', r.subscription_id, 'subscriptionName', r.sub_name,
                             'depth', v_depth, 'threshold', v_limit));
      ELSIF v_depth < v_limit AND os.dlq_alerted_at IS NOT NULL THEN
        UPDATE subscription_ops_state SET dlq_alerted_at = NULL WHERE subscription_id = r.subscription_id;
      END IF;
    END IF;
  END LOOP;
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_ops_on_subscription_paused()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM hl_publish_ops_event(
    'hookledger.subscription.paused', NEW.tenant,
    jsonb_build_object('subscriptionId', NEW.id),
    jsonb_build_object('subscriptionId', NEW.id, 'subscriptionName', NEW.name, 'url', NEW.url,
                       'reason', NEW.paused_reason, 'pausedAt', NEW.paused_at, 'failingSince', NEW.failing_since,
                       'failedAttempts', NEW.failing_attempts, 'nextProbeAt', NEW.next_probe_at));
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_ops_on_subscription_state()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  INSERT INTO subscription_ops_state AS st (subscription_id, failing_since) VALUES (NEW.id, now())
  ON CONFLICT (subscription_id) DO UPDATE SET failing_since = coalesce(st.failing_since, excluded.failing_since);
  PERFORM hl_publish_ops_event(
    'hookledger.subscription.disabled', NEW.tenant,
    jsonb_build_object('subscriptionId', NEW.id),
    jsonb_build_object('subscriptionId', NEW.id, 'subscriptionName', NEW.name, 'url', NEW.url,
                       'reason', NEW.state_reason, 'previousState', OLD.state));
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_publish_ops_event(p_type text, p_tenant text, p_subject jsonb, p_data jsonb)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_id      text := hl_new_id('hlevt_');
  v_at      timestamptz := clock_timestamp();
  v_payload bytea;
  v_subject jsonb := p_subject || CASE WHEN p_tenant IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('tenant', p_tenant) END;
  v_values  text[];
BEGIN
  v_payload := convert_to(
    '{"id":' || to_json(v_id)::text
    || ',"type":' || to_json(p_type)::text
    || ',"timestamp":' || to_json(to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
    || ',"data":' || p_data::text || '}', 'UTF8');
  v_values := ARRAY(SELECT DISTINCT v FROM (SELECT value AS v FROM jsonb_each_text(v_subject)
                                            UNION SELECT key || ':' || value FROM jsonb_each_text(v_subject)) s ORDER BY 1);
  PERFORM 1 FROM hl_enqueue_events(ARRAY[v_id], ARRAY[p_type], ARRAY[v_payload], ARRAY[v_at], ARRAY[p_tenant], ARRAY[v_subject],
                                   v_values, ARRAY[1], ARRAY[cardinality(v_values)]);
  RETURN v_id;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_skip_tombstoned_send()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM events e WHERE e.id = NEW.event_id AND e.tombstone IS NOT NULL) THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END $function$;

CREATE OR REPLACE FUNCTION public.hl_subscription_matches(p_event_types text[], p_sub_tenant text, p_type text, p_tenant text)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
  SELECT (p_event_types @> ARRAY[p_type] OR (p_event_types @> ARRAY['*']::text[] AND p_type NOT LIKE 'hookledger.%'))
     AND (p_sub_tenant IS NULL OR p_sub_tenant = p_tenant)
$function$;

CREATE OR REPLACE FUNCTION public.hl_subscription_tenant()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF NEW.tenant IS NOT NULL THEN
    INSERT INTO tenants (id, name) VALUES (NEW.tenant, NEW.tenant) ON CONFLICT (id) DO NOTHING;
  END IF;
  RETURN NEW;
END
$function$;

CREATE TRIGGER audit_entries_tenant BEFORE INSERT ON public.audit_entries FOR EACH ROW EXECUTE FUNCTION hl_audit_tenant();
CREATE TRIGGER hl_a_count_delete AFTER DELETE ON public.deliveries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION hl_count_delivery_states();
CREATE TRIGGER hl_a_count_insert AFTER INSERT ON public.deliveries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hl_count_delivery_states();
CREATE TRIGGER hl_a_count_update AFTER UPDATE ON public.deliveries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hl_count_delivery_states();
CREATE TRIGGER hl_b_ops_delivery_update AFTER UPDATE ON public.deliveries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hl_ops_on_delivery_update();
CREATE TRIGGER hl_tombstoned_not_sent BEFORE UPDATE OF state ON public.deliveries FOR EACH ROW WHEN (((old.state = ANY (ARRAY['delivered'::text, 'resolved'::text, 'dead_letter'::text])) AND (new.state = ANY (ARRAY['pending'::text, 'scheduled'::text, 'in_flight'::text])))) EXECUTE FUNCTION hl_skip_tombstoned_send();
CREATE TRIGGER hl_event_keys AFTER INSERT ON public.events REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION hl_event_keys_from_events();
CREATE TRIGGER hl_ops_subscription_disabled AFTER UPDATE OF state ON public.subscriptions FOR EACH ROW WHEN (((new.state = 'disabled'::text) AND (old.state IS DISTINCT FROM 'disabled'::text))) EXECUTE FUNCTION hl_ops_on_subscription_state();
CREATE TRIGGER hl_ops_subscription_paused AFTER UPDATE OF state ON public.subscriptions FOR EACH ROW WHEN (((new.state = 'paused'::text) AND (new.paused_reason = 'failing'::text) AND (old.state IS DISTINCT FROM 'paused'::text))) EXECUTE FUNCTION hl_ops_on_subscription_paused();
CREATE TRIGGER subscriptions_tenant BEFORE INSERT OR UPDATE OF tenant ON public.subscriptions FOR EACH ROW EXECUTE FUNCTION hl_subscription_tenant();
