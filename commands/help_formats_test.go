package commands

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/render"
)

// Every machine field of every command is camelCase, as kaas's own files.
func TestMachineFieldsAreCamelCase(t *testing.T) {
	t.Parallel()
	camel := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	for _, d := range formatDocs() {
		fs := render.Fields(d.Doc)
		if len(fs) == 0 {
			t.Errorf("%s: no fields", d.Title)
		}
		for _, f := range fs {
			for _, seg := range strings.Split(strings.NewReplacer("[]", "", "{}", "").Replace(f.Path), ".") {
				if !camel.MatchString(seg) {
					t.Errorf("%s: field %q is not camelCase", d.Title, f.Path)
				}
			}
		}
	}
}

func TestHelpFormats(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", nil, "help", "formats")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	for _, want := range []string{"jsonl", "whois-coordinator", "groups describe", "takeover trace", "offsets reset", "[]coordinator", "findings[].fix",
		"groups[].summary.totalLag", "groups[].topics[].maxLag", "groups describe (with brokers)", "groups[].topicOffsets[].live"} {
		if !strings.Contains(r.Out, want) {
			t.Errorf("help formats lacks %q", want)
		}
	}
}
