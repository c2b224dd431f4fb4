#!/usr/bin/env bash
# Reset a consumer group's offsets the safe way: stop check, dry-run,
# export (the plan and a rollback plan), execute the reviewed plan, verify.
#
#   runbooks/safe-reset.sh GROUP RESET-FLAGS...
#   e.g. runbooks/safe-reset.sh orders-app --topic orders --to-earliest
#        runbooks/safe-reset.sh billing --all-topics --by-duration PT2H
#
# RUNBOOK_DIR (default: a new temp dir) keeps plan.csv and rollback.csv;
# set RUNBOOK_YES=1 to execute without the confirmation prompt (scripts).
# Exit 0 reset and verified; 4 the group is active (nothing written);
# 1 anything else failed; 2 usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

[ $# -ge 2 ] || { say "usage: $0 GROUP RESET-FLAGS..."; exit 2; }
group=$1; shift
dir=${RUNBOOK_DIR:-$(mktemp -d)}
mkdir -p "$dir"

# 1. Stop check and dry-run: kaasctl refuses (exit 4) unless the group is Empty or Dead.
say "1/5 dry-run for $group"
set +e
plan=$(kctl offsets reset --group "$group" "$@" -o json)
rc=$?
set -e
if [ $rc -eq 4 ]; then
  state=$(printf '%s' "$plan" | jq -r '.groups[0].state // "unknown"')
  say "group $group is $state: stop its consumers first (nothing was written)"
  exit 4
fi
[ $rc -eq 0 ] || die "dry-run failed (exit $rc)"
errors=$(printf '%s' "$plan" | jq '.summary.errors')
[ "$errors" -eq 0 ] || die "the plan has $errors partition(s) that cannot be reset; see: kaasctl offsets reset --group $group $*"
printf '%s' "$plan" | jq -r '.groups[].rows[] | "   \(.topic)-\(.partition): \(.current // "none") -> \(.new)"' >&2

# 2. Export the plan and a rollback plan (today's offsets).
say "2/5 plan: $dir/plan.csv   rollback: $dir/rollback.csv"
kctl offsets reset --group "$group" "$@" --export > "$dir/plan.csv"
kctl offsets reset --group "$group" --all-topics --to-current --export > "$dir/rollback.csv"

# 3. Confirm.
if [ "${RUNBOOK_YES:-}" != 1 ]; then
  read -r -p "execute this plan for $group? [y/N] " answer
  [ "$answer" = y ] || [ "$answer" = Y ] || { say "not executed"; exit 1; }
fi

# 4. Execute exactly the reviewed plan.
say "4/5 executing"
result=$(kctl offsets reset --group "$group" --from-file "$dir/plan.csv" --execute -o json)

# 5. Verify: every partition OK (UNCHANGED: the group already held the
# plan's offsets, nothing was written).
bad=$(printf '%s' "$result" | jq '[.groups[].rows[] | select(.result != "OK" and .result != "UNCHANGED")] | length')
ok=$(printf '%s' "$result" | jq '[.groups[].rows[] | select(.result == "OK")] | length')
printf '%s\n' "$result" | jq -c '.groups[].rows[] | {group: "'"$group"'", topic, partition, new, result}'
if [ "$bad" -ne 0 ]; then
  die "5/5 $bad partition(s) not verified; roll back with: kaasctl offsets reset --group $group --from-file $dir/rollback.csv --execute"
fi
say "5/5 verified $ok partition(s) in the offset file and over the wire"
say "roll back with: kaasctl offsets reset --group $group --from-file $dir/rollback.csv --execute"
