package commands

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/internal/wire"
	"github.com/kaasctl/kaasctl/render"
	"github.com/kaasctl/kaasctl/render/views"
)

// 'kaasctl --help-json' is the command tree as JSON, for tools and agents:
// every command with its flags (type, default, environment variables,
// profile key), exit codes and machine documents, walked from the tree the
// app builds (buildCommands, prepare): the same registration the help
// text comes from. 'kaasctl groups --help-json' is one subtree.

const flagHelpJSON = "help-json"

func init() {
	registerAppDoc(FormatDoc{Title: "--help-json", Doc: views.HelpTree{}, JSONL: "the whole document", Rank: 240})
}

// helpJSONRequest reports whether args ask for --help-json, and of which
// command path.
func helpJSONRequest(app *cli.App, args []string) ([]string, bool) {
	asked := false
	rewritten := slices.Clone(args)
	for i, a := range rewritten {
		if a == "--" {
			break
		}
		if a == "--"+flagHelpJSON {
			asked, rewritten[i] = true, "--help"
		}
	}
	if !asked {
		return nil, false
	}
	path, ok := completion.HelpRequest(app.Commands, rewritten)
	return path, ok
}

// printHelpJSON writes the tree of the command at path (the whole tree
// when empty).
func printHelpJSON(app *cli.App, w io.Writer, path []string) error {
	t := views.HelpTree{Name: app.Name, Version: app.Version, Usage: app.Usage, Description: app.Description,
		Path: strings.Join(path, " "), ExitCodes: views.ExitCodeDocs, OutputFormats: views.OutputFormatDocs(), Environment: helpEnvironment()}
	cmds := app.Commands
	var parents []string
	for _, name := range path {
		c := completion.FindCommand(cmds, name)
		if c == nil {
			return fmt.Errorf("--help-json: no command %q", strings.Join(append(parents, name), " "))
		}
		if len(parents) == len(path)-1 {
			cmds = []*cli.Command{c}
			break
		}
		parents, cmds = append(parents, c.Name), c.Subcommands
	}
	for _, c := range cmds {
		if c.Name == "help" && len(parents) > 0 {
			continue
		}
		t.Commands = append(t.Commands, helpCommand(c, parents))
	}
	return render.WriteDocument(w, t, true, render.SchemaVersionOf(t))
}

// helpCommand is c (under parents) and its sub-commands; the help
// sub-command every parent and leaf gets is left out.
func helpCommand(c *cli.Command, parents []string) views.HelpCommand {
	path := strings.Join(append(slices.Clone(parents), c.Name), " ")
	hc := views.HelpCommand{Name: c.Name, Path: path, Aliases: c.Aliases, Usage: c.Usage, ArgsUsage: c.ArgsUsage,
		Description: c.Description, Hidden: c.Hidden, Runnable: completion.IsLeaf(c), Flags: []views.HelpFlag{},
		ExitCodes: []int{}, OutputFormats: []string{}, Documents: helpDocuments(path), Subcommands: []views.HelpCommand{}}
	common := map[string]bool{}
	for _, f := range commonFlags() {
		common[completion.FlagName(f)] = true
	}
	for _, f := range c.Flags {
		hf := helpFlag(f, common[completion.FlagName(f)])
		hc.Flags = append(hc.Flags, hf)
		if hf.Name == flagOutput && !hf.Hidden {
			for _, ft := range render.Formats {
				hc.OutputFormats = append(hc.OutputFormats, string(ft))
			}
		}
	}
	if hc.Runnable {
		hc.ExitCodes = views.ExitCodesOf(path)
	}
	for _, s := range c.Subcommands {
		if s.Name == "help" {
			continue
		}
		hc.Subcommands = append(hc.Subcommands, helpCommand(s, append(slices.Clone(parents), c.Name)))
	}
	return hc
}

// helpFlag describes one flag.
func helpFlag(f cli.Flag, common bool) views.HelpFlag {
	names := f.Names()
	hf := views.HelpFlag{Name: names[0], Aliases: slices.Clone(names[1:]), Type: flagTypeName(f), Common: common, Env: []string{}}
	if d, ok := f.(cli.DocGenerationFlag); ok {
		hf.TakesValue = d.TakesValue()
		hf.Placeholder, hf.Usage = views.UnquoteUsage(d.GetUsage())
		hf.Default = flagDefault(f, d)
		hf.Env = append(hf.Env, d.GetEnvVars()...)
	}
	if s, ok := f.(cli.DocGenerationSliceFlag); ok {
		hf.Repeatable = s.IsSliceFlag()
	}
	if g, ok := f.(*cli.GenericFlag); ok {
		_, hf.Repeatable = g.Value.(*repeatedFlag)
	}
	if c, ok := f.(cli.CategorizableFlag); ok {
		hf.Category, hf.Hidden = c.GetCategory(), !c.IsVisible()
	}
	if e, ok := ownFlagEnv[hf.Name]; ok && !common {
		hf.Env = append(hf.Env, e)
	}
	if common {
		if s, ok := commonFlagSettings()[hf.Name]; ok {
			hf.Env = append(hf.Env, s.env...)
			hf.ProfileKey = s.profile
		}
	}
	return hf
}

