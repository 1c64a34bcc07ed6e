#!/usr/bin/env bash
# `npm run lint`: ESLint, Prettier's check and knip, side by side. Each is single-threaded (ESLint's own --concurrency
# gains nothing at this size on two cores), so together they take about as long as ESLint alone. Each one's output is
# printed whole, one after another, and the run fails if any of them does.
set -uo pipefail
cd "$(dirname "$0")/.."

names=(eslint prettier knip)
# --max-warnings 0: a warning (an unused import, say) fails the run too; otherwise it scrolls past in a passing one.
# Prettier keeps a cache (node_modules/.cache/prettier) keyed on each file's content and Prettier's options: a file's
# formatting depends on nothing else, so a file unchanged since a passing check is not formatted again (about 20 s of
# CPU beside ESLint's on two cores). ESLint keeps none: the layering rule judges other files too (where an import
# resolves), which its cache would not see change. A fresh clone (CI) has no cache and checks every file.
cmds=("npx eslint . --max-warnings 0" "npx prettier --check --cache --cache-strategy content ." "npx knip --no-progress")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

pids=()
for i in "${!names[@]}"; do
  bash -c "${cmds[$i]}" >"$dir/${names[$i]}.out" 2>&1 &
  pids+=($!)
done

failed=()
for i in "${!names[@]}"; do
  code=0
  wait "${pids[$i]}" || code=$?
  echo "> ${cmds[$i]}"
  cat "$dir/${names[$i]}.out"
  [ "$code" -eq 0 ] || failed+=("${names[$i]} (exit $code)")
done

if [ "${#failed[@]}" -gt 0 ]; then
  echo "lint failed: ${failed[*]}" >&2
  exit 1
fi
