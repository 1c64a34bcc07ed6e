-- A delivery whose event is a tombstone (0019_erasure) is never made due
-- again, whichever statement tries: the single redrive and resend refuse it
-- with a 409 first (lib/ledger/sql/redrive.ts, resend.ts), and this trigger
-- holds every other path to the same rule (a recover batch's resend of
-- delivered and resolved rows, or any statement written later), so nothing
-- can send the tombstone's bytes under the delivery's key and overwrite what
-- the receiver holds. The row is skipped (the BEFORE trigger returns NULL):
-- a batch statement moves the others and reports this one as not moved, as
-- it does for a row another transaction changed first.
--
-- The WHEN clause is evaluated without calling the function, and only a row
-- leaving delivered, resolved or dead_letter for a due state matches it, so
-- the worker's claims and result writes (pending, scheduled and in_flight
-- rows) never pay for the lookup.
--
-- Locks: CREATE TRIGGER takes SHARE ROW EXCLUSIVE on deliveries for
-- milliseconds (a catalog change): the worker's and the ingest's writes wait
-- that long; reads do not.
CREATE FUNCTION hl_skip_tombstoned_send() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM events e WHERE e.id = NEW.event_id AND e.tombstone IS NOT NULL) THEN
    RETURN NULL;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER hl_tombstoned_not_sent BEFORE UPDATE OF state ON deliveries
  FOR EACH ROW
  WHEN (OLD.state IN ('delivered', 'resolved', 'dead_letter') AND NEW.state IN ('pending', 'scheduled', 'in_flight'))
  EXECUTE FUNCTION hl_skip_tombstoned_send();
