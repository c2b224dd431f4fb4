#!/bin/sh
# Whole-binary figures next to the Go benchmarks. Every scripts/bench-*.sh
# adds its own section; each generates its data in a temp dir and cleans up.
set -eu
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/kaasctl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== whois --stdin, 1,000,000 keys, -o jsonl (SPEC target: < 1 s)"
mkdir -p "$tmp/cd"
printf '%s' '{"controllerEpoch":1,"assignmentVersion":7,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"},{"id":"kaas-2","health":"alive"}],"partitions":[]}' > "$tmp/cd/assignment.json"
awk 'BEGIN { for (i = 0; i < 1000000; i++) print "orders-consumer-" i }' > "$tmp/keys"
start=$(date +%s.%N)
"$BIN" whois --stdin -o jsonl --cluster-dir "$tmp/cd" < "$tmp/keys" > /dev/null
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "whois --stdin: %.3f s per 1M keys (binary, output to /dev/null)\n", e - s }'

for s in scripts/bench-*.sh; do
  [ -f "$s" ] || continue
  echo "== $s"
  BIN="$BIN" sh "$s"
done
