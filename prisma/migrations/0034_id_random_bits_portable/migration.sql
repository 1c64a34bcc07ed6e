-- hl_new_id as 0032 now defines it, for the installs that applied 0032's
-- first text (random(min, max), which exists only on PostgreSQL 17 and
-- later). A fresh database runs 0032's current text and then this one, an
-- upgraded one runs only this one: both end with the same function. Same id
-- form, same 48 random bits from the backend's generator (0032 says why).
--
-- Locks: replacing a function is a catalog change; no table is read or locked.
CREATE OR REPLACE FUNCTION hl_new_id(prefix text) RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT prefix
    || lpad(to_hex((date_part('epoch', clock_timestamp()) * 1000000)::bigint), 14, '0')
    || lpad(to_hex(floor(random() * 281474976710656)::bigint), 12, '0')
$$;
