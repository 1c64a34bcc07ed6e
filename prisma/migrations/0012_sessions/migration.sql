-- Revocable sessions and changeable passwords.
-- A session cookie carries the session_version it was issued under; every
-- request compares it with the user's, so bumping the version (sign-out,
-- disable, role change, password change) ends every session issued before.
ALTER TABLE users ADD COLUMN session_version integer NOT NULL DEFAULT 0;
-- Set for passwords an admin created (CLI `user create`, the admin page): the
-- user must choose their own before the dashboard serves anything else.
ALTER TABLE users ADD COLUMN must_change_password boolean NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN password_changed_at timestamptz;

-- The per-address sign-in limit counts failures from one address over every email.
CREATE INDEX sign_in_attempts_ip ON sign_in_attempts (ip, attempted_at);
