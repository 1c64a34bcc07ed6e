#!/usr/bin/env bash
# scripts/test-postgres15.sh's pass (the same test files, the same ones left
# out) on any server hookledger supports, given by its URL: how a version CI
# does not run, 16 or 17, is checked by hand (docs/PLATFORM.md, "Checking
# another PostgreSQL version").
#
#   bash scripts/test-postgres-at.sh MAJOR URL [vitest arguments]
#
# MAJOR is the version the server is meant to be: the run fails on any other
# (test/database/migrate-versions.test.ts), so a URL that reached the wrong
# server cannot pass for it. URL's user must be allowed to create databases
# (each test file clones a template, test/helpers/db.ts).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]] || [ "$1" -lt 15 ] || ! [[ $2 =~ ^postgres(ql)?:// ]]; then
  echo "usage: bash scripts/test-postgres-at.sh MAJOR URL [vitest arguments]" >&2
  echo "  MAJOR: the server's major version, 15 or newer; URL: postgres://user:password@host:port/postgres" >&2
  exit 2
fi
major=$1 url=$2
shift 2
exec env HOOKLEDGER_TEST_PG15_URL="$url" HOOKLEDGER_TEST_EXPECT_SERVER="$major" bash scripts/test-postgres15.sh "$@"
