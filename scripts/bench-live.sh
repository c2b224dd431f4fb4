#!/bin/sh
# Live groups describe over 10,000 sandbox groups: time and requests per
# broker beside the SPEC target (the Go benchmark seeds the groups through
# the wire, then runs `kaasctl groups describe --all` in-process).
set -eu
cd "$(dirname "$0")/.."
GO=${GO:-go}
$GO test -run '^$' -bench '^BenchmarkLiveDescribeAll10k$' -benchtime 3x ./commands | awk '
/^BenchmarkLiveDescribeAll10k/ {
  for (i = 1; i <= NF; i++) {
    if ($(i) == "ns/op") t = $(i-1) / 1e9
    if ($(i) == "requests/op") r = $(i-1)
    if ($(i) == "requests-busiest-broker/op") b = $(i-1)
    if ($(i) == "cpu-s/op") c = $(i-1)
  }
  printf "groups describe --all, 10,000 groups, 3 brokers: %.2f s (SPEC target: < 2 s); %d requests in all, %d to the busiest broker (O(brokers), not O(groups)); %.2f CPU-s incl. the in-process sandbox\n", t, r, b, c
}'
