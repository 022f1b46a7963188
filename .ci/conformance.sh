#!/usr/bin/env bash
# Differential conformance (issue #17): wharf's list filters against go-bexpr, its ACL policies against Nomad's
# parser, and the Nomad Go client, with ../shared/conformance. Fails on any mismatch class that
# tests/conformance/allow.txt does not list. Starts its own wharf on a temp data dir.
set -euo pipefail
cd "$(dirname "$0")/.."
kit=../shared/conformance
if [ ! -x "$kit/run.sh" ]; then
  echo "conformance: skipped ($kit/run.sh not found)"
  exit 0
fi
deno=(npx -y deno@2.9.6)
data=$(mktemp -d)
out=$(mktemp)
cleanup() {
  local status=$?
  if [ -n "${pid:-}" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$data" "$out"
  exit "$status"
}
trap cleanup EXIT
"$kit/run.sh" build
WHARF_INITIAL_ADMIN_PASSWORD=conformance-pw "${deno[@]}" run -A main.ts --port 0 --data-dir "$data" \
  --log-level warn >"$out" 2>&1 &
pid=$!
url=""
for _ in $(seq 1 300); do
  url=$(sed -nE 's/.*wharf listening on (http:\/\/[^ ]+).*/\1/p' "$out" | head -1)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$out"; echo "conformance: wharf did not start"; exit 1; }
  sleep 0.2
done
[ -n "$url" ] || { echo "conformance: wharf did not start within 60 s"; exit 1; }
eval "$(WHARF_INITIAL_ADMIN_PASSWORD=conformance-pw "$kit/run.sh" tokens "$url")"
export WHARF_ADMIN_TOKEN WHARF_NOMAD_TOKEN
"$kit/run.sh" all "$url" --allow tests/conformance/allow.txt
