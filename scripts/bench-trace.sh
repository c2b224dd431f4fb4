#!/bin/sh
# Benchmark: `kaasctl takeover trace --logs` over 1 GB of generated kaas
# broker logs, next to `grep -c controller` over the same bytes
# (SPEC §7 target: within 2x). Best of 3 runs each, page cache warm.
# BENCH_TRACE_SIZE overrides the size in bytes.
set -eu
cd "$(dirname "$0")/.."
size=${BENCH_TRACE_SIZE:-1073741824}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kaasctl-bench-trace.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# scripts/bench.sh passes the binary it built as BIN; otherwise build one.
if [ -n "${BIN:-}" ] && [ -x "$BIN" ]; then
	kaasctl=$BIN
else
	go build -o "$tmp/kaasctl" ./cmd/kaasctl
	kaasctl=$tmp/kaasctl
fi
go run ./scripts/genlogs -size "$size" -files 1 -dir "$tmp/logs"
log="$tmp/logs/kaas-0.log"
cat "$log" >/dev/null

now() { date +%s.%N; }
best() { # best wall time of 3 runs of "$@", output discarded
	b=""
	for _ in 1 2 3; do
		s=$(now)
		"$@" >"$tmp/out" 2>&1 || true  # not /dev/null: grep stops at the first match when it sees /dev/null
		e=$(now)
		b=$(awk -v s="$s" -v e="$e" -v b="$b" 'BEGIN { d = e - s; if (b == "" || d < b) print d; else print b }')
	done
	echo "$b"
}
g=$(best grep -c controller "$log")
k=$(best "$kaasctl" takeover trace --logs "$log" -o json -q)
events=$("$kaasctl" takeover trace --logs "$log" -o jsonl -q | wc -l)
awk -v g="$g" -v k="$k" -v sz="$size" -v ev="$events" 'BEGIN {
	printf "takeover trace over %.2f GB of logs (%d moves found): kaasctl %.2f s, grep -c %.2f s, ratio %.2fx (target <= 2x)\n", sz / 1073741824, ev, k, g, k / g
}'
