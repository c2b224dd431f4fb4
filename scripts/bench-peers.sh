#!/bin/sh
# kaasctl beside rpk and kcl on a 10,000-group sandbox: whole-process wall
# and CPU medians (RUNS=7 runs each, interleaved: kaasctl, rpk, kcl in each
# round), and the ratio to the faster peer beside the target. The peers are not part of kaasctl: build them from their public
# repositories and name them with RPK=/path/to/rpk KCL=/path/to/kcl; without
# them this section says so and is skipped. PEER_GROUPS=100000 races 100,000.
set -eu
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/kaasctl}
GO=${GO:-go}
N=${PEER_GROUPS:-10000}
if [ -z "${RPK:-}" ] || [ -z "${KCL:-}" ] || [ ! -x "${RPK:-}" ] || [ ! -x "${KCL:-}" ]; then
  echo "bench-peers: set RPK and KCL to rpk and kcl binaries to race them; skipped"
  exit 0
fi
tmp=$(mktemp -d)
sbpid=""
cleanup() {
  [ -n "$sbpid" ] && kill "$sbpid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
mkfifo "$tmp/in"
"$BIN" sandbox --data-dir "$tmp/data" --demo < "$tmp/in" > "$tmp/sandbox.out" 2>&1 &
sbpid=$!
exec 3> "$tmp/in" # keeps the sandbox's stdin open
i=0
while [ ! -f "$tmp/data/.kaasctl-sandbox.json" ]; do
  i=$((i + 1))
  if [ $i -gt 600 ] || ! kill -0 "$sbpid" 2>/dev/null; then
    echo "bench-peers: the sandbox did not start:"; cat "$tmp/sandbox.out"; exit 1
  fi
  sleep 0.1
done
B=$(sed -n 's/.*"bootstrap": "\([^,"]*\).*/\1/p' "$tmp/data/.kaasctl-sandbox.json")
$GO run ./scripts/seedgroups -b "$B" -n "$N" -topic orders
printf 'seed_brokers = ["%s"]\n' "$B" > "$tmp/kcl.toml"

# race NAME TARGET A... -- PEER1... [-- PEER2...]: one warm-up each, then
# RUNS rounds (default 7) running A and every peer in turn inside each
# round, so a machine that slows down slows all of them alike. Prints each
# command's whole-process wall and CPU (user+sys) medians (exit codes are
# not judged: rpk exits 1 when a group has no lag to show), then A's ratio
# to the fastest peer (by wall median) beside the target. Each round also
# times 'true' through the same wrapper (date, time, sh: about 7 ms on the
# 2-core machine), and that median is taken off every figure, so a fast
# command is not charged the harness's own cost.
race() {
  name=$1 target=$2; shift 2
  n=0; cmd0="" cmd1="" cmd2="" cmd3="" cmd4=""
  while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then n=$((n + 1)); shift; continue; fi
    eval "cmd$n=\"\${cmd$n:-} $1\""; shift
  done
  runs=${RUNS:-7}; mid=$(( (runs + 1) / 2 ))
  k=0
  while [ $k -le $n ]; do
    eval "c=\$cmd$k"; sh -c "$c" > /dev/null 2>&1 || true; : > "$tmp/t$k"; k=$((k + 1))
  done
  : > "$tmp/tbase"
  r=0
  while [ $r -lt "$runs" ]; do
    k=0
    while [ $k -le $n ]; do
      eval "c=\$cmd$k"
      timed "$c" >> "$tmp/t$k"
      k=$((k + 1))
    done
    timed true >> "$tmp/tbase"
    r=$((r + 1))
  done
  wb=$(awk '{print $1}' "$tmp/tbase" | sort -n | sed -n ${mid}p)
  ub=$(awk '{print $2 + $3}' "$tmp/tbase" | sort -n | sed -n ${mid}p)
  k=0
  while [ $k -le $n ]; do
    eval "w$k=\$(awk -v b=$wb '{print \$1 - b}' \"$tmp/t$k\" | sort -n | sed -n ${mid}p)"
    eval "u$k=\$(awk -v b=$ub '{print \$2 + \$3 - b}' \"$tmp/t$k\" | sort -n | sed -n ${mid}p)"
    k=$((k + 1))
  done
  best=1; k=2
  while [ $k -le $n ]; do
    if awk -v a="$(eval echo \$w$k)" -v b="$(eval echo \$w$best)" 'BEGIN { exit !(a < b) }'; then best=$k; fi
    k=$((k + 1))
  done
  k=1
  while [ $k -le $n ]; do
    eval "c=\$cmd$k"
    awk -v c="$(echo $c | sed 's/^env [^ ]* //' | cut -d' ' -f1-3)" -v w="$(eval echo \$w$k)" -v u="$(eval echo \$u$k)" 'BEGIN { printf "  peer %-40s wall %.3f s, cpu %.3f s\n", c, w, u }'
    k=$((k + 1))
  done
  awk -v n="$name" -v a="$w0" -v ac="$u0" -v b="$(eval echo \$w$best)" -v bc="$(eval echo \$u$best)" -v r="$runs" -v t="$target" -v base="$wb" \
    'BEGIN { printf "%s: kaasctl wall %.3f s, cpu %.3f s; fastest peer wall %.3f s, cpu %.3f s; ratio %.2f wall, %.2f cpu (target <= %s; medians of %d, interleaved, less the harness'"'"'s own %.3f s)\n", n, a, ac, b, bc, a / b, ac / bc, t, r, base }'
}
# timed CMD: one run's wall, user and sys seconds ("0.061 0.030 0.010").
timed() {
  s0=$(date +%s.%N)
  /usr/bin/time -q -f '%U %S' -o "$tmp/cpu" sh -c "$1 > /dev/null 2>&1" || true
  s1=$(date +%s.%N)
  echo "$(echo "$s1 - $s0" | awk '{ printf "%.4f", $1 - $3 }') $(cat "$tmp/cpu")"
}
echo "== peers: $N groups on a 3-broker sandbox (whole-process medians, runs interleaved)"
race "groups list vs the faster of rpk and kcl group list" 0.5 "$BIN" groups list -b "$B" -- "$RPK" group list -X brokers="$B" -- env KCL_CONFIG_PATH="$tmp/kcl.toml" "$KCL" group list
race "groups describe --all vs rpk group describe -r '.*'" 0.25 "$BIN" groups describe --all -b "$B" -- "$RPK" group describe -r "'.*'" -X brokers="$B"
