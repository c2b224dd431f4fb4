package commands

import (
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/urfave/cli/v2"
)

// Help that teaches: every command a user can run shows examples.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	app := NewApp(&IOStreams{})
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			p := strings.TrimSpace(path + " " + c.Name)
			if c.Hidden || c.Name == "help" {
				continue
			}
			if !completion.IsLeaf(c) {
				walk(p, c.Subcommands)
				continue
			}
			if !strings.Contains(c.Description, "Examples:") && strings.Count(c.UsageText, "kaasctl ") < 2 {
				t.Errorf("kaasctl %s: no examples in its help", p)
			}
		}
	}
	walk("", app.Commands)
}
