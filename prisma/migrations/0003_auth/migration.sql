-- Access control: dashboard users and the sign-in rate limit.
-- Users are created by `hookledger user create`; API tokens stay in api_tokens.

CREATE TABLE users (
  id              text PRIMARY KEY,
  email           text NOT NULL,
  -- Producers publish with API tokens only; a person signs in as one of these.
  role            text NOT NULL CHECK (role IN ('support', 'manager', 'engineer', 'admin')),
  -- "scrypt$N$r$p$<salt b64>$<hash b64>" (lib/auth/password.ts)
  password_hash   text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  last_sign_in_at timestamptz,
  disabled_at     timestamptz
);
-- Emails are compared case-insensitively; they are stored lower-cased.
CREATE UNIQUE INDEX users_email ON users (email);

-- Failed sign-ins, counted per (email, ip) over a sliding window. Kept in
-- Postgres so several dashboard processes share one count.
CREATE TABLE sign_in_attempts (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email        text NOT NULL,
  ip           text NOT NULL,
  attempted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sign_in_attempts_key ON sign_in_attempts (email, ip, attempted_at);
