package commands

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// Every flag's help says its default once. urfave/cli appends "(default:
// VALUE)" from the flag's Go value, which is not the default when kaasctl
// resolves it later (--keep-backups: flag, then KAASCTL_KEEP_BACKUPS, then
// 10) and is noise for a switch (every switch is off until given, and
// "--dry-run ... (the default) (default: false)" reads as a contradiction).
// So the appended text is dropped for switches and for every flag whose
// own text already speaks of its default.
func init() {
	orig := cli.FlagStringer
	cli.FlagStringer = func(f cli.Flag) string {
		s := orig(f)
		if _, isSwitch := f.(*cli.BoolFlag); isSwitch {
			// Not through GetDefaultText: it reads what Apply writes, and
			// urfave's own HelpFlag is one object shared by every app (a
			// race when two commands run at once, as the tests do).
			s = strings.Replace(s, " (default: false)", "", 1)
			return strings.Replace(s, " (default: true)", "", 1)
		}
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			return s
		}
		d := df.GetDefaultText()
		if d == "" {
			return s
		}
		if strings.Contains(strings.ToLower(df.GetUsage()), "default") {
			s = strings.Replace(s, " (default: "+d+")", "", 1)
		}
		return s
	}
}
