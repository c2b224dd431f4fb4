package commands

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/views"
	"github.com/urfave/cli/v2"
)

// helpJSON runs kaasctl ARGS --help-json and decodes the tree.
func helpJSON(t *testing.T, args ...string) (views.HelpTree, cliResult) {
	t.Helper()
	r := runCLI(t, "", nil, append(args, "--help-json")...)
	if r.Code != 0 {
		t.Fatalf("%v --help-json: exit %d: %s", args, r.Code, r.Err)
	}
	var tree views.HelpTree
	if err := json.Unmarshal([]byte(r.Out), &tree); err != nil {
		t.Fatalf("--help-json is not JSON: %v\n%s", err, r.Out)
	}
	return tree, r
}

var helpJSONVersion = regexp.MustCompile(`"version": "[^"]*"`)

// The tree of one command, as --help-json prints it, against its golden
// file: flags with types, defaults, environment variables and profile
// keys, exit codes, documents, and the exit codes and formats of the
// whole tool.
func TestHelpJSONGolden(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"help-json-groups-health.json":  {"groups", "health"},
		"help-json-groups-explain.json": {"groups", "explain"},
		"help-json-version.json":        {"version"},
	} {
		_, r := helpJSON(t, args...)
		golden(t, name, helpJSONVersion.ReplaceAllString(r.Out, `"version": "$$VERSION"`))
	}
}

// Every command of the tree the app builds is in --help-json, under its
// path, with every one of its flags and their aliases; the help
// sub-commands are left out.
func TestHelpJSONHasEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	tree, r := helpJSON(t)
	var head map[string]any
	if json.Unmarshal([]byte(r.Out), &head) != nil || head["schemaVersion"] != 1.0 {
		t.Errorf("schemaVersion %v", head["schemaVersion"])
	}
	byPath := map[string]views.HelpCommand{}
	var index func(cs []views.HelpCommand)
	index = func(cs []views.HelpCommand) {
		for _, c := range cs {
			byPath[c.Path] = c
			index(c.Subcommands)
		}
	}
	index(tree.Commands)
	app := NewApp(&IOStreams{})
	var walk func(cs []*cli.Command, parents []string)
	n := 0
	walk = func(cs []*cli.Command, parents []string) {
		for _, c := range cs {
			if c.Name == "help" && len(parents) > 0 {
				continue
			}
			path := strings.Join(append(slices.Clone(parents), c.Name), " ")
			hc, ok := byPath[path]
			if !ok {
				t.Errorf("command %q is not in --help-json", path)
				continue
			}
			for _, f := range c.Flags {
				n++
				i := slices.IndexFunc(hc.Flags, func(h views.HelpFlag) bool { return h.Name == f.Names()[0] })
				if i < 0 {
					t.Errorf("%s: flag --%s is not in --help-json", path, f.Names()[0])
					continue
				}
				if got := append([]string{hc.Flags[i].Name}, hc.Flags[i].Aliases...); !slices.Equal(got, f.Names()) {
					t.Errorf("%s --%s: names %v, want %v", path, f.Names()[0], got, f.Names())
				}
			}
			if len(hc.Flags) != len(c.Flags) {
				t.Errorf("%s: %d flags in --help-json, %d on the command", path, len(hc.Flags), len(c.Flags))
			}
			walk(c.Subcommands, append(slices.Clone(parents), c.Name))
		}
	}
	walk(app.Commands, nil)
	if n < 500 {
		t.Errorf("only %d flags walked: is the tree prepared (common flags attached)?", n)
	}
}

// What a flag is set by besides the command line comes from the tables
// that resolve it; exit codes and formats are kaasctl's.
func TestHelpJSONSettings(t *testing.T) {
	t.Parallel()
	tree, _ := helpJSON(t, "groups", "describe")
	if tree.Path != "groups describe" || len(tree.Commands) != 1 || tree.Commands[0].Path != "groups describe" {
		t.Fatalf("subtree %q: %+v", tree.Path, tree.Commands)
	}
	c := tree.Commands[0]
	flag := func(name string) views.HelpFlag {
		for _, f := range c.Flags {
			if f.Name == name {
				return f
			}
		}
		t.Fatalf("no --%s", name)
		return views.HelpFlag{}
	}
	for name, want := range map[string][2]string{
		"data-dir": {"KAAS_DATA_DIR", "dataDir"}, "cluster-dir": {"KAAS_CLUSTER_DIR", "clusterDir"},
		"kaas-version": {"KAASCTL_KAAS_VERSION", "kaasVersion"}, "brokers": {"KAASCTL_BROKERS", "brokers"},
		"tls-ca": {"KAASCTL_TLS_CA", "tls.caFile"}, "sasl-password-file": {"KAASCTL_SASL_PASSWORD_FILE", "sasl.passwordFile"},
		"timeout": {"KAASCTL_TIMEOUT", "timeout"}, "profile": {"KAASCTL_PROFILE", ""},
	} {
		f := flag(name)
		if !slices.Contains(f.Env, want[0]) || f.ProfileKey != want[1] || !f.Common {
			t.Errorf("--%s: env %v profile %q common %v, want %v", name, f.Env, f.ProfileKey, f.Common, want)
		}
	}
	if f := flag("output"); f.Default != "table" || f.Type != "string" || !slices.Equal(f.Aliases, []string{"o"}) {
		t.Errorf("--output %+v", f)
	}
	if f := flag("brokers"); f.Type != "stringList" || !f.Repeatable {
		t.Errorf("--brokers %+v", f)
	}
	if !slices.Equal(c.ExitCodes, []int{0, 1, 2}) || len(c.Documents) != 3 || !slices.Contains(c.OutputFormats, "json") {
		t.Errorf("exit codes %v, documents %+v, formats %v", c.ExitCodes, c.Documents, c.OutputFormats)
	}
	if len(tree.ExitCodes) != 5 || tree.ExitCodes[4].Name != "refused" || len(tree.OutputFormats) != 6 {
		t.Errorf("exit codes %+v formats %+v", tree.ExitCodes, tree.OutputFormats)
	}
	// A hidden common flag is listed, marked hidden: offline commands accept them.
	vt, _ := helpJSON(t, "volume", "check")
	for _, f := range vt.Commands[0].Flags {
		if f.Name == "brokers" && !f.Hidden {
			t.Errorf("volume check --brokers is not marked hidden: %+v", f)
		}
	}
	if r := runCLI(t, "", nil, "no-such", "--help-json"); r.Code != 2 {
		t.Errorf("unknown command: exit %d %q", r.Code, r.Err)
	}
}
