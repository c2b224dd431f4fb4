#!/usr/bin/env bash
# Find stale and file-only groups: the two ways kaas's in-memory group state
# and the volume drift apart.
#
#   runbooks/stale-and-file-only.sh        (needs brokers and the volume)
#
#   staleOnNonCoordinator  a broker still lists a group it no longer
#                          coordinates (a deleted group "reappears" in
#                          --list); fix: restart that broker
#   fileOnly               committed offsets on the volume, but no live group:
#                          invisible to ListGroups and OffsetFetch-all; fix:
#                          nothing if the group is retired, else keep the file
#                          (kaasctl offsets delete / volume repair to clean up)
#
# One JSON object per finding on stdout; exit 0 none, 3 some, 1 error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

view=$(kctl groups list --issues-only -o json)
[ "$(printf '%s' "$view" | jq -r '.sources.live')" = true ] ||
  die "no broker answered: stale groups need the live view (pass --brokers in KAASCTL_ARGS)"

found=$(printf '%s' "$view" | jq -c '
  .groups[] as $g
  | ($g.issues // [])[]
  | select(. == "staleOnNonCoordinator" or . == "fileOnly")
  | if . == "staleOnNonCoordinator" then
      {group: $g.group, issue: ., coordinator: $g.coordinator, listedBy: ($g.live.staleOn // []),
       fix: ("restart " + (($g.live.staleOn // []) | join(", ")) + " to drop the stale in-memory group")}
    else
      {group: $g.group, issue: ., coordinator: $g.coordinator, files: ($g.files // []),
       fix: "no live group: if it is retired, delete it with kaasctl offsets delete; else its consumers resume from this file"}
    end')
if [ -z "$found" ]; then
  say "no stale or file-only groups"
  exit 0
fi
printf '%s\n' "$found"
say "$(printf '%s\n' "$found" | jq -s 'map(select(.issue=="staleOnNonCoordinator")) | length') stale, $(printf '%s\n' "$found" | jq -s 'map(select(.issue=="fileOnly")) | length') file-only"
exit 3
