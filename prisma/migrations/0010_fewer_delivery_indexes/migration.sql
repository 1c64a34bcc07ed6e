-- Every state change of a delivery (pending -> in_flight -> delivered) is a
-- non-HOT update, so each one writes an entry into every index on the table
-- whose predicate the new row matches: the index count is paid twice per
-- delivery. Two of them were redundant (BENCHMARKS.md F1, drain):
--
-- * deliveries_event (event_id) beside UNIQUE (subscription_id, event_id):
--   the unique constraint now leads with event_id and serves both lookups by
--   event and the uniqueness (subscription-first lookups use
--   deliveries_sub_timeline and deliveries_sub_due).
-- * deliveries_leased (lease_until) WHERE state = 'in_flight': only the
--   reaper read it; it now reads deliveries_sub_in_flight, which holds the
--   same rows (those in flight: bounded by the subscriptions' max_concurrency).
ALTER TABLE deliveries DROP CONSTRAINT deliveries_subscription_id_event_id_key;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_event_id_subscription_id_key UNIQUE (event_id, subscription_id);
DROP INDEX deliveries_event;
DROP INDEX deliveries_leased;
