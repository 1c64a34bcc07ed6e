-- The subscription list reads a page at a time (lib/subscriptions/list.ts):
-- one of four orders, each ending with the id so the cursor is exact, and a
-- page starts after the cursor's row. Without an index in the order, every
-- page (the first as much as the two-hundredth) read and sorted every row:
-- about 20 ms at 10,000 subscriptions on a busy two-core machine, growing
-- with the table, on each 5 s poll of the Subscriptions page. With one, a
-- page is an index range scan of its own rows (0.1 ms). The expressions are
-- the list's own sort keys, written the same way, so the planner matches them.
-- A district's own list is read through subscriptions_tenant as before.
--
-- The search (q: a substring of the name, id, URL or tenant) stays a scan of
-- the table: 10,000 rows are read in 30-50 ms on that machine, inside the
-- page's budget, and a trigram index would need the pg_trgm extension, which
-- not every install may create.
--
-- Every row is kept; nothing is rewritten. Locks: each CREATE INDEX holds
-- SHARE on subscriptions while it reads the table (milliseconds at 10,000
-- rows, about a second per million): a write to a subscription row (creating,
-- changing, pausing or archiving one, the failure window's count) waits that
-- long; reads, including the ingest's enqueue (FOR KEY SHARE) and the worker's
-- claims, do not. The migration runner applies a migration in a
-- transaction, so CONCURRENTLY is not available.

CREATE INDEX subscriptions_by_name ON subscriptions (lower(name), id);
CREATE INDEX subscriptions_by_tenant ON subscriptions (coalesce(tenant, ''), lower(name), id);
CREATE INDEX subscriptions_by_state ON subscriptions (state, lower(name), id);
CREATE INDEX subscriptions_by_created ON subscriptions (created_at, id);
