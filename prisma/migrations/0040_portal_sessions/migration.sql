-- Portal sessions: a link the SaaS hands to a district signs one browser in
-- as that district (tenant-scoped, manager or support rights, optionally one
-- subscription only) until expires_at. The link's token is never stored: only
-- its sha256 (token_hash). used_at marks the link as spent (it opens once);
-- revoked_at ends the link and any browser session opened from it.
--
-- API tokens gain the role `portal` (the SaaS's backend mints links with it
-- and can do nothing else); users do not: their own CHECK is unchanged.
--
-- Locks: CREATE TABLE and its indexes touch only the new table. The foreign
-- keys take SHARE ROW EXCLUSIVE on tenants and subscriptions for milliseconds
-- (the new table is empty, so there is nothing to validate): tenant and
-- subscription writes wait that long; reads, the ingest's inserts into events
-- and deliveries, and the workers' claims do not. Replacing the api_tokens
-- role CHECK takes ACCESS EXCLUSIVE on api_tokens for milliseconds (it is
-- added NOT VALID, a catalog change): a token lookup waits that long. The
-- VALIDATE reads the table (a few rows) under SHARE UPDATE EXCLUSIVE, which
-- lets lookups and token writes go on.
CREATE TABLE portal_sessions (
  id              text PRIMARY KEY,
  tenant          text NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  subscription_id text REFERENCES subscriptions (id) ON DELETE CASCADE,
  read_only       boolean NOT NULL DEFAULT false,
  token_hash      text NOT NULL UNIQUE,
  created_by      text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  revoked_at      timestamptz,
  revoked_by      text,
  CONSTRAINT portal_sessions_expiry CHECK (expires_at > created_at)
);

-- The sessions of a tenant, newest first (listing and revoking a district's links).
CREATE INDEX portal_sessions_tenant ON portal_sessions (tenant, created_at DESC);

ALTER TABLE api_tokens DROP CONSTRAINT api_tokens_role_check;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_role_check CHECK (role IN ('producer', 'support', 'manager', 'engineer', 'admin', 'portal')) NOT VALID;
ALTER TABLE api_tokens VALIDATE CONSTRAINT api_tokens_role_check;
