package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/exit"
)

func init() {
	register(Descriptor{
		Path:  "txn describe",
		Usage: "one transactional id in full: state, producer id/epoch, partitions, groups, timing, coordinator, slot file",
		Build: func() *cli.Command {
			return &cli.Command{
				ArgsUsage: "ID...",
				Flags:     []cli.Flag{nowFlag()},
				Action:    action(parseTxnDescribe, runTxn),
			}
		},
	})
}

func parseTxnDescribe(c *cli.Context) (txnOptions, error) {
	o := txnOptions{describe: true}
	o.filter.IDs = c.Args().Slice()
	if len(o.filter.IDs) == 0 {
		return o, exit.UsageErrorf("name at least one transactional ID")
	}
	var err error
	o.now, err = nowFrom(c)
	return o, err
}
