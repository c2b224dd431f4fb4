package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
)

func init() {
	register(Descriptor{
		Path:  "txn describe",
		Usage: "one transactional id in full: state, producer id/epoch, partitions, groups, timing, coordinator, slot file",
		Args:  "ID...",
		Build: leaf(func(*txnOptions) []cli.Flag { return []cli.Flag{nowFlag()} }, checkTxnDescribe, runTxn),
	})
}

// checkTxnDescribe reads the IDs (at least one) and the run's clock.
func checkTxnDescribe(c *cli.Context, g *Globals, o *txnOptions) error {
	o.describe, o.filter.IDs = true, c.Args().Slice()
	if len(o.filter.IDs) == 0 {
		return exit.UsageErrorf("name at least one transactional ID")
	}
	o.now = g.Now().UTC()
	return nil
}
