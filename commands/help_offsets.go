package commands

func init() {
	describeParent("offsets", `Both commands plan first and write only with --execute, through one safe path: refuse
groups that are not Empty or Dead, back up, commit the group's FULL set of offsets to its
coordinator (or, offline and for deletes, rewrite the offset file atomically), then verify
in the file and over the wire. See docs/offsets-writes.md.

Coming from kafka-consumer-groups.sh --reset-offsets
  The same command line works:
    kaasctl offsets reset --bootstrap-server HOST:9092 --command-config client.properties \
      --timeout 30000 --data-dir /data --group G --all-topics --to-datetime 2026-11-29T03:00:00.000 --execute
  Same as Kafka: every reset spec (--to-earliest, --to-latest, --to-current, --to-offset,
  --shift-by, --to-datetime, --by-duration, --from-file) and scope (--all-topics, --topic T,
  --topic T:0,2), --group repeated or --all-groups, --export and its two CSV layouts, the
  clamping to [log start, log end] with Kafka's warnings, and Kafka's error messages.
  A datetime without a zone is UTC; --by-duration -PT30M is the future (log end), as in Java.
  Per group as in Kafka: a group that is not inactive is refused (one error line each) and
  the others are reset; a group with nothing to plan is skipped ("No reset plan for group X
  found"); --export lists only what would be written, 4 columns whenever several groups are
  in play; --from-file ignores --topic/--all-topics (with a warning); a topic,partition,offset
  file with several groups applies to none (kaasctl refuses it, exit 2).
  --command-config reads security.protocol, sasl.mechanism, sasl.jaas.config (PLAIN,
  SCRAM-SHA-256/512), ssl.truststore.*/ssl.keystore.* of type PEM and request.timeout.ms;
  JKS/PKCS12 stores, GSSAPI, OAUTHBEARER, inline PEM and encrypted keys are refused by name.
  --timeout takes milliseconds as in Kafka (5000), or a duration with a unit (5s).

  Deliberate differences:
  - dry-run is the default (as Kafka's), and --dry-run/--execute are the same flags, but
    kaasctl prints a richer table: CURRENT, NEW, LOG-START, LOG-END, NOTES, and a RESULT per
    partition after --execute (OK only when the file and OffsetFetch both hold the offset);
  - exit codes: 4 when any group was refused (the other groups were still written), 1 when
    a group cannot be planned or a partition did not verify, 3 when a deleted offset is still
    served from a broker's cache, 2 for usage errors; Kafka exits 0 after printing errors;
  - kaasctl needs the volume (--data-dir) with --bootstrap-server: kaas rewrites a group's
    file with exactly the partitions a commit names, so a safe reset commits the full set,
    which only the file holds;
  - a --to-datetime/--by-duration answer is checked against the records (kaas's Go
    flavour answers offset 0 for every time, its Rust broker -1); a contradiction is refused
    with evidence;
  - extras: --to-group SRC copies another group's offsets, --offline writes the files when
    every broker is down.`)
}
