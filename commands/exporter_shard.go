package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/inspect"
	"github.com/kaasctl/kaasctl/internal/exit"
)

// shardFlag is --shard K/N (nil when not given).
func shardFlag(c *cli.Context) (*inspect.Shard, error) {
	if !c.IsSet("shard") {
		return nil, nil
	}
	sh, err := inspect.ParseShard(c.String("shard"))
	if err != nil {
		return nil, exit.UsageErrorf("--shard: %v", err)
	}
	return &sh, nil
}
