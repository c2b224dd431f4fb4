#!/bin/sh
# A served exporter's resident memory (issue 37): 'kaasctl exporter' run as
# a process on a volume of file-only groups generated here (4 partitions
# each, 12 alive brokers), its VmRSS read from /proc after REFRESHES
# refreshes (default 30) once its health window is full. The window holds
# as many observations as the defaults do (--window 5m at --interval 15s:
# 20), at a shorter interval so the run takes minutes: --interval 3s
# --window 60s at 10,000 groups, --interval 6s --window 120s at 100,000.
# The 100,000-group run is also one shard of 1,000,000 groups split ten
# ways (--shard over a volume of 1,000,000 holds what 100,000 do; the
# scan of the other 900,000 files is its extra cost, not measured here).
set -eu
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/kaasctl}
REFRESHES=${REFRESHES:-30}
if [ ! -r /proc/self/status ] || ! command -v curl >/dev/null 2>&1; then
  echo "bench-served: needs /proc and curl; skipped"
  exit 0
fi
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# volume N: a data dir of N groups in $tmp/vN.
volume() {
  cd_="$tmp/v$1/__cluster"
  mkdir -p "$cd_/__consumer_offsets"
  awk 'BEGIN {
    printf "{\"controllerEpoch\":1,\"assignmentVersion\":1,\"controller\":\"kaas-0\",\"brokers\":["
    for (b = 0; b < 12; b++) printf "%s{\"id\":\"kaas-%d\",\"health\":\"alive\"}", (b ? "," : ""), b
    print "],\"partitions\":[]}"
  }' > "$cd_/assignment.json"
  awk -v d="$cd_/__consumer_offsets" -v n="$1" 'BEGIN {
    for (i = 0; i < n; i++) {
      f = sprintf("%s/svc-%06d.json", d, i)
      o = i % 1000
      printf "{\"offsets\":{\"orders/0\":%d,\"orders/1\":%d,\"orders/2\":%d,\"events/0\":%d},\"metadata\":{}}", o, o, o, o > f
      close(f)
    }
  }'
}

# metric PAGE NAME: the value of an unlabelled sample.
metric() { awk -v n="$2" '$1 == n { print $2 }' "$1"; }

# served N INTERVAL WINDOW TARGET_MB: one served run, its figures printed.
served() {
  n=$1 interval=$2 window=$3 target=$4
  volume "$n"
  port=$((20000 + $$ % 10000))
  "$BIN" exporter --data-dir "$tmp/v$n" --listen "127.0.0.1:$port" --max-groups 0 --interval "$interval" --window "$window" 2> "$tmp/err" &
  pid=$!
  done=0 tries=0 peak=0
  while [ "$done" -lt "$REFRESHES" ]; do
    sleep 1
    tries=$((tries + 1))
    if ! kill -0 "$pid" 2>/dev/null || [ "$tries" -gt $((REFRESHES * 60)) ]; then
      echo "bench-served: the exporter at $n groups stopped or stalled:"; cat "$tmp/err"; exit 1
    fi
    curl -sf "http://127.0.0.1:$port/metrics" -o "$tmp/page" || continue
    done=$(metric "$tmp/page" kaas_exporter_refreshes_total | cut -d. -f1)
    done=${done:-0}
    rss=$(awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$pid/status")
    [ "$rss" -gt "$peak" ] && peak=$rss
  done
  rss=$(awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$pid/status")
  hwm=$(awk '/^VmHWM/ { print int($2 / 1024) }' "/proc/$pid/status")
  last=$(metric "$tmp/page" kaas_exporter_last_refresh_duration_seconds)
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  rm -rf "$tmp/v$n"
  awk -v n="$n" -v r="$REFRESHES" -v rss="$rss" -v hwm="$hwm" -v t="$target" -v l="$last" -v i="$interval" -v w="$window" 'BEGIN {
    printf "served, %d groups, --interval %s --window %s: VmRSS %d MB after %d refreshes (target < %d MB), VmHWM %d MB; last refresh %.2f s of its %s interval\n", n, i, w, rss, r, t, hwm, l, i }'
}

echo "== exporter served: resident memory once the window is full (issue 37)"
served 10000 3s 60s 60
served 100000 6s 120s 300
echo "(the 100,000-group run is the cost of one shard of 1,000,000 groups split ten ways)"
