#!/bin/sh
# The exporter at 100,000 file-only groups (issue 24): one offline refresh,
# no cap ('kaasctl exporter --once --max-groups 0'), beside cat reading the
# same 100,000 offset files. Data is generated here (12 alive brokers, no
# consumerGroups in assignment.json, 4 partitions per group) and removed on
# exit. GOMEMLIMIT=off, so the soft memory limit does not do the work. On a
# shared machine wall time counts waiting for a core: the comparison is in
# CPU seconds (user + sys) from /usr/bin/time -v (wall time beside it).
set -eu
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/kaasctl}
if [ ! -x /usr/bin/time ]; then
  echo "bench-exporter: needs /usr/bin/time (GNU time); skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd_="$tmp/data/__cluster"
mkdir -p "$cd_/__consumer_offsets"
awk 'BEGIN {
  printf "{\"controllerEpoch\":1,\"assignmentVersion\":1,\"controller\":\"kaas-0\",\"brokers\":["
  for (b = 0; b < 12; b++) printf "%s{\"id\":\"kaas-%d\",\"health\":\"alive\"}", (b ? "," : ""), b
  print "],\"partitions\":[]}"
}' > "$cd_/assignment.json"
awk -v d="$cd_/__consumer_offsets" 'BEGIN {
  for (i = 0; i < 100000; i++) {
    f = sprintf("%s/svc-%06d.json", d, i)
    n = i % 1000
    printf "{\"offsets\":{\"orders/0\":%d,\"orders/1\":%d,\"orders/2\":%d,\"events/0\":%d},\"metadata\":{}}", n, n, n, n > f
    close(f)
  }
}'

# The two commands run in turn, cat then the exporter, RUNS times (default
# 5), so a machine that slows down slows both alike; each run's user+sys
# CPU, wall and peak RSS come from /usr/bin/time -v. The figures are the
# medians, and the ratio is the median of the pair-by-pair CPU ratios.
RUNS=${RUNS:-5}
# measure NAME I CMD...: run I of NAME, its figures appended to NAME.{cpu,s,mb}.
measure() {
  name=$1 i=$2; shift 2
  /usr/bin/time -v -o "$tmp/time" sh -c '"$@" > "$OUT"' sh "$@" 2> "$tmp/$name.err" || true
  awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { print u + s }' "$tmp/time" >> "$tmp/$name.cpu"
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); t = 0; for (j = 1; j <= n; j++) t = t * 60 + p[j]; print t }' "$tmp/time" >> "$tmp/$name.s"
  awk -F': ' '/Maximum resident set size/ { print int($2 / 1024) }' "$tmp/time" >> "$tmp/$name.mb"
}
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
i=0
while [ $i -lt "$RUNS" ]; do
  OUT=/dev/null measure cat $i sh -c 'find "$1" -name "*.json" -print0 | xargs -0 cat' sh "$cd_/__consumer_offsets"
  OUT="$tmp/page" measure exp $i env GOMEMLIMIT=off "$BIN" exporter --data-dir "$tmp/data" --once --max-groups 0
  i=$((i + 1))
done
paste "$tmp/exp.cpu" "$tmp/cat.cpu" | awk '{ print $1 / $2 }' > "$tmp/ratio"
cat_cpu=$(median "$tmp/cat.cpu") cat_s=$(median "$tmp/cat.s")
exp_cpu=$(median "$tmp/exp.cpu") exp_s=$(median "$tmp/exp.s") ratio=$(median "$tmp/ratio")
exp_mb=$(sort -n "$tmp/exp.mb" | tail -1)
page=$(wc -c < "$tmp/page")
series=$(grep -vc '^#' "$tmp/page" || true)

echo "== exporter: 100,000 file-only groups, 12 brokers, --once --max-groups 0 (GOMEMLIMIT=off)"
awk -v c="$cat_cpu" -v cs="$cat_s" -v r="$RUNS" 'BEGIN { printf "cat of the 100,000 offset files: %.2f s CPU (user+sys), %.2f s wall (the yardstick; medians of %d runs, in turn with the exporter)\n", c, cs, r }'
awk -v e="$exp_cpu" -v es="$exp_s" -v cs="$cat_s" -v q="$ratio" -v m="$exp_mb" -v p="$page" -v n="$series" 'BEGIN {
  printf "one refresh: %.2f s CPU = %.2f x cat (median of the pairs; target <= 1 x), %.2f s wall = %.2f x cat; peak RSS %d MB (target < 300 MB); page %.1f MB (target < 40 MB), %d series\n", e, q, es, es / cs, m, p / 1048576, n }'
