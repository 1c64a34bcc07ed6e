-- The notifier looks every five seconds for signing secrets whose overlap ends
-- within the day (lib/ledger/sql/notifications.ts, endingSecretOverlaps). Only
-- a rotated-out secret has an expires_at, but nothing indexed it, so each
-- round read every secret of every subscription: about 1,100 rows per
-- thousand subscriptions, 60 buffers at 5,000 and 600 at 50,000, growing with
-- the districts however few secrets were ending. An index of the secrets that
-- expire, in the order they do, makes the round read the ones ending within
-- the day (and seek past those long expired, which are kept).
--
-- Every row is kept; nothing is rewritten. Locks: CREATE INDEX holds SHARE on
-- subscription_secrets while it reads the table (milliseconds at 50,000 rows):
-- a secret rotated meanwhile waits that long; the worker's reads of secrets do
-- not. The migration runner applies a migration in a transaction, so
-- CONCURRENTLY is not available.

CREATE INDEX subscription_secrets_expiring ON subscription_secrets (expires_at) WHERE expires_at IS NOT NULL;
