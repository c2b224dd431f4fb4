#!/bin/sh
# The 'go test' step of 'make test': packages whose own code is concurrent
# (scripts/racepkgs says which and why) run under the race detector; the
# rest run without it, at the same time; and a third process runs, beside
# both, the tests that run apart (see "apart" below). All three must pass.
set -u
GO=${GO:-go}
lists=$($GO run ./scripts/racepkgs) || exit 1
race=$(printf '%s\n' "$lists" | sed -n 's/^race: *//p')
plain=$(printf '%s\n' "$lists" | sed -n 's/^plain: *//p')
count() { set -- $1; echo $#; }
start=$(date +%s)
echo "go test: $(count "$race") packages under -race (their own code is concurrent), $(count "$plain") without it, and"
echo "  the real-Prometheus scenarios and two single-goroutine tests in a process of their own, all at once."
echo "  About 1½ minutes on a shared 2-core machine with Go's caches warm (a fresh clone compiles first)."
echo "  The -race packages print as each ends, the others when all did."
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kaasctl-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
# Apart, in a process of their own:
# - commands' real-Prometheus scenarios (...WithPrometheus) wait on the
#   wall clock (scrapes, rule evaluations, health windows of seconds) with
#   an in-process exporter: the package's CPU-bound tests would delay its
#   refreshes past their deadline. They run beside each other (they use
#   little CPU), not GOMAXPROCS at a time.
# - two tests of packages under -race run without it: each runs its code
#   on the test's goroutine alone, so the detector has nothing to find,
#   and under it they took a third of the race run's CPU. exporter's
#   TestWindowGoldenRandom publishes 150 groups (evaluation splits over
#   the cores from 512; the other window goldens run the same code under
#   -race): 28 s of CPU, 3 without. inspect's
#   TestRestartSearchBoundedAtItsLimit runs the restart heuristic at 127
#   brokers (only the exhaustive search, up to 8, is concurrent; its tests
#   stay under -race): 15 s, 1.3 without.
prom='WithPrometheus$'
norace='^(TestWindowGoldenRandom|TestRestartSearchBoundedAtItsLimit)$'
# bg NAME CMD...: CMD in the background, its output in $tmp/NAME, its exit
# code in $tmp/NAME.rc and the second it ended in $tmp/NAME.end.
bg() {
	name=$1
	shift
	("$@" >"$tmp/$name" 2>&1; echo $? >"$tmp/$name.rc"; date +%s >"$tmp/$name.end") &
}
bg apart $GO test -count=1 -parallel 8 -timeout 20m -run "$prom|$norace" ./commands ./exporter ./inspect
# The plain packages' tests mostly wait (the sandbox's timeouts, windows of
# observations): four at a time, not GOMAXPROCS.
# shellcheck disable=SC2086 # the lists are space-separated import paths
bg plain $GO test -count=1 -parallel 4 -timeout 20m -skip "$prom" $plain
# shellcheck disable=SC2086
$GO test -race -count=1 -timeout 20m -skip "$norace" $race
rc=$?
raceend=$(date +%s)
wait
echo "-- without -race (no goroutine, sync or fsnotify in the package's own code):"
cat "$tmp/plain"
echo "-- apart (go test -run '$prom|$norace' ./commands ./exporter ./inspect):"
cat "$tmp/apart"
echo "go test: done in $(( $(date +%s) - start ))s (under -race $(( raceend - start ))s, without it $(( $(cat "$tmp/plain.end") - start ))s, apart $(( $(cat "$tmp/apart.end") - start ))s)"
[ "$rc" -eq 0 ] && [ "$(cat "$tmp/plain.rc")" -eq 0 ] && [ "$(cat "$tmp/apart.rc")" -eq 0 ]
