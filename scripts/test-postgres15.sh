#!/usr/bin/env bash
# The database tests again, on PostgreSQL 15: the oldest server hookledger
# supports (lib/db/migrate.ts MIN_SERVER_VERSION). `npm test` runs the whole
# vitest suite on the embedded PostgreSQL 18 first, then this.
#
# The server:
#   - HOOKLEDGER_TEST_PG15_URL, when set: any PostgreSQL 15 server whose user
#     may create databases (each test file clones a template, test/helpers/db.ts),
#     or a server of another version with HOOKLEDGER_TEST_EXPECT_SERVER set to
#     its major (scripts/test-postgres-at.sh, which runs this pass on 16 or 17);
#   - otherwise Debian's PostgreSQL 15 (apt-get install postgresql-15), in a
#     throwaway cluster on a free port that pg_virtualenv (postgresql-common)
#     creates for this run and drops after it, whatever the outcome.
# Arguments go to vitest (a file filter, say).
#
# Left out of this second run, since it would prove nothing about the server
# that the files it keeps do not (and the run must fit CI's time):
#   - the files that never reach the database (pure functions, lint and
#     source checks: the first run has them), and those that start hookledger
#     on an embedded server of their own (start-supervise, start-database-restart, start-first-admin,
#     start-slow-checkpoint, most of start-quiet, database-down, which stops its own;
#     embedded-installed-bin starts PostgreSQL 15 itself, from its binaries);
#   - the tests of processes, the CLI's argument handling, packaging and the
#     sign-in's HTTP behaviour (signals and restarts, chaos, the CLI commands,
#     npm pack, rate limits, Host and proxy headers, the demo stack): the
#     statements they run are the services' own, which the service-level files
#     kept here run on 15 (worker-claims and worker-retry for the worker's,
#     redrive/resolve/recover/retention/erase for the CLI's, auth-admin and
#     permission-matrix for the accounts');
#   - bench-smoke, bench-endpoints: the bench's own tooling; its figures are measured on the
#     embedded server.
set -euo pipefail
cd "$(dirname "$0")/.."

excluded=(
  api-bodies auth-headers backoff classify database-tls client-coverage client-options exit-code ledger-boundary lint-boundaries live-button
  metrics-worker outcome readme-commands install-scripts repo-stands-alone sender server-only client-bundle signing ui-filters embedded-platforms
  redrive-pacer-outage interrupted-words notice-words display-url session-cookie-reader error-words batch-words window-hint finished-batch-statuses
  pg-error-listeners
  start-supervise start-quiet start-port-taken start-orphans start-wait start-database-restart start-slow-checkpoint start-first-admin cli-data-dir database-down
  embedded-installed-bin
  worker-processes chaos-scenario retention-load batch-cli redrive-cli resolve-cli retention-cli recover-cli
  client-package auth-signin auth-sessions auth-burst auth-redirect auth-demo auth-limits sec-trusted-proxies
  sec-host-check demo-stack server
  bench-smoke bench-endpoints
)
args=()
for name in "${excluded[@]}"; do args+=(--exclude "test/**/${name}.test.ts"); done
set -- "${args[@]}" "$@"

if [ -n "${HOOKLEDGER_TEST_PG15_URL:-}" ]; then
  exec env DATABASE_URL="$HOOKLEDGER_TEST_PG15_URL" HOOKLEDGER_TEST_EXPECT_SERVER="${HOOKLEDGER_TEST_EXPECT_SERVER:-15}" npx vitest run "$@"
fi

if ! command -v pg_virtualenv >/dev/null 2>&1 || [ ! -x /usr/lib/postgresql/15/bin/postgres ]; then
  echo "npm test runs the database tests on PostgreSQL 15 too, and found none here." >&2
  echo "Install it (Debian: apt-get install postgresql-15) or set HOOKLEDGER_TEST_PG15_URL to a PostgreSQL 15 server's URL." >&2
  exit 1
fi

# pg_virtualenv as root makes the cluster as the postgres user, who must reach this checkout's files only through
# the server's own connections (nothing here is read by the server), so no permissions change.
# max_connections: two vitest workers each run a worker pool, a dashboard and Prisma against their own database.
exec pg_virtualenv -v 15 -o max_connections=300 -o fsync=off -o synchronous_commit=off \
  sh -c 'DATABASE_URL="postgres://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/postgres" HOOKLEDGER_TEST_EXPECT_SERVER=15 npx vitest run "$@"' vitest "$@"
