#!/bin/sh
# kaasctl beside rpk and kcl on a 10,000-group sandbox: whole-process wall
# medians of 5 runs each, run in turn (A B A B ...), and the ratio beside the
# target. The peers are not part of kaasctl: build them from their public
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

# race NAME TARGET A... -- B...: 5 alternating runs each after a warm-up;
# prints both medians and the ratio.
race() {
  name=$1 target=$2; shift 2
  a=""; while [ "$1" != "--" ]; do a="$a $1"; shift; done; shift
  b="$*"
  sh -c "$a" > /dev/null 2>&1 || true; sh -c "$b" > /dev/null 2>&1 || true
  : > "$tmp/a.t"; : > "$tmp/b.t"
  for k in 1 2 3 4 5; do
    /usr/bin/time -f %e -a -o "$tmp/a.t" sh -c "$a > /dev/null 2>&1"
    /usr/bin/time -f %e -a -o "$tmp/b.t" sh -c "$b > /dev/null 2>&1"
  done
  am=$(sort -n "$tmp/a.t" | sed -n 3p); bm=$(sort -n "$tmp/b.t" | sed -n 3p)
  awk -v n="$name" -v a="$am" -v b="$bm" -v t="$target" 'BEGIN { printf "%s: kaasctl %.3f s, peer %.3f s, ratio %.2f (target <= %s)\n", n, a, b, a / b, t }'
}
echo "== peers: $N groups on a 3-broker sandbox (wall medians of 5)"
race "groups list vs rpk group list" 0.5 "$BIN" groups list -b "$B" -- "$RPK" group list -X brokers="$B"
race "groups list vs kcl group list" 0.5 "$BIN" groups list -b "$B" -- env KCL_CONFIG_PATH="$tmp/kcl.toml" "$KCL" group list
race "groups describe --all vs rpk group describe -r '.*'" 0.25 "$BIN" groups describe --all -b "$B" -- "$RPK" group describe -r "'.*'" -X brokers="$B"
