#!/usr/bin/env bash
# A group went backwards or lost partitions: find when, restore, verify.
#
#   runbooks/restore-group.sh GROUP JOURNAL_DIR [TIME]
#
# JOURNAL_DIR is what 'kaasctl watch --offsets --journal JOURNAL_DIR' has
# been recording. Without TIME the group goes back to its last good state
# before the most recent incident the journal holds (REWIND: a stale commit
# moved an offset back; VANISHED: a partial rewrite dropped partitions;
# anomalies with no good commit between them are one incident). An earlier
# incident, already restored, is left alone. With TIME, the group goes back
# to its state at that moment. The three kaasctl commands it runs:
#
#   1. kaasctl offsets history GROUP --journal JOURNAL_DIR             (find when)
#   2. kaasctl offsets reset --group GROUP --to-history-before-anomaly --journal JOURNAL_DIR
#                                                                      (dry-run: the plan)
#   3. kaasctl offsets reset --group GROUP --from-file plan.csv --execute --export-rollback rollback-TIME.csv
#                                                  (restore exactly the reviewed plan, and verify)
#
# Each anomaly is printed as one JSON line on stdout, then each restored
# partition with its result. RUNBOOK_DIR (default: a new temp dir) keeps
# plan.csv and one rollback-<UTC time>-<pid>.csv per restore (an earlier
# restore's rollback is never overwritten); RUNBOOK_YES=1 executes without
# the prompt.
# Exit 0 restored and verified (or nothing to restore); 4 the group is
# active (stop its consumers; nothing written); 1 anything else; 2 usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

[ $# -ge 2 ] && [ $# -le 3 ] || { say "usage: $0 GROUP JOURNAL_DIR [TIME]"; exit 2; }
group=$1 journal=$2 when=${3:-}
dir=${RUNBOOK_DIR:-$(mktemp -d)}
mkdir -p "$dir"

# 1. Find when: the anomalies kaasctl recorded for the group.
say "1/4 history of $group"
history=$(kctl offsets history "$group" --journal "$journal" -o json)
printf '%s' "$history" | jq -c '.anomalies[] | {event: "anomaly", time, kind, partition, before, after}'
count=$(printf '%s' "$history" | jq '.anomalies | length')
if [ -z "$when" ]; then
  if [ "$count" -eq 0 ]; then
    say "no anomaly recorded for $group: nothing to restore (give a TIME to go back to a moment)"
    exit 0
  fi
  spec=(--to-history-before-anomaly)
  say "   $count anomalies; the latest: $(printf '%s' "$history" | jq -r '.anomalies[-1] | "\(.kind) \(.partition // "") at \(.time)"') (restoring the state before the incident it ends)"
else
  spec=(--to-history "$when")
fi

# 2. The plan (dry-run): refused (exit 4) unless the group is Empty or Dead.
say "2/4 plan: offsets reset --group $group ${spec[*]}"
set +e
plan=$(kctl offsets reset --group "$group" "${spec[@]}" --journal "$journal" -o json)
rc=$?
set -e
if [ $rc -eq 4 ]; then
  say "group $group is $(printf '%s' "$plan" | jq -r '.groups[0].state // "active"'): stop its consumers first (nothing was written)"
  exit 4
fi
[ $rc -eq 0 ] || die "the plan failed (exit $rc)"
printf '%s' "$plan" | jq -r '.groups[].rows[] | "   \(.topic)/\(.partition): \(.current // "none") -> \(.new)"' >&2
kctl offsets reset --group "$group" "${spec[@]}" --journal "$journal" --export > "$dir/plan.csv"

# 3. Confirm.
if [ "${RUNBOOK_YES:-}" != 1 ]; then
  read -r -p "restore $group to this plan? [y/N] " answer
  [ "$answer" = y ] || [ "$answer" = Y ] || { say "not executed"; exit 1; }
fi

# 4. Restore the reviewed plan (a full-set commit through the coordinator),
# with the rollback exported first; kaasctl verifies every partition in the
# offset file and with OffsetFetch.
rollback="$dir/rollback-$(date -u +%Y%m%dT%H%M%SZ)-$$.csv"
say "3/4 restoring (plan: $dir/plan.csv, rollback: $rollback)"
set +e
result=$(kctl offsets reset --group "$group" --from-file "$dir/plan.csv" --execute --export-rollback "$rollback" -o json)
rc=$?
set -e
printf '%s' "$result" | jq -c '.groups[].rows[] | {event: "restored", group: "'"$group"'", topic, partition, new, result}'
# UNCHANGED: the group already held the plan's offsets (nothing written).
bad=$(printf '%s' "$result" | jq '[.groups[].rows[] | select(.result != "OK" and .result != "UNCHANGED")] | length')
if [ $rc -ne 0 ] || [ "$bad" -ne 0 ]; then
  die "4/4 $bad partition(s) not verified (exit $rc); roll back with: kaasctl offsets reset --group $group --from-file $rollback --execute"
fi
say "4/4 verified $(printf '%s' "$result" | jq '[.groups[].rows[] | select(.result == "OK")] | length') partition(s) in the offset file and over the wire"
say "roll back with: kaasctl offsets reset --group $group --from-file $rollback --execute"
