#!/usr/bin/env bash
# Upgrade (or restart) every kaas broker with the fewest consumer-group
# rebalances: restart the brokers one at a time in the order plan restart
# found, check each assignment version against the plan as the controller
# writes it, and go on only once the moved groups are Stable again.
#
#   runbooks/upgrade-fewest-rebalances.sh RESTART_CMD [TIMEOUT]
#
# RESTART_CMD restarts one broker and returns once it serves again; {} is
# replaced by the broker id (shell-quoted), e.g. on Kubernetes
#   'kubectl -n kaas delete pod {} --wait && kubectl -n kaas wait --for=condition=Ready pod/{} --timeout=5m'
# (roll out the new image with the StatefulSet's updateStrategy OnDelete, so
# only this script restarts pods). TIMEOUT bounds the whole run (default 1h).
# A broker must stay down long enough for the groups its stop moved to
# re-join elsewhere (plan restart's stopToStartSeconds, 15 s: a broker back
# sooner leaves them without an entry, one more move each): give RESTART_CMD
# as "-" and STOP_CMD and START_CMD instead, and the script waits that long
# between them, once the controller has written the stop's version.
# Put --brokers in KAASCTL_ARGS: the plan then sees which groups are live and
# each step waits until the groups that moved are Stable on their new
# coordinator. PLAN_ARGS passes flags to plan restart only (--failover drop
# for a Go-flavour cluster, --placement hash, --brokers-order B1,B2,...).
# Each version checked is one JSON line on stdout. The follow runs with
# --keep-going: a version that deviates from the plan is reported, the plan is
# re-made from the version kaas wrote and the restart goes on. Exit 0: every
# broker restarted as planned; 3: some version deviated (see its line); 1: a
# restart command failed or TIMEOUT ran out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 RESTART_CMD|- [TIMEOUT]"
restart_cmd=$1 timeout=${2:-1h}
[ "$restart_cmd" != "-" ] || { [ -n "${STOP_CMD:-}" ] && [ -n "${START_CMD:-}" ]; } || die "RESTART_CMD - needs STOP_CMD and START_CMD"
plan_args=()
# shellcheck disable=SC2206
[ -z "${PLAN_ARGS:-}" ] || plan_args=(${PLAN_ARGS})

plan=$(kctl plan restart "${plan_args[@]}" -o json)
mapfile -t order < <(printf '%s' "$plan" | jq -r '(.given // .plan).order[]')
say "$(printf '%s' "$plan" | jq -r '(.given // .plan) as $o | "order: \($o.order | join(" → ")); \($o.score.moves) group moves (listed order \(.naive.score.moves), worst \(.worst.score.moves)); \(.search.method) search; controller failover model: \(.failover)"')"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Not through kctl (a function): $! must be kaasctl itself.
# shellcheck disable=SC2086
"$KAASCTL" plan restart --follow --keep-going "${plan_args[@]}" --follow-timeout "$timeout" -o jsonl ${KAASCTL_ARGS:-} >"$log" &
follower=$!
for _ in $(seq 300); do
  grep -q '"kind":"following"' "$log" && break
  kill -0 "$follower" 2>/dev/null || break
  sleep 0.1
done
grep -q '"kind":"following"' "$log" || { cat "$log" >&2; die "plan restart --follow did not start"; }

steps_done() { grep -c '"kind":"\(settled\|unsettled\)"' "$log" || true; }
stop_to_start=$(printf '%s' "$plan" | jq -r '.stopToStartSeconds // 0')
sub() { printf '%s' "${1//\{\}/$(printf '%q' "$2")}"; }
# restart_one B: RESTART_CMD, or STOP_CMD, the stop's version, the wait, START_CMD.
restart_one() {
  if [ "$restart_cmd" != "-" ]; then
    bash -c "$(sub "$restart_cmd" "$1")"
    return
  fi
  local seen stopped
  seen=$(grep -c '"kind":"waiting"' "$log" || true)
  stopped=$(date +%s)
  bash -c "$(sub "$STOP_CMD" "$1")" || return 1
  while kill -0 "$follower" 2>/dev/null && [ "$(grep -c '"kind":"waiting"' "$log" || true)" -le "$seen" ]; do sleep 0.2; done
  local left=$((stopped + stop_to_start - $(date +%s)))
  [ "$left" -le 0 ] || { say "waiting ${left}s before starting $1 (the groups its stop moved re-join elsewhere first)"; sleep "$left"; }
  bash -c "$(sub "$START_CMD" "$1")"
}
step=0 failed=0
for b in "${order[@]}"; do
  step=$((step + 1))
  kill -0 "$follower" 2>/dev/null || break # it stopped: a deviation, or the timeout
  say "step $step/${#order[@]}: restarting $b"
  if ! restart_one "$b"; then
    say "the restart command failed for $b: stopping here"
    failed=1
    break
  fi
  # The follow says when it is safe to go on (or stops on a deviation).
  while kill -0 "$follower" 2>/dev/null && [ "$(steps_done)" -lt "$step" ]; do sleep 0.2; done
  grep '"kind":"unsettled"' "$log" | tail -n 1 | jq -r '.message' >&2 || true
done
if [ "$failed" -eq 1 ]; then
  kill "$follower" 2>/dev/null || true
fi
rc=0
wait "$follower" || rc=$?
jq -c 'select(.kind == "version") | {step, version: .assignmentVersion, broker, event, asPlanned, deviations, moves: (.moves | length)}' "$log"
jq -r 'select(.kind == "done") | .message' "$log" >&2
[ "$failed" -eq 0 ] || exit 1
exit "$rc"
