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
# Put --brokers in KAASCTL_ARGS: the plan then sees which groups are live and
# each step waits until the groups that moved are Stable on their new
# coordinator. PLAN_ARGS passes flags to plan restart only (--failover drop
# for a Go-flavour cluster, --placement hash, --brokers-order B1,B2,...).
# Each version checked is one JSON line on stdout. Exit 0: every broker
# restarted as planned; 3: a version deviated from the plan (the run stops
# there: look, then re-plan); 1: a restart command failed or TIMEOUT ran out.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 RESTART_CMD [TIMEOUT]"
restart_cmd=$1 timeout=${2:-1h}
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
"$KAASCTL" plan restart --follow "${plan_args[@]}" --follow-timeout "$timeout" -o jsonl ${KAASCTL_ARGS:-} >"$log" &
follower=$!
for _ in $(seq 300); do
  grep -q '"kind":"following"' "$log" && break
  kill -0 "$follower" 2>/dev/null || break
  sleep 0.1
done
grep -q '"kind":"following"' "$log" || { cat "$log" >&2; die "plan restart --follow did not start"; }

steps_done() { grep -c '"kind":"\(settled\|unsettled\)"' "$log" || true; }
step=0 failed=0
for b in "${order[@]}"; do
  step=$((step + 1))
  kill -0 "$follower" 2>/dev/null || break # it stopped: a deviation, or the timeout
  say "step $step/${#order[@]}: restarting $b"
  if ! bash -c "${restart_cmd//\{\}/$(printf '%q' "$b")}"; then
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
