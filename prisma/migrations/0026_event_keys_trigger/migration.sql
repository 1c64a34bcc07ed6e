-- The statement trigger that gives keys to events written other than by the
-- enqueue (0021) reads event_keys through its primary key, one probe per
-- event written, instead of as an anti-join.
--
-- Why: the trigger runs after every insert into events, the enqueue's too.
-- Its NOT EXISTS was planned as an anti-join, and for a statement of a few
-- hundred events PostgreSQL chose to hash the whole of event_keys: every
-- enqueue statement read every key ever stored, so the ingest slowed down as
-- the ledger grew (at 200,000 events, 31-47 ms of a 500-event statement's
-- 87-111 ms; at 10 M it would be seconds; BENCHMARKS.md F8). The OFFSET 0
-- keeps the subquery from being turned into a join:
-- it stays a per-row probe of event_keys_pkey, whatever the table's size and
-- whatever row count the plan was first made for (PL/pgSQL keeps the plan for
-- the session).
--
-- Unchanged: a key already there with the same time is the enqueue's own; a
-- key there with another time is a second event under one id, and the insert
-- fails on event_keys' primary key.
--
-- Locks: replacing a function is a catalog change; no table is locked or read.
CREATE OR REPLACE FUNCTION hl_event_keys_from_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO event_keys (id, created_at)
  SELECT n.id, n.created_at FROM new_events n
   WHERE NOT EXISTS (SELECT 1 FROM event_keys k WHERE k.id = n.id AND k.created_at = n.created_at OFFSET 0);
  RETURN NULL;
END $$;
