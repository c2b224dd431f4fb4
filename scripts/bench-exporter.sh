#!/bin/sh
# The exporter at 100,000 file-only groups (issue 24): one offline refresh,
# no cap ('kaasctl exporter --once --max-groups 0'), beside cat reading the
# same 100,000 offset files. Data is generated here (12 alive brokers, no
# consumerGroups in assignment.json, 4 partitions per group) and removed on
# exit. GOMEMLIMIT=off, so the soft memory limit does not do the work. On a
# shared machine wall time counts waiting for a core: the comparison is in
# CPU seconds (user + sys) from /usr/bin/time -v, best of three runs.
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

# run NAME CMD...: three runs; sets <NAME>_cpu (least user+sys seconds),
# <NAME>_s (least wall seconds) and <NAME>_mb (largest peak RSS, MB).
run() {
  name=$1; shift
  for i in 1 2 3; do
    /usr/bin/time -v -o "$tmp/$name.time.$i" sh -c '"$@" > "$OUT"' sh "$@" 2> "$tmp/$name.err" || true
  done
  cpu=$(for i in 1 2 3; do awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { print u + s }' "$tmp/$name.time.$i"; done | sort -n | head -1)
  s=$(for i in 1 2 3; do awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); t = 0; for (j = 1; j <= n; j++) t = t * 60 + p[j]; print t }' "$tmp/$name.time.$i"; done | sort -n | head -1)
  mb=$(for i in 1 2 3; do awk -F': ' '/Maximum resident set size/ { print int($2 / 1024) }' "$tmp/$name.time.$i"; done | sort -n | tail -1)
  eval "${name}_cpu=$cpu ${name}_s=$s ${name}_mb=$mb"
}

OUT=/dev/null run cat sh -c 'find "$1" -name "*.json" -print0 | xargs -0 cat' sh "$cd_/__consumer_offsets"
OUT="$tmp/page" run exp env GOMEMLIMIT=off "$BIN" exporter --data-dir "$tmp/data" --once --max-groups 0
page=$(wc -c < "$tmp/page")
series=$(grep -vc '^#' "$tmp/page" || true)

echo "== exporter: 100,000 file-only groups, 12 brokers, --once --max-groups 0 (GOMEMLIMIT=off)"
awk -v c="$cat_cpu" -v cs="$cat_s" 'BEGIN { printf "cat of the 100,000 offset files: %.2f s CPU (user+sys), %.2f s wall (the yardstick)\n", c, cs }'
awk -v e="$exp_cpu" -v es="$exp_s" -v c="$cat_cpu" -v m="$exp_mb" -v p="$page" -v n="$series" 'BEGIN {
  printf "one refresh: %.2f s CPU = %.2f x cat (target <= 1 x), %.2f s wall; peak RSS %d MB (target < 300 MB); page %.1f MB (target < 40 MB), %d series\n", e, e / c, es, m, p / 1048576, n }'
