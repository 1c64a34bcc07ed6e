-- A fixed_at_source resolution may name the corrected event (the producer
-- republished the data under a new id): its delivery.resolve audit row holds
-- details.correctedEventId (lib/ledger/sql/resolve.ts). The resolved
-- delivery's timeline reads that row through audit_entries_target as before;
-- the corrected event's timeline looks the other way, from the event to the
-- rows naming it, and this index answers that with one probe. It is partial:
-- only the resolve rows that name a corrected event are in it, a handful
-- beside the millions of other audit rows.
--
-- Search by a subject value needs no new index: events.subject_values holds
-- every value and key:value of the subject and events_subject_values (GIN) has
-- served the lookup box since the events table was partitioned.
--
-- Every row is kept; nothing is rewritten. Locks: CREATE INDEX holds SHARE on
-- audit_entries while it reads the table (about a second per million rows; the
-- partial predicate shrinks the index, not the read): an operator action that
-- writes an audit row (redrive, resolve, pause, edits…), and a worker disabling
-- a subscription after a 410, waits that long; reads, the ingest and the
-- workers' sends do not touch audit_entries. The migration runner applies a
-- migration in a transaction, so CONCURRENTLY is not available.

CREATE INDEX audit_entries_corrected_event ON audit_entries ((details ->> 'correctedEventId'))
  WHERE action = 'delivery.resolve' AND details ? 'correctedEventId';
