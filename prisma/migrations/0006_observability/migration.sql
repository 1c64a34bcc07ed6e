-- Observability: cheap delivery counts for /metrics, and hookledger's
-- own operational events, both maintained by triggers in the transaction that
-- changes a delivery or a subscription.

-- ---------------------------------------------------------------------------
-- 1. Delivery counts by subscription, state and dead-letter reason.
--
-- /metrics must not scan the deliveries table per scrape (`delivered` grows
-- without bound; a backlog makes pending huge). Statement-level triggers with
-- transition tables add one aggregated delta per statement, so a batched claim
-- or result write of 200 rows costs one small upsert, not 200.
--
-- Each row is keyed by the writer's backend pid: a backend runs one transaction
-- at a time, so no two transactions ever update the same counter row, and the
-- hot path can neither wait on nor deadlock with another worker's counter.
-- `hl_fold_delivery_state_counts()` (run at scrape time and by workers) folds
-- the per-backend rows into backend 0, skipping rows whose writer is still in
-- its transaction (SKIP LOCKED), so it never waits either. Readers sum over
-- backends.
CREATE TABLE delivery_state_counts (
  subscription_id text NOT NULL,
  state           text NOT NULL,
  reason          text NOT NULL DEFAULT '',  -- dead_letter_reason when state = 'dead_letter', else ''
  backend         integer NOT NULL,          -- pg_backend_pid() of the writer; 0 = folded
  n               bigint NOT NULL,
  PRIMARY KEY (subscription_id, state, reason, backend)
);

CREATE FUNCTION hl_count_delivery_states() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$;

-- Trigger names order their firing: the counts ("hl_a_") are up to date when
-- the operational-event trigger ("hl_b_") reads a DLQ depth.
CREATE TRIGGER hl_a_count_insert AFTER INSERT ON deliveries
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hl_count_delivery_states();
CREATE TRIGGER hl_a_count_update AFTER UPDATE ON deliveries
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hl_count_delivery_states();
CREATE TRIGGER hl_a_count_delete AFTER DELETE ON deliveries
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION hl_count_delivery_states();

CREATE FUNCTION hl_fold_delivery_state_counts() RETURNS void LANGUAGE sql AS $$
  WITH moved AS (
    DELETE FROM delivery_state_counts
    WHERE ctid IN (SELECT ctid FROM delivery_state_counts WHERE backend <> 0 FOR UPDATE SKIP LOCKED)
    RETURNING subscription_id, state, reason, n
  ), folded AS (
    INSERT INTO delivery_state_counts AS c (subscription_id, state, reason, backend, n)
    SELECT subscription_id, state, reason, 0, sum(n) FROM moved GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (subscription_id, state, reason, backend) DO UPDATE SET n = c.n + excluded.n
    RETURNING 1
  )
  SELECT count(*) FROM folded;
  DELETE FROM delivery_state_counts WHERE backend = 0 AND n = 0;
$$;

-- The starting counts: one scan, here, with writers held off so none is missed.
LOCK TABLE deliveries IN SHARE ROW EXCLUSIVE MODE;
INSERT INTO delivery_state_counts (subscription_id, state, reason, backend, n)
SELECT subscription_id, state, CASE WHEN state = 'dead_letter' THEN coalesce(dead_letter_reason, '') ELSE '' END, 0, count(*)
FROM deliveries GROUP BY 1, 2, 3;