// flagTypeName names a flag's type.
func flagTypeName(f cli.Flag) string {
	switch f := f.(type) {
	case *cli.BoolFlag:
		return "bool"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		return "int"
	case *cli.StringSliceFlag:
		return "stringList"
	case *cli.GenericFlag:
		switch f.Value.(type) {
		case *durationValue:
			return "duration"
		case *repeatedFlag:
			return "stringList"
		}
	}
	return "string"
}

// flagDefault is a flag's default value ("" when none), or the text a
// flag gives for it (DefaultText).
func flagDefault(f cli.Flag, d cli.DocGenerationFlag) string {
	switch f := f.(type) {
	case *cli.BoolFlag:
		return strconv.FormatBool(f.Value)
	case *cli.StringSliceFlag:
		if f.Value == nil {
			return ""
		}
		return strings.Join(f.Value.Value(), ",")
	case *cli.StringFlag:
		if f.DefaultText != "" {
			return f.DefaultText
		}
		return f.Value
	}
	return d.GetValue()
}

// flagSetting is what else sets a common flag: environment variables and
// the profile key.
type flagSetting struct {
	env     []string
	profile string
}

// commonFlagSettings are the environment variables and profile keys of
// the common flags, from the tables that resolve them: the volume's
// (volume.ResolveInput's sources) and the connection's (wire's keys).
func commonFlagSettings() map[string]flagSetting {
	// --log-dirs has no profile key: volume.ResolveInput reads
	// KAAS_LOG_DIRS beside it (common.go).
	m := map[string]flagSetting{flagNoColor: {env: []string{"NO_COLOR"}}, flagLogDirs: {env: []string{"KAAS_LOG_DIRS"}}}
	var in volume.ResolveInput
	for _, gs := range [][]volume.Given{in.DataDirs(), in.ClusterDirs(), in.KaasVersions()} {
		var s flagSetting
		name := ""
		for _, g := range gs {
			switch g.Origin {
			case volume.OriginFlag:
				name = strings.TrimPrefix(g.From, "--")
			case volume.OriginEnv:
				s.env = append(s.env, g.From)
			case volume.OriginProfile:
				s.profile = strings.TrimPrefix(g.From, "profile ")
			}
		}
		m[name] = s
	}
	for _, k := range append([]string{wire.KeyProfile, wire.KeyConfig}, wire.ConnectionKeys...) {
		m[k] = flagSetting{env: []string{wire.EnvName(k)}, profile: wire.ProfileKey(k)}
	}
	return m
}

// helpEnvironment lists every environment variable of the common flags,
// and the others kaasctl reads.
func helpEnvironment() []views.HelpEnv {
	var out []views.HelpEnv
	settings := commonFlagSettings()
	for _, f := range commonFlags() {
		name := completion.FlagName(f)
		for _, e := range settings[name].env {
			usage := ""
			if d, ok := f.(cli.DocGenerationFlag); ok {
				_, usage = views.UnquoteUsage(d.GetUsage())
			}
			out = append(out, views.HelpEnv{Name: e, Flag: name, Usage: usage})
		}
	}
	for flag, env := range ownFlagEnv {
		out = append(out, views.HelpEnv{Name: env, Flag: flag, Usage: "the default of --" + flag + " where a command takes it"})
	}
	return append(out, views.HelpEnv{Name: wire.DefaultPasswordEnv, Usage: "the SASL password, when neither --sasl-password-env nor --sasl-password-file names another source"},
		views.HelpEnv{Name: "TERM", Usage: "dumb: no colour"},
		views.HelpEnv{Name: "XDG_CONFIG_HOME", Usage: "the config file is $XDG_CONFIG_HOME/kaasctl/config.yaml (else ~/.config/kaasctl/config.yaml, from HOME)"})
}

// ownFlagEnv are the environment variables of commands' own flags.
var ownFlagEnv = map[string]string{"keep-backups": "KAASCTL_KEEP_BACKUPS"}

// helpDocuments are the formatDocs entries of the command at path.
func helpDocuments(path string) []views.HelpDocument {
	out := []views.HelpDocument{}
	for _, d := range formatDocs() {
		if slices.Contains(views.DocCommands(d.Title), path) {
			out = append(out, views.HelpDocument{Name: d.Title, SchemaVersion: docSchemaVersion(d.Title), JSONL: d.JSONL})
		}
	}
	return out
}
