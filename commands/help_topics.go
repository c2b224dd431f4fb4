package commands

import "github.com/kaasctl/kaasctl/internal/when"

func init() {
	addHelpTopic("routing", "how kaas picks a group's coordinator (the two tiers, worked example)", routingHelpText)
	addHelpTopic("volume", "the kaas shared volume layout kaasctl reads", volumeHelpText)
	addHelpTopic("durations", "the one grammar of every time, duration and size flag", durationsHelpText)
}

// durationsHelpText is 'kaasctl help durations'.
const durationsHelpText = `
Times, durations and sizes: one grammar on every flag

A duration (--interval, --window, --journal-max-age, --drain-window, --timeout, ...):
  ` + when.DurationForms + `
  90s  15m  1h30m  2d  1w  500ms  PT1H  P1DT12H   (0 where a flag says it means "off")

A time (--since, --until, --to-datetime, --to-history, --history-since, --now):
  ` + when.TimeForms + `
  2026-11-29T03:00:00Z  2026-11-29T03:00:00+01:00  2026-11-29  1764385200  90m  1d
  A time without a zone is read as UTC, as kafka-consumer-groups.sh reads it (a note says so).

A size (--journal-max-bytes):
  ` + when.SizeForms + `
`

// routingHelpText is 'kaasctl help routing'.
const routingHelpText = `
How kaas routes a consumer group to its coordinator

Tier 1, explicit: assignment.json's consumerGroups[] may hold {"groupId","broker","epoch"}.
The FIRST entry for the group wins, whatever the named broker's health — even if it is dead
or not listed at all (then every broker answers NOT_COORDINATOR until the controller's next
recompute, which usually retires the entry).

Tier 2, hash: otherwise
  ids   = brokers[].id sorted lexicographically   (so kaas-10 sorts before kaas-2)
  slot  = fnv1a32(group) % len(ids)               (FNV-1a 32 over the UTF-8 bytes)
  if ids[slot] is "alive": it coordinates                              -> tier "hash"
  else alive = the alive ids in the same order; alive[slot % len(alive)] -> tier "hash-fallback"
  no alive broker: nobody coordinates (COORDINATOR_NOT_AVAILABLE)      -> tier "none"

Transactional ids use tier 2 only, and live in txn_state/slot-<fnv1a32(id) % 50>.json.

Worked example: brokers kaas-0, kaas-1, kaas-2 (all alive), group "orders-app", no entry.
  fnv1a32("orders-app") = 0x2cf824e6 = 754459878; 754459878 % 3 = 0; ids[0] = kaas-0.
  If kaas-0 dies and the controller drops it, the divisor becomes 2: 754459878 % 2 = 0, and
  ids = [kaas-1, kaas-2], so the group moves to kaas-1. If kaas-0 stayed listed as dead, the
  fallback would pick alive[0 % 2] = kaas-1 as well — but other groups would not move.
  kaasctl whois shows every step:  kaasctl whois --data-dir /data -o wide orders-app

What moves groups in practice:
  - today's controller lists only ALIVE brokers, so every broker join or leave changes the
    divisor and moves most hash-routed groups (and every transactional id) at once;
  - the controller places explicit entries with a different hash (rendezvous) than the
    routing tier, so a group's first entry often moves it (one rebalance), and retiring the
    entry moves it back;
  - an entry naming a dead broker blocks the group until the next recompute.

Ask "what if": kaasctl whois --what-if-down kaas-1 ...      (the controller drops kaas-1)
               kaasctl whois --what-if-down kaas-1 --placement rendezvous ...
                   (and re-places the groups still active, as today's controller does:
                    groups on kaas-1 lose their entry and fall back to the hash tier)
               kaasctl whois --what-if-down kaas-1 --keep-listed ...   (a stable divisor)
`

