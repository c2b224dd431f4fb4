#!/usr/bin/env bash
# Follow a rolling restart against its plan: the broker order that moves the
# fewest consumer groups, each assignment version checked against what the
# plan predicted as soon as the controller writes it, every version kept.
#
#   runbooks/watch-rolling-restart.sh JOURNAL_DIR DURATION [BROKER,BROKER,...]
#
# Start it before the restart. It writes the plan beside the journal
# (JOURNAL_DIR.plan.json; the follow's own lines go to JOURNAL_DIR.follow.jsonl,
# its first line once it follows) and says the order to restart the brokers in (or
# follows the order given as the third argument); then restart them one at a
# time in that order and wait for each "settled" line before the next (with
# --brokers in KAASCTL_ARGS it checks that the moved groups are Stable again
# on their new coordinator). Each version streams on stdout as a JSON line
# (asPlanned, or the deviations); every assignment version is kept in
# JOURNAL_DIR for 'kaasctl takeover trace --journal JOURNAL_DIR'. At the end
# one summary line per moved group follows. PLAN_ARGS passes more flags to
# plan restart only (e.g. "--placement hash", "--failover drop").
# Exit 0: the restart completed as planned; 3: it deviated (a broker out of
# order, a group elsewhere than predicted); 1: DURATION ran out first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

[ $# -eq 2 ] || [ $# -eq 3 ] || die "usage: $0 JOURNAL_DIR DURATION [BROKER,BROKER,...]"
journal=${1%/} duration=$2
plan_args=()
# shellcheck disable=SC2206
[ -z "${PLAN_ARGS:-}" ] || plan_args=(${PLAN_ARGS})
[ $# -eq 2 ] || plan_args+=(--brokers-order "$3")
mkdir -p "$journal"

kctl plan restart "${plan_args[@]}" -o json >"$journal.plan.json"
say "$(jq -r '(.given // .plan) as $o | "restart in this order: \($o.order | join(" → ")) — \($o.score.moves) moves of groups with members (listed order: \(.naive.score.moves), worst: \(.worst.score.moves)); plan: '"$journal.plan.json"'"' "$journal.plan.json")"

# Not through kctl (a function): $! must be kaasctl itself, so the kill
# below ends it.
# shellcheck disable=SC2086
"$KAASCTL" watch --journal "$journal" --timeout "$duration" -o jsonl ${KAASCTL_ARGS:-} >/dev/null &
watcher=$!
rc=0
kctl plan restart --follow "${plan_args[@]}" --follow-timeout "$duration" -o jsonl |
  tee "$journal.follow.jsonl" |
  jq -c 'select(.kind != "following" and .kind != "waiting")
         | {event: .kind, step, version: .assignmentVersion, broker, expected, asPlanned, deviations, moves: (.moves | length), message}' || rc=$?
# Let the journal catch up with the last version the follow saw (at most
# 5 s), then end the watch.
last=$(jq -r 'select(.kind == "version") | "assignment-e\(.controllerEpoch // 0)-v\(.assignmentVersion).json"' "$journal.follow.jsonl" | tail -n 1)
for _ in $(seq 50); do
  [ -z "$last" ] || [ -e "$journal/$last" ] && break
  sleep 0.1
done
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true

trace=$(kctl takeover trace --journal "$journal" --no-live -o json)
summary=$(printf '%s' "$trace" |
  jq -c '[.events[]?] | group_by(.group)[] | {group: .[0].group, moves: length, causes: ([.[].cause] | unique)}')
[ -z "$summary" ] || printf '%s\n' "$summary"
case $rc in
  0) say "the restart completed as planned" ;;
  3) say "the restart deviated from the plan (see the deviations above)" ;;
  *) say "the restart did not complete within $duration" ;;
esac
exit "$rc"
