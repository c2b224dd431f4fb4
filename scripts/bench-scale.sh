#!/bin/sh
# Scale figures beside their targets: an assignment.json with 1,000,000
# explicit entries (a third naming brokers that are gone), 1,000 brokers
# and 20,000 offset files, generated here. Times are the median of three
# runs (wall clock); peak memory is /usr/bin/time -v's maximum resident set.
set -eu
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/kaasctl}
if ! command -v jq >/dev/null 2>&1 || [ ! -x /usr/bin/time ]; then
  echo "bench-scale: needs jq and /usr/bin/time (GNU time); skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd_="$tmp/data/__cluster"
mkdir -p "$cd_/__consumer_offsets"
awk 'BEGIN {
  printf "{\"controllerEpoch\":3,\"assignmentVersion\":42,\"generatedAt\":\"2026-11-30T00:00:00Z\",\"controller\":\"kaas-0\",\"brokers\":["
  for (b = 0; b < 1000; b++) printf "%s{\"id\":\"kaas-%d\",\"health\":\"alive\",\"lastSeen\":\"2026-11-30T00:00:00Z\"}", (b ? "," : ""), b
  printf "],\"partitions\":[{\"topic\":\"orders\",\"partition\":0,\"broker\":\"kaas-0\",\"epoch\":1,\"role\":\"leader\"}],\"consumerGroups\":["
  for (i = 0; i < 1000000; i++) {
    if (i % 3 == 0) br = "kaas-gone-" (i % 500); else br = "kaas-" (i % 1000)
    printf "%s{\"groupId\":\"group-%07d\",\"broker\":\"%s\",\"epoch\":1}", (i ? "," : ""), i, br
  }
  print "]}"
}' > "$cd_/assignment.json"
awk -v d="$cd_/__consumer_offsets" 'BEGIN {
  for (i = 0; i < 20000; i++) {
    f = sprintf("%s/group-%07d.json", d, i * 50)
    printf "{\"offsets\":{\"orders/0\":%d,\"orders/1\":%d}}", i, i > f
    close(f)
  }
}'

# run NAME CMD...: three runs; sets <NAME>_s (median wall seconds) and
# <NAME>_mb (largest peak RSS, MB); stderr of the last run in $tmp/NAME.err.
run() {
  name=$1; shift
  for i in 1 2 3; do
    /usr/bin/time -v -o "$tmp/$name.time.$i" "$@" > /dev/null 2> "$tmp/$name.err" || true
  done
  s=$(for i in 1 2 3; do awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); t = 0; for (j = 1; j <= n; j++) t = t * 60 + p[j]; print t }' "$tmp/$name.time.$i"; done | sort -n | sed -n 2p)
  mb=$(for i in 1 2 3; do awk -F': ' '/Maximum resident set size/ { print int($2 / 1024) }' "$tmp/$name.time.$i"; done | sort -n | tail -1)
  eval "${name}_s=$s ${name}_mb=$mb"
}

run jq jq -e . "$cd_/assignment.json"
run whois "$BIN" whois --data-dir "$tmp/data" group-0000003
# Without the soft memory limit kaasctl sets for itself: the list must
# stay small because it streams, not because the collector is pushed.
run list env GOMEMLIMIT=off "$BIN" groups list --data-dir "$tmp/data" -o jsonl
whois_lines=$(wc -l < "$tmp/whois.err")
list_lines=$(wc -l < "$tmp/list.err")

echo "== scale: 1,000,000 explicit entries (a third on gone brokers), 1,000 brokers, 20,000 offset files"
echo "jq -e . assignment.json: ${jq_s} s, ${jq_mb} MB (the yardstick)"
awk -v w="$whois_s" -v j="$jq_s" -v m="$whois_mb" -v l="$whois_lines" 'BEGIN {
  printf "whois of one key: %.2f s = %.2f x jq (target <= 0.5 x), %d MB (target < 256 MB), %d stderr lines (target <= 20)\n", w, w / j, m, l }'
awk -v w="$list_s" -v j="$jq_s" -v m="$list_mb" -v l="$list_lines" 'BEGIN {
  printf "groups list -o jsonl (GOMEMLIMIT=off): %.2f s = %.2f x jq (target <= 0.8 x, issue 37), %d MB (target < 200 MB), %d stderr lines\n", w, w / j, m, l }'
