package render

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

func TestClean(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"orders-app", "orders-app"},
		{"ünïcødé 日本", "ünïcødé 日本"},
		{`back\slash "q"`, `back\slash "q"`},
		{"esc\x1b[2Jclear", `esc\x1b[2Jclear`},
		{"osc\x1b]0;title\x07", `osc\x1b]0;title\x07`},
		{"nul\x00del\x7f", `nul\x00del\x7f`},
		{"tab\tnl\ncr\r", `tab\tnl\ncr\r`},
		{"c1\u0085\u009b31m", `c1\u0085\u009b31m`},
		{"rlo\u202egpj.exe", `rlo\u202egpj.exe`},
		{"iso\u2066x\u2069 lrm\u200e alm\u061c bom\ufeff ls\u2028", `iso\u2066x\u2069 lrm\u200e alm\u061c bom\ufeff ls\u2028`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
	} {
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := CleanText("line 1\n\tline 2\x1b[31m\u202e"); got != "line 1\n\tline 2\\x1b[31m\\u202e" {
		t.Errorf("CleanText = %q", got)
	}
}

// checkCleanOutput asserts what every cleaned string must satisfy.
func checkCleanOutput(t *testing.T, in, out string, text bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%q: output %q is not UTF-8", in, out)
	}
	for _, r := range out {
		if text && (r == '\n' || r == '\t') {
			continue
		}
		if r < 0x20 || r == 0x7f || unsafeRune(r) {
			t.Fatalf("%q: output %q keeps %U", in, out, r)
		}
	}
}

func TestCleanWriterChunks(t *testing.T) {
	t.Parallel()
	in := "a\x1b[31mred\u202e\xff ünï\ncødé\x1b"
	want := CleanText(in)
	for size := 1; size <= len(in); size++ {
		var out bytes.Buffer
		cw := NewCleanWriter(&out)
		for i := 0; i < len(in); i += size {
			cw.Write([]byte(in[i:min(i+size, len(in))]))
		}
		cw.Flush()
		if out.String() != want {
			t.Fatalf("chunks of %d: %q, want %q", size, out.String(), want)
		}
	}
}

