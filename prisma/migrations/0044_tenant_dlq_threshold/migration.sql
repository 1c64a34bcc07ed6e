-- A district's own dead-letter threshold. hookledger.dlq.threshold_exceeded
-- (and the district's notice made from it, lib/notify/ingest.ts) fired at one
-- threshold for every subscription, ops_settings.dlq_threshold (100 unless an
-- operator changed it in SQL): for a small district, a hundred grades lost
-- before anyone was told. tenant_contacts.dlq_threshold, set with the
-- district's contacts (PUT /api/v1/tenants/:id/contacts), replaces it for the
-- tenant's subscriptions; NULL keeps the operator's. The trigger function is
-- 0008's with that one read changed; the read happens only when a statement
-- moves a row into or out of the DLQ (past the function's fast path).
--
-- Locks: ADD COLUMN without a default takes ACCESS EXCLUSIVE on
-- tenant_contacts (one row per district) for a catalog change only, no
-- rewrite; CREATE OR REPLACE FUNCTION locks no table. No row changes.
ALTER TABLE tenant_contacts ADD COLUMN dlq_threshold integer CHECK (dlq_threshold BETWEEN 1 AND 100000);

CREATE OR REPLACE FUNCTION hl_ops_on_delivery_update() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$;
