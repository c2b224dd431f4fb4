package commands

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/completion"
)

// Bash completion of group names is quoted for bash: a group named '*' is
// offered as \* (never expanded to the files of the current directory),
// 'a b' as a\ b (one word); a word typed with a backslash still matches.
func TestBashCompletionQuotesNames(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	_, env := cliOnPath(t)
	data, cd := safeVolume(t)
	for _, g := range []string{"*", "a b", "x?[y]", "$(touch pwned)"} {
		writeFile(t, cd, "__consumer_offsets/"+g+".json", `{"offsets":{"orders/0":1}}`)
	}
	cwd := t.TempDir()
	for _, f := range []string{"file-one", "file-two"} {
		os.WriteFile(filepath.Join(cwd, f), nil, 0o644)
	}
	script := `set -e
source <(kaasctl completion bash)
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kaasctl_complete; printf 'reply:%s\n' "${COMPREPLY[@]}"; echo end; }
complete_words kaasctl groups describe --data-dir ` + data + ` ''
complete_words kaasctl groups describe --data-dir ` + data + ` 'a\ '
`
	cmd := exec.Command(bash, "-c", script)
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	first, second, _ := strings.Cut(string(out), "end\n")
	for _, want := range []string{`reply:\*` + "\n", `reply:a\ b` + "\n", `reply:x\?\[y\]` + "\n", `reply:\$\(touch\ pwned\)` + "\n", "reply:g\n"} {
		if !strings.Contains(first, want) {
			t.Errorf("missing %q in:\n%s", want, first)
		}
	}
	if strings.Contains(first, "file-one") {
		t.Errorf("a group name was glob-expanded to the directory's files:\n%s", first)
	}
	if strings.TrimSpace(second) != `reply:a\ b`+"\nend" && !strings.Contains(second, `reply:a\ b`) {
		t.Errorf("completing 'a\\ ': %s", second)
	}
	if _, err := os.Stat(filepath.Join(cwd, "pwned")); err == nil {
		t.Error("a group name ran a command")
	}
}

// FuzzBashWordQuoting: whatever a candidate holds, bash reads the quoted
// form back as exactly that one word (checked with unquoteBashWord, the
// reading of what the user typed), and the quoted form holds no character
// bash would expand unescaped.
func FuzzBashWordQuoting(f *testing.F) {
	for _, s := range []string{"*", "a b", "/*/*/*/*/*", "$(touch x)", "`id`", "~root", "a'b\"c", `back\slash`, "=x", "ü*", "", "g-1.orders:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := completion.QuoteBashWord(s)
		if got := completion.UnquoteBashWord(q); got != s {
			t.Fatalf("%q quoted as %q reads back as %q", s, q, got)
		}
		for i := 0; i < len(q); i++ {
			if q[i] == '\\' {
				i++ // an escaped byte
				continue
			}
			if strings.IndexByte(" \t\n*?[]$`'\"~;&|<>(){}!#", q[i]) >= 0 {
				t.Fatalf("%q quoted as %q leaves %q unescaped", s, q, q[i])
			}
		}
	})
}
