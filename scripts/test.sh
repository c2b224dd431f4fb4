#!/bin/sh
# The 'go test' step of 'make test': packages whose own code is concurrent
# (scripts/racepkgs says which and why) run under the race detector; the
# rest run without it, at the same time. Both must pass.
set -u
GO=${GO:-go}
lists=$($GO run ./scripts/racepkgs) || exit 1
race=$(printf '%s\n' "$lists" | sed -n 's/^race: *//p')
plain=$(printf '%s\n' "$lists" | sed -n 's/^plain: *//p')
count() { set -- $1; echo $#; }
start=$(date +%s)
echo "go test: $(count "$race") packages under -race (their own code is concurrent), $(count "$plain") without it, both at once."
echo "  About 1-1½ minutes on 2 cores with Go's caches warm (a fresh clone compiles first); commands, with its"
echo "  sandbox and Prometheus tests, is the longest. The -race packages print as each ends, the others when all did."
log=$(mktemp "${TMPDIR:-/tmp}/kaasctl-test-plain.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT INT TERM
# The plain packages' tests mostly wait (the sandbox's timeouts, prometheus's
# evaluations, windows of observations): four at a time, not GOMAXPROCS.
# shellcheck disable=SC2086 # the lists are space-separated import paths
$GO test -count=1 -parallel 4 -timeout 20m $plain >"$log" 2>&1 &
pid=$!
# shellcheck disable=SC2086
$GO test -race -count=1 -timeout 20m $race
rc=$?
wait "$pid"
prc=$?
echo "-- without -race (no goroutine, sync or fsnotify in the package's own code):"
cat "$log"
echo "go test: done in $(( $(date +%s) - start ))s"
[ "$rc" -eq 0 ] && [ "$prc" -eq 0 ]
