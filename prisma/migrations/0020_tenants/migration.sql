-- Tenants (districts) become rows: `tenants` holds each one's id and name,
-- and subscriptions.tenant references it. Every distinct tenant string that a
-- subscription already carries becomes a tenants row named after itself (an
-- admin can rename it later), so no subscription loses or changes its tenant.
--
-- Users and API tokens may carry a tenant (tenant_id; NULL = global, which is
-- what every existing account and token stays). A scoped principal is confined
-- to its tenant by the ledger's finders (lib/tenants/scope.ts).
--
-- audit_entries.tenant_id records the tenant of what a row touched (NULL for
-- global things: users, tokens, erasures, and tenant-less subscriptions), so a
-- scoped principal reads its own tenant's trail only. Existing rows get it
-- from the subscription they name (the target, or details.subscriptionId for
-- a delivery's or a batch's row). redrive_batches.tenant_id records the tenant
-- a bulk operation was confined to, so a scoped principal sees its own
-- batches only; existing batches are global (NULL).
--
-- events.tenant stays free text: a global producer may publish for a tenant
-- that has no row (no subscription matches it yet), as before.
--
-- Locks: the ALTER TABLEs take ACCESS EXCLUSIVE on users, api_tokens,
-- audit_entries and redrive_batches for milliseconds (nullable columns
-- without a default: catalog only, no rewrite). The foreign keys are added
-- NOT VALID (milliseconds, SHARE ROW EXCLUSIVE on subscriptions, users,
-- api_tokens and tenants) and then validated under SHARE UPDATE EXCLUSIVE,
-- which lets reads and writes of subscriptions (enqueues, claims) go on while
-- the rows are checked. The audit backfill UPDATE holds row locks on the
-- audit rows it changes for the length of one statement (seconds at a few
-- million audit rows); audit inserts are not blocked by it. The index on
-- audit_entries (tenant_id, created_at) is built under SHARE: audit inserts
-- (operator actions, the worker's 410 handling) wait for the build, about a
-- second per million audit rows. The trigger is created under SHARE ROW
-- EXCLUSIVE on audit_entries, for milliseconds; the subscriptions trigger the
-- same on subscriptions.

-- No CHECK on the id's shape: existing tenant strings are taken as they are;
-- new ids are checked where tenants are created (lib/tenants/service.ts).
CREATE TABLE tenants (
  id         text PRIMARY KEY,
  name       text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO tenants (id, name)
SELECT DISTINCT tenant, tenant FROM subscriptions WHERE tenant IS NOT NULL;

ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_tenant_fkey
  FOREIGN KEY (tenant) REFERENCES tenants (id) NOT VALID;
ALTER TABLE subscriptions VALIDATE CONSTRAINT subscriptions_tenant_fkey;

-- A subscription written with a tenant that has no row yet registers it (named
-- after its id), so every writer that predates tenants (a global admin's API
-- call, the demo, seeds and fixtures that insert rows directly) keeps working and
-- the reference always holds. Who may name a new tenant is the application's
-- rule (lib/subscriptions/service.ts: global admins only; anyone else gets 400
-- for an unknown tenant). Fires only on an insert or a change of the tenant.
CREATE FUNCTION hl_subscription_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.tenant IS NOT NULL THEN
    INSERT INTO tenants (id, name) VALUES (NEW.tenant, NEW.tenant) ON CONFLICT (id) DO NOTHING;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER subscriptions_tenant BEFORE INSERT OR UPDATE OF tenant ON subscriptions
  FOR EACH ROW EXECUTE FUNCTION hl_subscription_tenant();

ALTER TABLE users ADD COLUMN tenant_id text;
ALTER TABLE users ADD CONSTRAINT users_tenant_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id) NOT VALID;
ALTER TABLE users VALIDATE CONSTRAINT users_tenant_fkey;

ALTER TABLE api_tokens ADD COLUMN tenant_id text;
ALTER TABLE api_tokens ADD CONSTRAINT api_tokens_tenant_fkey FOREIGN KEY (tenant_id) REFERENCES tenants (id) NOT VALID;
ALTER TABLE api_tokens VALIDATE CONSTRAINT api_tokens_tenant_fkey;

-- No foreign key on the audit trail: it is history, and a reference would make
-- every audit insert check tenants.
ALTER TABLE audit_entries ADD COLUMN tenant_id text;
ALTER TABLE redrive_batches ADD COLUMN tenant_id text;

UPDATE audit_entries a
   SET tenant_id = s.tenant
  FROM subscriptions s
 WHERE s.tenant IS NOT NULL
   AND s.id = CASE WHEN a.target_type = 'subscription' THEN a.target_id ELSE a.details ->> 'subscriptionId' END;

-- A scoped principal's audit page filters on tenant_id and time.
CREATE INDEX audit_entries_tenant ON audit_entries (tenant_id, created_at DESC) WHERE tenant_id IS NOT NULL;

-- Every audit row that names a subscription (its target, or details.subscriptionId
-- for a delivery's or a batch's row) carries that subscription's tenant, whoever
-- writes it: the application's writer, and the rows written inside ledger SQL
-- (the worker's 410 handling, a bulk resolve's per-delivery rows). A writer that
-- knows the tenant (a scoped bulk operation) sets it and the trigger leaves it.
-- One primary-key lookup per audit row.
CREATE FUNCTION hl_audit_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.tenant_id IS NULL THEN
    SELECT s.tenant INTO NEW.tenant_id FROM subscriptions s
     WHERE s.id = CASE WHEN NEW.target_type = 'subscription' THEN NEW.target_id ELSE NEW.details ->> 'subscriptionId' END;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER audit_entries_tenant BEFORE INSERT ON audit_entries FOR EACH ROW EXECUTE FUNCTION hl_audit_tenant();