-- ---------------------------------------------------------------------------
-- 2. Operational events (Svix's "operational webhooks"): hookledger publishes
--    hookledger.delivery.dead_lettered, hookledger.subscription.disabled,
--    hookledger.subscription.recovered and hookledger.dlq.threshold_exceeded
--    through itself, to subscriptions whose event_types name those types.
--
-- Why triggers rather than an outbox sweeper: the event and its deliveries
-- are written in the same transaction as the dead-letter (or the disable), the
-- same guarantee publishEvent gives producers (invariant 2). Nothing can be
-- dead-lettered without its event, and no event exists for a dead-letter that
-- rolled back; every writer (the worker, the reaper, a redrive, a hand-run
-- UPDATE) is covered without its cooperation; there is no sweeper lag and no
-- watermark to lose. The cost on the hot path is one join of the statement's
-- transition tables and an unlocked lookup in the small subscription_ops_state
-- table; per-subscription rows are locked only on the rare paths (a
-- dead-letter, a recovery, a DLQ threshold), always in subscription-id order.
--
-- No recursion: deliveries of hookledger.* events never produce operational
-- events (nor mark a subscription failing or recovered).

-- The DLQ depth per subscription above which hookledger.dlq.threshold_exceeded
-- is published (once per crossing; re-armed when the depth falls below it).
CREATE TABLE ops_settings (
  id            boolean PRIMARY KEY DEFAULT true CHECK (id),
  dlq_threshold integer NOT NULL DEFAULT 100 CHECK (dlq_threshold > 0)
);
INSERT INTO ops_settings DEFAULT VALUES;

CREATE TABLE subscription_ops_state (
  subscription_id text PRIMARY KEY REFERENCES subscriptions (id) ON DELETE CASCADE,
  -- Set by a dead-letter or a disable; cleared, with a recovered event, by the
  -- subscription's next successful delivery.
  failing_since   timestamptz,
  -- Set when the DLQ crossed the threshold (and the event went out); cleared
  -- when the depth falls below it again.
  dlq_alerted_at  timestamptz
);

-- Writes one operational event and its deliveries, mirroring publishEvent
-- (lib/events/publish.ts): the stored bytes are the envelope
-- {"id","type","timestamp","data"}; a subscription with a tenant receives only
-- its own tenant's events; paused and disabled subscriptions get theirs, held.
-- Only subscriptions that name the type receive it: "*" does not match
-- hookledger.* types (a catch-all analytics sink did not ask to be paged).
CREATE FUNCTION hl_publish_ops_event(p_type text, p_tenant text, p_subject jsonb, p_data jsonb) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_id      text := hl_new_id('hlevt_');
  v_at      timestamptz := clock_timestamp();
  v_payload bytea;
  v_subject jsonb := p_subject || CASE WHEN p_tenant IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('tenant', p_tenant) END;
  v_count   integer;
BEGIN
  v_payload := convert_to(
    '{"id":' || to_json(v_id)::text
    || ',"type":' || to_json(p_type)::text
    || ',"timestamp":' || to_json(to_char(v_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
    || ',"data":' || p_data::text || '}', 'UTF8');
  INSERT INTO events (id, type, payload, occurred_at, tenant, subject, subject_values)
  VALUES (v_id, p_type, v_payload, v_at, p_tenant, v_subject,
          ARRAY(SELECT DISTINCT v FROM (SELECT value AS v FROM jsonb_each_text(v_subject)
                                        UNION SELECT key || ':' || value FROM jsonb_each_text(v_subject)) s ORDER BY 1));
  INSERT INTO deliveries (delivery_key, event_id, subscription_id, event_type)
  SELECT encode(sha256(convert_to(s.id || ':' || v_id, 'UTF8')), 'hex'), v_id, s.id, p_type
  FROM subscriptions s
  WHERE s.event_types @> ARRAY[p_type]
    AND (s.tenant IS NULL OR s.tenant = p_tenant)
  ORDER BY s.id;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  IF v_count > 0 THEN PERFORM pg_notify('hookledger_deliveries', ''); END IF;
  RETURN v_id;
END $$;

CREATE FUNCTION hl_ops_on_delivery_update() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r         record;
  os        record;
  v_depth   bigint;
  v_limit   integer;
BEGIN
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
      SELECT dlq_threshold INTO v_limit FROM ops_settings;
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
END $$;

CREATE TRIGGER hl_b_ops_delivery_update AFTER UPDATE ON deliveries
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION hl_ops_on_delivery_update();

CREATE FUNCTION hl_ops_on_subscription_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO subscription_ops_state AS st (subscription_id, failing_since) VALUES (NEW.id, now())
  ON CONFLICT (subscription_id) DO UPDATE SET failing_since = coalesce(st.failing_since, excluded.failing_since);
  PERFORM hl_publish_ops_event(
    'hookledger.subscription.disabled', NEW.tenant,
    jsonb_build_object('subscriptionId', NEW.id),
    jsonb_build_object('subscriptionId', NEW.id, 'subscriptionName', NEW.name, 'url', NEW.url,
                       'reason', NEW.state_reason, 'previousState', OLD.state));
  RETURN NULL;
END $$;

CREATE TRIGGER hl_ops_subscription_disabled AFTER UPDATE OF state ON subscriptions
  FOR EACH ROW WHEN (NEW.state = 'disabled' AND OLD.state IS DISTINCT FROM 'disabled')
  EXECUTE FUNCTION hl_ops_on_subscription_state();
