package commands

// The parent commands: their usage, and the common flags their help lists
// when a sub-command does not say (registry.go). Their descriptions are
// internal/helptext's commands/NAME.txt. A sub-command registers under its
// parent's path from its own file.
func init() {
	for _, d := range []Descriptor{
		{Path: "assignment", Usage: "inspect the controller's assignment.json: versions, brokers, load per broker, diffs", Common: fgAssignment},
		{Path: "config", Usage: "manage connection profiles in the kaasctl config file (list, use, show, set-profile, delete, path, check)"},
		{Path: "groups", Usage: "consumer groups: list, describe, health, habits and prune, from the volume and the brokers"},
		{Path: "offsets", Usage: "reset and delete committed offsets safely (dry-run by default)"},
		{Path: "plan", Usage: "plan before you touch: a rolling restart with the fewest group moves, a consumer group's partitions before and after scaling"},
		{Path: "takeover", Usage: "explain group coordinator moves: when, from which broker to which, and why"},
		{Path: "txn", Usage: "transactions: state from the txn_state slot files", Common: fgAssignment},
		{Path: "volume", Usage: "check and repair the kaas shared volume", Common: fgOffline},
	} {
		register(d)
	}
}