func TestPaintSurvivesOnlyThroughPrinter(t *testing.T) {
	t.Parallel()
	p := &Printer{Format: Table, Color: true}
	var out bytes.Buffer
	p.Out = &out
	err := p.Print(Output{Human: func(p *Printer) error {
		_, err := p.Out.Write([]byte(p.Paint("31", "dead\x1b]0;x\x07") + " forged \x1b[31m\n"))
		return err
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := "\x1b[31mdead\\x1b]0;x\\x07\x1b[0m forged \\x1b[31m\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	p.Color = false
	if got := p.Paint("31", "x\x1b"); got != `x\x1b` {
		t.Fatalf("no colour: %q", got)
	}
}

func TestTableCellsCleaned(t *testing.T) {
	t.Parallel()
	tb := NewTable("GROUP", "NOTE")
	tb.Add("evil\x1b[2J\u202e", "ok")
	for _, tty := range []bool{false, true} {
		var out bytes.Buffer
		p := &Printer{Format: Table, Out: &out, TTY: tty}
		if err := p.Table(tb); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(out.String(), "\x1b\u202e") || !strings.Contains(out.String(), `evil\x1b[2J\u202e`) {
			t.Fatalf("tty=%v: %q", tty, out.String())
		}
	}
	// csv carries the cell unchanged.
	var out bytes.Buffer
	if err := WriteCSV(&out, tb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "evil\x1b[2J\u202e") {
		t.Fatalf("csv changed the id: %q", out.String())
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31m", "\u202e", "\xff\xc3", "\u0085", `\x1b`, "a\nb\tc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Clean(s)
		checkCleanOutput(t, s, c, false)
		if Clean(c) != c {
			t.Fatalf("Clean is not idempotent on %q: %q then %q", s, c, Clean(c))
		}
		if IsClean(s) != (c == s) {
			t.Fatalf("IsClean(%q) = %v but Clean gives %q", s, IsClean(s), c)
		}
		ct := CleanText(s)
		checkCleanOutput(t, s, ct, true)
		if CleanText(ct) != ct {
			t.Fatalf("CleanText is not idempotent on %q", s)
		}
		// The writer cleans the same as CleanText, however the text is cut.
		if !strings.Contains(s, paintMark) {
			var out bytes.Buffer
			cw := NewCleanWriter(&out)
			for i, n := 0, 1; i < len(s); i, n = i+n, n%7+1 {
				cw.Write([]byte(s[i:min(i+n, len(s))]))
			}
			cw.Flush()
			if out.String() != ct {
				t.Fatalf("writer %q, CleanText %q", out.String(), ct)
			}
		}
	})
}

type idView struct {
	Group   string   `json:"group"`
	Note    string   `json:"note,omitempty"`
	Members []string `json:"members"`
	Inner   *idInner `json:"inner,omitempty"`
	embedded
}

type idInner struct {
	Topic string `json:"topic"`
	Lag   int64  `json:"lag"`
}

type embedded struct {
	Coordinator string `json:"coordinator"`
}

func TestJSONValidIdsUnchanged(t *testing.T) {
	t.Parallel()
	v := []idView{{Group: "g<&>", Members: nil, Inner: &idInner{Topic: "t", Lag: 3}, embedded: embedded{Coordinator: "kaas-0"}}}
	var got, want bytes.Buffer
	if err := WriteJSON(&got, v, true); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(NoNulls(v))
	if got.String() != want.String() || strings.Contains(got.String(), Base64Suffix) {
		t.Fatalf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}

func TestJSONInvalidIdRoundTrip(t *testing.T) {
	t.Parallel()
	id := "com.example.\xff\xfe.orders-" + strings.Repeat("x", 60)
	v := idView{Group: id, Members: []string{"ok", "m\xc3"}, Inner: &idInner{Topic: "t"}, embedded: embedded{Coordinator: "kaas-1"}}
	for _, indent := range []bool{true, false} {
		var out bytes.Buffer
		if err := WriteJSON(&out, v, indent); err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
			t.Fatalf("%v in %s", err, out.String())
		}
		if got, ok := OriginalBytes(obj, "group"); !ok || got != id {
			t.Fatalf("group round trip: %q, want %q (%s)", got, id, out.String())
		}
		if g, _ := obj["group"].(string); !strings.Contains(g, "\ufffd") {
			t.Fatalf("group is not the lossy string: %q", g)
		}
		m, _ := obj["members"+Base64Suffix].([]any)
		if len(m) != 2 || m[1] != base64.StdEncoding.EncodeToString([]byte("m\xc3")) {
			t.Fatalf("membersBase64 = %v", obj["members"+Base64Suffix])
		}
		if _, ok := obj["note"]; ok {
			t.Fatal("omitempty not honoured")
		}
		if obj["coordinator"] != "kaas-1" || obj["inner"].(map[string]any)["lag"] != float64(0) {
			t.Fatalf("fields lost: %s", out.String())
		}
		// Field order is the struct's, sibling right after its field.
		s := out.String()
		if !(strings.Index(s, `"group"`) < strings.Index(s, `"groupBase64"`) && strings.Index(s, `"groupBase64"`) < strings.Index(s, `"members"`)) {
			t.Fatalf("order: %s", s)
		}
	}
	var y bytes.Buffer
	if err := WriteYAML(&y, v); err != nil || !strings.Contains(y.String(), "groupBase64: ") {
		t.Fatalf("yaml: %v %s", err, y.String())
	}
}

func FuzzJSONIdRoundTrip(f *testing.F) {
	for _, s := range []string{"", "orders", "\xff", "a\xc3", "\u202e", "x\x00y", "日本\xe6\x97"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		var out bytes.Buffer
		if err := WriteJSON(&out, idView{Group: id, Members: []string{id}}, false); err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
			t.Fatalf("invalid JSON %v: %s", err, out.String())
		}
		if got, ok := OriginalBytes(obj, "group"); !ok || got != id {
			t.Fatalf("round trip %q → %q", id, got)
		}
		_, has := obj["group"+Base64Suffix]
		if has == utf8.ValidString(id) {
			t.Fatalf("groupBase64 present=%v for %q", has, id)
		}
		// YAML carries the same, exactly.
		out.Reset()
		if err := WriteYAML(&out, idView{Group: id}); err != nil {
			t.Fatal(err)
		}
		var y map[string]any
		if err := yaml.Unmarshal(out.Bytes(), &y); err != nil {
			t.Fatalf("invalid YAML %v: %s", err, out.String())
		}
		if got, ok := OriginalBytes(y, "group"); !ok || got != id {
			t.Fatalf("yaml round trip %q → %q (%q)", id, got, out.String())
		}
	})
}

// firstUnsafe looks at eight printable bytes at a time: it finds what the
// byte-by-byte walk finds, for every byte value at every position of a
// word, and on either side of a word's edge.
func TestFirstUnsafeWordAtATime(t *testing.T) {
	t.Parallel()
	// The rule, rune by rune: control bytes and DEL (but a newline or tab
	// in text), invalid UTF-8 and the runes unsafeRune names.
	slow := func(s string, text bool) int {
		for i, r := range s {
			switch {
			case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
				return i
			case r < 0x20 || r == 0x7f:
				if !text || r != '\n' && r != '\t' {
					return i
				}
			case unsafeRune(r):
				return i
			}
		}
		return -1
	}
	base := "abcdefghijklmnopqrstuvwxyz0123"
	for pos := range len(base) {
		for c := range 256 {
			b := []byte(base)
			b[pos] = byte(c)
			for _, text := range []bool{false, true} {
				if got, want := firstUnsafe(string(b), text), slow(string(b), text); got != want {
					t.Fatalf("byte %#x at %d (text %v): firstUnsafe %d, want %d", c, pos, text, got, want)
				}
			}
		}
	}
	for _, s := range []string{"", "~~~~~~~~", "        \u202e", "group\u0085name-long", "0123456\xff", "\x7f1234567"} {
		if got, want := firstUnsafe(s, false), slow(s, false); got != want {
			t.Errorf("%q: firstUnsafe %d, want %d", s, got, want)
		}
	}
}

// BenchmarkCleanCheckTable is the check every byte of a large live
// listing's table goes through on its way out.
func BenchmarkCleanCheckTable(b *testing.B) {
	s := strings.Repeat("bench-000123    Empty   -                   0        node 0       node 0     -\n", 1000)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if firstUnsafe(s, true) >= 0 {
			b.Fatal("a clean table reads as unsafe")
		}
	}
}
