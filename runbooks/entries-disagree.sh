#!/usr/bin/env bash
# Which explicit consumerGroups[] entries disagree with the hash tier, or name
# a dead or unknown broker?
#
#   runbooks/entries-disagree.sh
#
# A disagreeing entry means the group moves (one rebalance) the day the
# controller retires the entry; an entry on a dead or unknown broker blocks
# the group now (every broker answers NOT_COORDINATOR). One JSON object per
# entry that needs attention on stdout; exit 3 when there is any.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
need

bad=$(kctl assignment diff -o json |
  jq -c '(.entries // [])[] | select(.status != "agrees") | {group, broker, status, hashSays: .hashCoordinator, note}')
if [ -z "$bad" ]; then
  say "every explicit entry agrees with the hash tier"
  exit 0
fi
printf '%s\n' "$bad"
say "$(printf '%s\n' "$bad" | wc -l) entries need attention (blocked groups first: status deadBroker/unknownBroker)"
exit 3
