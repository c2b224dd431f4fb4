package commands

import (
	"github.com/kaasctl/kaasctl/internal/exit"
	"github.com/kaasctl/kaasctl/repair"
)

// loadFromFile reads the --from-file plan of a reset into o.spec (nothing
// for other specs) and applies Kafka's rules: every row is applied, so
// --topic and --all-topics are dropped with a warning; a file whose rows
// name no group goes with one --group only.
func loadFromFile(g *Globals, o *resetOptions) error {
	if o.spec.Kind != repair.FromFile {
		return nil
	}
	fp, err := repair.ReadFromFile(o.fromFile, g.IO.In, g.Progress)
	if err != nil {
		return err
	}
	o.spec.File = fp
	if o.allTopics || len(o.scopes) > 0 {
		g.Warnf("--from-file applies every row of the file; --topic and --all-topics are ignored with it (as kafka-consumer-groups.sh does)")
		o.allTopics, o.scopes = false, nil
	}
	if !fp.MultiGroup && o.multi {
		return exit.UsageErrorf("--from-file %s has topic,partition,offset rows, which name no group: with several groups kafka-consumer-groups.sh applies such a file to none of them, so kaasctl refuses. Give one --group, or use group,topic,partition,offset rows (what --export writes for several groups)", o.fromFile)
	}
	return nil
}
