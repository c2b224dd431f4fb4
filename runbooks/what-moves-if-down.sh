#!/usr/bin/env bash
# What moves if a broker is drained or dies?
#
#   runbooks/what-moves-if-down.sh [--keep-listed] [--placement rendezvous|hash] BROKER [BROKER...]
#
# Lists every known group (offset files, explicit entries, live listings)
# whose coordinator changes when BROKER leaves the assignment, with where it
# goes. Today's kaas controller drops a dead broker from brokers[], which
# changes the hash divisor and moves most hash-routed groups; --keep-listed
# shows the stable-divisor design instead. --placement rendezvous models what
# today's controller does for groups that are active at the recompute (it
# gives them an explicit entry by its own hash). Output: one JSON object per moving
# group on stdout, a summary on stderr. Exit 0 (nothing moves) or 3 (moves).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

keep=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep-listed) keep+=(--keep-listed); shift ;;
    --placement) [ $# -ge 2 ] || die "--placement needs rendezvous or hash"; keep+=(--placement "$2"); shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || die "usage: $0 [--keep-listed] BROKER [BROKER...]"
down=$(IFS=,; echo "$*")

groups=$(kctl groups list -o json | jq -r '.groups[].group')
[ -n "$groups" ] || { say "no groups known on this volume"; exit 0; }

moves=$(printf '%s\n' "$groups" |
  kctl whois --stdin --what-if-down "$down" "${keep[@]}" -o jsonl |
  jq -c 'select(.moves) | {group: .key, from: .currentCoordinator, to: .coordinator, tier: .tier}')

total=$(printf '%s\n' "$groups" | wc -l)
n=0
[ -z "$moves" ] || n=$(printf '%s\n' "$moves" | wc -l)
[ -z "$moves" ] || printf '%s\n' "$moves"
say "$n of $total groups move if $down goes down${keep:+ (${keep[*]})}"
[ "$n" -eq 0 ] || exit 3