// volumeHelpText is 'kaasctl help volume'.
const volumeHelpText = `
The kaas shared volume

DATA is the broker data dir (KAAS_DATA_DIR, /data in the chart). The cluster dir CD is
KAAS_CLUSTER_DIR when set, else DATA/__cluster. With the chart's split control-plane volume,
CD is the mount itself (e.g. /cluster) and holds assignment.json directly.

kaasctl finds CD from --cluster-dir, KAAS_CLUSTER_DIR, --data-dir/KAAS_DATA_DIR + __cluster,
or a --data-dir that holds assignment.json directly (a copied snapshot works too).

  CD/assignment.json                     the controller's assignment: brokers and health,
                                         partition leaders, explicit consumer-group entries
  CD/__consumer_offsets/<group>.json     committed offsets of one group (Rust 0.2.16 and later):
                                         {"offsets":{"topic/partition":next},"metadata":{...}}
  DATA/__consumer_offsets/<group>.json   the same for the Go flavour and Rust <= 0.2.15 (their
                                         LIVE dir); legacy on 0.2.18, whose operator deletes it
  CD/txn_state/slot-<n>.json             transactions, n = fnv1a32(transactional.id) % 50
  CD/producer_fences/from-<broker>.json  producer epoch fences
  CD/marker_queue/to-<broker>/*.json     pending transaction markers
  CD/producer_ids/kaas-<N>.json          producer id blocks
  DATA/<topic>/<partition>/*.log,.index the partition log: offline log start and end, as kaas
                                         recovers them on restart (offline lag)
  DATA/<topic>/<partition>/manifest.json {"epoch","highWatermark","logStartOffset"}: rewritten only on
                                         takeover, roll and close; a labelled fallback for the log
                                         end when the segments cannot be read
  *.tmp                                  an interrupted or in-flight atomic write

Group ids are used raw as file names: "a/b", "../x", absolute ids and ids over 246 bytes
break on the broker side, and kaasctl reports them.

Generations. What is live, legacy or a hazard depends on which kaas wrote the volume:

                           Go / Rust <= 0.2.15     Rust 0.2.16-0.2.17        Rust 0.2.18
  live offsets dir         DATA/__consumer_offsets CD/__consumer_offsets     CD/__consumer_offsets
  plain map {"t/0":12}     offsets                 offsets (v1 fallback)     read as EMPTY (hazard)
  DATA/__consumer_offsets  live                    migrated by the broker    legacy: the operator deletes it

kaasctl detects the generation from which offsets dir holds group files (DATA/ only: Go; CD/
only: Rust >= 0.2.16, where 0.2.16-0.2.17 and 0.2.18 look the same, so plain maps are reported
as "EMPTY only on 0.2.18" and not converted). Both dirs holding files is ambiguous: one finding
names both dirs and their groups, and kaasctl reads both but writes, repairs and migrates nothing
across them. A data dir and cluster dir that are one directory (any spelling: relative, a link,
the chart's KAAS_DATA_DIR equal to the cluster dir) have one offsets dir, live under every
generation. Pin the version the brokers run when detection cannot tell, or to be sure:
--kaas-version go|0.1.190|0.2.15|0.2.16|0.2.17|0.2.18 (or auto), KAASCTL_KAAS_VERSION, or
kaasVersion in a profile ('kaasctl config set-profile NAME --kaas-version 0.2.18'); a pin wins
over detection. Every offline view names the generation it assumed and why (the sources line,
volume check's first line, "generation" in the JSON). Reads, offset resets and deletes use the
generation's live dir; 'volume repair' fixes only what is broken in the volume's own generation;
moving a Go-generation live dir into CD for 0.2.18 is 'kaasctl volume migrate --to 0.2.18', an
explicit upgrade step taken with the old brokers stopped.

kaasctl never writes assignment.json and never creates directories at the data-dir root (the
kaas operator deletes unknown ones). Its backups sit beside the file they protect
(<file>.kaasctl-bak-<time>, same owner and mode as the file; names over 255 bytes are
shortened to the first bytes + "~" + 16 hex digits of SHA-256 of the file name); each write
keeps the last 10 per file (--keep-backups N, KAASCTL_KEEP_BACKUPS; 0 keeps all). Rewritten
files keep their owner and mode. volume repair moves files into
CD/.kaasctl-quarantine/<time>-<random>/, created fresh by each run.

kaasctl reads regular files only, at most 256 MiB each: a FIFO, device, socket or link where
a state file should be is reported by name, never read. Its writes never go through a
symbolic link inside the volume (a linked __consumer_offsets or <group>.json is refused and
reported by volume check) unless the writing command gets --follow-symlinks.
`
