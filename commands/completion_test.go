package commands

import (
	"github.com/kaasctl/kaasctl/inspect"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompleteCandidates(t *testing.T) {
	t.Parallel()
	dir := labCluster(t)
	for _, tc := range []struct {
		words []string
		want  []string
		not   []string
	}{
		{[]string{"wh"}, []string{"whois-coordinator"}, []string{"version"}},
		{[]string{""}, []string{"completion", "help", "version", "whois-coordinator"}, []string{"__complete"}},
		{[]string{"whois", "-o", ""}, []string{"table", "wide", "json", "jsonl", "yaml", "csv"}, nil},
		{[]string{"whois", "--output=y"}, []string{"--output=yaml"}, []string{"--output=json"}},
		{[]string{"whois", "--data-dir", dir, "g-"}, []string{"g-beta", "g-gamma"}, nil},
		{[]string{"whois", "--data-dir=" + dir, "--what-if-down", ""}, []string{"skafka-0", "skafka-2"}, nil},
		{[]string{"whois", "--what-"}, []string{"--what-if-down", "--what-if-brokers"}, []string{"--txn"}},
		{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}, nil},
		// Choices commands gives the completion at init.
		{[]string{"whois", "--failover", ""}, inspect.FailoverModels, nil},
		{[]string{"plan", "assignment", "--assignor", ""}, inspect.Assignors, nil},
		{[]string{"help", "exit"}, []string{"exit-codes"}, nil},
		{[]string{"whois", "--data-dir", "/nonexistent", ""}, nil, nil},
		{[]string{"nosuch", ""}, nil, []string{"whois-coordinator"}},
	} {
		r := runCLI(t, "", nil, append([]string{"__complete"}, tc.words...)...)
		if r.Code != 0 || r.Err != "" {
			t.Errorf("%q: exit %d stderr %q", tc.words, r.Code, r.Err)
		}
		got := strings.Fields(r.Out)
		for _, w := range tc.want {
			if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+w+" ") {
				t.Errorf("%q: %v lacks %q", tc.words, got, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(" "+strings.Join(got, " ")+" ", " "+w+" ") {
				t.Errorf("%q: %v has %q", tc.words, got, w)
			}
		}
		if tc.want == nil && tc.not == nil && len(got) != 0 {
			t.Errorf("%q: want nothing, got %v", tc.words, got)
		}
	}
}

func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := runCLI(t, "", nil, "completion", sh)
		if r.Code != 0 || !strings.Contains(r.Out, "kaasctl __complete") {
			t.Errorf("%s: exit %d, %q", sh, r.Code, r.Out)
		}
	}
	if r := runCLI(t, "", nil, "completion", "tcsh"); r.Code != 2 {
		t.Errorf("unknown shell: exit %d", r.Code)
	}
}

// The bash script loads with 'source <(kaasctl completion bash)' and its
// function completes from the real binary, as a user's shell would.
func TestBashCompletionLoads(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	_, env := cliOnPath(t)
	dir, _ := filepath.Abs(labCluster(t))
	script := `set -e
source <(kaasctl completion bash)
complete -p kaasctl
COMP_WORDS=(kaasctl whois --data-dir ` + dir + ` g-b); COMP_CWORD=4
_kaasctl_complete
printf 'reply:%s\n' "${COMPREPLY[@]}"
COMP_WORDS=(kaasctl whois -o ''); COMP_CWORD=3
_kaasctl_complete
printf 'reply:%s\n' "${COMPREPLY[@]}"
`
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	for _, want := range []string{"complete -o default -F _kaasctl_complete kaasctl", "reply:g-beta\n", "reply:jsonl\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
