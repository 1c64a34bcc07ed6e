-- Endpoint authentication and test sends.
--
-- Locks: the ALTER TABLE takes ACCESS EXCLUSIVE on subscriptions for a
-- catalog-only change (four nullable columns without defaults: no rewrite,
-- no scan), so it holds for milliseconds whatever the table's size; it waits
-- behind open transactions on subscriptions (a worker's claim) like any DDL.
-- CREATE TABLE and its index lock nothing that exists. Every existing row
-- keeps its values and gets NULL for the new columns: no headers, no client
-- certificate, as before.
--
-- endpoint_headers and endpoint_tls hold AES-256-GCM ciphertext sealed like
-- signing secrets (lib/subscriptions/secrets.ts sealEndpointValue, bound to the
-- subscription and the column). The *_view columns are what reads show and
-- hold nothing secret: header names with masked values ("Bearer ••••"), and
-- the client certificate's subject, issuer, expiry and fingerprint.
ALTER TABLE subscriptions
  ADD COLUMN endpoint_headers text,
  ADD COLUMN endpoint_header_view jsonb,
  ADD COLUMN endpoint_tls text,
  ADD COLUMN endpoint_tls_view jsonb;

-- A test send (POST /api/v1/subscriptions/:id/test) and the endpoint's answer.
-- Not a delivery: nothing here is counted, dead-lettered or read by the
-- failure window, and no ledger trigger sees it.
CREATE TABLE test_sends (
  id                text PRIMARY KEY DEFAULT hl_new_id('tst_'),
  subscription_id   text NOT NULL REFERENCES subscriptions(id) ON DELETE CASCADE,
  actor             text NOT NULL,
  -- The stored event whose bytes were sent, or NULL for a hookledger.ping.
  event_id          text,
  event_type        text NOT NULL,
  url               text NOT NULL,
  status_code       integer,
  error_class       text,
  error_message     text,
  duration_ms       integer NOT NULL,
  response_headers  jsonb,
  response_excerpt  text,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX test_sends_subscription_created ON test_sends (subscription_id, created_at DESC);
