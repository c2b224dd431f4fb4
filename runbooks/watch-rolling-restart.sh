#!/usr/bin/env bash
# Watch a rolling restart: every coordinator move as it happens, then a
# per-group summary of how often each group moved.
#
#   runbooks/watch-rolling-restart.sh JOURNAL_DIR DURATION
#
# Start it before the restart (DURATION like 10m covers it). Moves stream on
# stdout as JSON lines while it runs; every assignment version is kept in
# JOURNAL_DIR (keep it off the data-dir root), so the timeline can be
# rebuilt later with 'kaasctl takeover trace --journal JOURNAL_DIR'. At the
# end the summary (one JSON object per moved group: moves, causes) follows.
# Exit 0 when no group moved more than once per restarted broker, else 3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

[ $# -eq 2 ] || die "usage: $0 JOURNAL_DIR DURATION"
journal=$1 duration=$2
mkdir -p "$journal"

say "watching assignment.json for $duration (journal: $journal)"
kctl watch --journal "$journal" --timeout "$duration" -o jsonl |
  jq -c '{event: "move", time, group, from, to, cause, assignmentVersion}'

trace=$(kctl takeover trace --journal "$journal" --no-live -o json)
restarted=$(printf '%s' "$trace" | jq '[.versions[]? | .left[]?] | unique | length')
summary=$(printf '%s' "$trace" |
  jq -c '[.events[]?] | group_by(.group)[] | {group: .[0].group, moves: length, causes: ([.[].cause] | unique)}')
[ -z "$summary" ] || printf '%s\n' "$summary"
worst=0
[ -z "$summary" ] || worst=$(printf '%s\n' "$summary" | jq -s 'map(.moves) | max')
say "versions seen: $(printf '%s' "$trace" | jq '[.versions[]?] | length'); brokers that left: $restarted; most moves of one group: $worst"
limit=$(( restarted > 0 ? 2 * restarted : 0 ))
[ "$worst" -le "$limit" ] || exit 3
