-- GET /api/v1/notifications and the Notifications page read notices newest
-- first in (created_at, id) order and page by the last one's (created_at, id):
-- the notifier writes a round's notices in one transaction, so many share a
-- created_at and the id breaks the tie. An operator (no tenant) reads them all
-- in that order: notifications_created. A district reads its own:
-- notifications_tenant_created, now with the id, so a page inside one instant
-- is an index range too, not a sort of the instant's rows.
--
-- Locks: each CREATE INDEX holds SHARE on notifications while it builds (the
-- notifier's inserts wait: a table of notices, built in well under a second at
-- 300,000); DROP INDEX takes ACCESS EXCLUSIVE on it for a moment. No row changes.
CREATE INDEX notifications_created ON notifications (created_at DESC, id DESC);
CREATE INDEX notifications_tenant_created_id ON notifications (tenant, created_at DESC, id DESC);
DROP INDEX notifications_tenant_created;
