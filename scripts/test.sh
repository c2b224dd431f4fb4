#!/bin/sh
# The 'go test' step of 'make test': packages whose own code is concurrent
# (scripts/racepkgs says which and why) run under the race detector; the
# rest run without it, at the same time. Both must pass.
set -u
GO=${GO:-go}
lists=$($GO run ./scripts/racepkgs) || exit 1
race=$(printf '%s\n' "$lists" | sed -n 's/^race: *//p')
plain=$(printf '%s\n' "$lists" | sed -n 's/^plain: *//p')
log=$(mktemp "${TMPDIR:-/tmp}/kaasctl-test-plain.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT INT TERM
# shellcheck disable=SC2086 # the lists are space-separated import paths
$GO test -count=1 -timeout 20m $plain >"$log" 2>&1 &
pid=$!
# shellcheck disable=SC2086
$GO test -race -count=1 -timeout 20m $race
rc=$?
wait "$pid"
prc=$?
echo "-- without -race (no goroutine, sync or fsnotify in the package's own code):"
cat "$log"
[ "$rc" -eq 0 ] && [ "$prc" -eq 0 ]
