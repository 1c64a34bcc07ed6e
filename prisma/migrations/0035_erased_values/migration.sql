-- What an erasure keeps of its value, so that the API can refuse a new
-- operator reason that names an erased student (lib/erasure/values.ts):
--   value_mac     HMAC-SHA256 of the value (trimmed, lower-case) under a key
--                 derived from HOOKLEDGER_SECRET_KEY. Not the value, and not a
--                 plain hash of it: a hash of a student id is a lookup table
--                 away from the id, while this needs the server's key as well.
--                 NULL for erasures recorded before this migration.
--   value_length  its length in characters, so a reason is checked only at the
--                 lengths some erased value has.
-- And two counts of the receipt: the erased events whose ids contain the value
-- (an erasure cannot change an id: it is the delivery key's identity), and the
-- operators' reasons and resolution texts it scrubbed the value from.
--
-- Locks: erasures is small, and columns with a constant default or none are a
-- catalog change; nothing else is touched.
ALTER TABLE erasures
  ADD COLUMN value_mac            bytea,
  ADD COLUMN value_length         integer,
  ADD COLUMN event_ids_with_value integer NOT NULL DEFAULT 0,
  ADD COLUMN reasons_scrubbed     integer NOT NULL DEFAULT 0;
