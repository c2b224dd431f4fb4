package logparse

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// phrase is a recognized message: the text as kaas logs it, and whether
// the message may carry more text after it (prefix match).
type phrase struct {
	text   string
	kind   Kind
	prefix bool
}

var phrases = []phrase{
	{"controller active: assignment published", AssignmentPublished, false},
	{"controller lease acquired", LeaseAcquired, false},
	{"controller acquired lease", LeaseAcquired, false},
	{"controller: broker set changed", BrokerSetChanged, false},
	{"broker set changed; triggering recompute", BrokerSetChanged, false},
	{"controller recompute", Recompute, false},
	{"group coordinator change", CoordinatorChange, false},
	{"controller lease lost", LeaseLost, true},
	{"controller lease renew failed", LeaseLost, true},
	{"controller stack ended", LeaseLost, true},
	{"controller stack shut down", LeaseLost, true},
	{"assignment.json rejected", StaleAssignment, true},
}

var phraseBytes = func() [][]byte {
	out := make([][]byte, len(phrases))
	for i, p := range phrases {
		out[i] = []byte(p.text)
	}
	return out
}()

// findPhrase returns the first phrase in line and its offset.
func findPhrase(line []byte) (int, int) {
	for i, pb := range phraseBytes {
		if j := bytes.Index(line, pb); j >= 0 {
			return i, j
		}
	}
	return -1, -1
}

// matchMessage maps an exact message to its phrase.
func matchMessage(msg string) int {
	for i, p := range phrases {
		if msg == p.text || (p.prefix && strings.HasPrefix(msg, p.text)) {
			return i
		}
	}
	return -1
}

// parseLine reads one candidate line. ok: an event was produced;
// recognized: the line holds a key phrase (so a failure is worth counting).
func parseLine(raw []byte) (ev Event, ok, recognized bool) {
	pi, _ := findPhrase(raw)
	if pi < 0 {
		return ev, false, false
	}
	line := raw
	if bytes.IndexByte(line, 0x1b) >= 0 {
		line = stripANSI(line)
	}
	line = bytes.TrimRight(line, "\r\n \t")
	line, decoTime := stripDecorations(line, &ev)
	if len(line) == 0 {
		return ev, false, true
	}
	fields, ok := parseBody(line, pi, &ev)
	if !ok {
		return ev, false, true
	}
	mi := matchMessage(ev.Message)
	if mi < 0 {
		// The phrase was in a field, not the message (e.g. an error text).
		return ev, false, false
	}
	ev.Kind = phrases[mi].kind
	if ev.Time.IsZero() {
		ev.Time = decoTime
	}
	fillFields(&ev, fields)
	return ev, true, true
}

// stripDecorations removes what tools put in front of a broker's own
// line, up to four of them: kubectl's --prefix ("[pod/kaas-1/kaas]", whose
// pod names the broker), its --timestamps (returned as decoTime, the
// line's time when the line has none of its own) and a "kaas-1 |" token of
// docker compose and similar. It stops at the first token that is the
// line's own (a JSON object, "time=", or a timestamp followed by a level);
// an empty result means the line held nothing else.
func stripDecorations(line []byte, ev *Event) (rest []byte, decoTime time.Time) {
	for range 4 {
		line = bytes.TrimLeft(line, " \t")
		if len(line) == 0 {
			return line, decoTime
		}
		if line[0] == '[' {
			if e := bytes.IndexByte(line, ']'); e > 0 && e < 512 {
				if b := prefixBroker(string(line[1:e])); b != "" {
					ev.Broker = b
				}
				line = line[e+1:]
				continue
			}
		}
		if isDigit(line[0]) {
			tok, rest := cutToken(line)
			t, ok := parseTime(tok)
			if !ok || isLevel(firstToken(bytes.TrimLeft(rest, " \t"))) {
				return line, decoTime // not a time, or the text format's own timestamp
			}
			decoTime = t
			line = rest
			continue
		}
		if line[0] == '{' || bytes.HasPrefix(line, []byte("time=")) {
			return line, decoTime
		}
		tok, after, ok := cutBrokerToken(line)
		if !ok {
			return line, decoTime
		}
		if ev.Broker == "" {
			ev.Broker = string(tok)
		}
		line = after
	}
	return line, decoTime
}

// cutBrokerToken cuts a leading broker-name token ("kaas-1", optionally
// followed by '|' or ':') when what follows it starts a log line (a JSON
// object, a bracketed prefix, a timestamp or "time="); ok is false
// otherwise, so a message's first word is never taken for a broker.
func cutBrokerToken(line []byte) (tok, rest []byte, ok bool) {
	tok, rest = cutToken(line)
	if !isBrokerToken(tok) {
		return nil, line, false
	}
	r := bytes.TrimLeft(rest, " \t")
	if len(r) > 0 && (r[0] == '|' || r[0] == ':') {
		r = r[1:]
	}
	r = bytes.TrimLeft(r, " \t")
	if len(r) > 0 && (r[0] == '{' || r[0] == '[' || isDigit(r[0]) || bytes.HasPrefix(r, []byte("time="))) {
		return tok, r, true
	}
	return nil, line, false
}

// parseBody reads the line without its decorations in its own format
// (JSON, Go's logfmt text, or tracing's text) into ev's time, level and
// message, and returns the message's fields; ok is false when the line
// cannot be read in the format it starts like.
func parseBody(line []byte, pi int, ev *Event) (map[string]any, bool) {
	switch {
	case line[0] == '{':
		return parseJSONLine(line, ev)
	case bytes.HasPrefix(line, []byte("time=")):
		fields := parseLogfmt(line)
		ev.Format = FormatGoText
		ev.Message = str(fields["msg"])
		ev.Level = str(fields["level"])
		if t, ok := parseTime([]byte(str(fields["time"]))); ok {
			ev.Time = t
		}
		return fields, true
	default:
		return parseTextLine(line, pi, ev)
	}
}

func fillFields(ev *Event, f map[string]any) {
	switch ev.Kind {
	case LeaseAcquired:
		ev.Epoch, ev.HasEpoch = num(f["epoch"])
		ev.Identity = firstStr(f["identity"], f["broker"], f["holder"])
	case LeaseLost:
		ev.Identity = firstStr(f["identity"], f["broker"])
	case AssignmentPublished:
		ev.Epoch, ev.HasEpoch = num(f["epoch"])
		ev.Version, ev.HasVersion = num(f["version"])
		if !ev.HasVersion {
			ev.Version, ev.HasVersion = num(f["assignment_version"])
		}
	case BrokerSetChanged:
		ev.Prev = strList(f["prev"])
		ev.Cur = strList(f["cur"])
		ev.Added = strList(f["added"])
		ev.Removed = strList(f["removed"])
		if ev.Added == nil && ev.Removed == nil && (ev.Prev != nil || ev.Cur != nil) {
			ev.Added = setMinus(ev.Cur, ev.Prev)
			ev.Removed = setMinus(ev.Prev, ev.Cur)
		}
	case Recompute:
		ev.Reason = str(f["reason"])
		ev.Version, ev.HasVersion = num(f["assignment_version"])
		ev.Epoch, ev.HasEpoch = num(f["epoch"])
	case CoordinatorChange:
		ev.Group = str(f["group"])
		if ev.Group == "" {
			ev.Group = str(f["group_id"])
		}
		ev.From = str(f["from"])
		ev.To = str(f["to"])
		ev.Side = str(f["side"])
		ev.Version, ev.HasVersion = num(f["assignment_version"])
		ev.Epoch, ev.HasEpoch = num(f["controller_epoch"])
	case StaleAssignment:
		ev.Epoch, ev.HasEpoch = num(f["file_epoch"])
	}
	if ev.Broker == "" {
		// Go lines name their broker; Rust lease lines their identity.
		if b := str(f["broker"]); b != "" && ev.Kind != CoordinatorChange {
			ev.Broker = b
		} else if ev.Kind == LeaseAcquired && ev.Identity != "" {
			ev.Broker = ev.Identity
		}
	}
}

func setMinus(a, b []string) []string {
	var out []string
	for _, x := range a {
		found := false
		for _, y := range b {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// parseJSONLine decodes a tracing or slog JSON line; fields are the
// message's fields (tracing's "fields" object, or slog's top level).
func parseJSONLine(line []byte, ev *Event) (map[string]any, bool) {
	var top map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil || top == nil {
		return nil, false
	}
	ev.Level = str(top["level"])
	if f, ok := top["fields"].(map[string]any); ok {
		ev.Format = FormatRustJSON
		ev.Message = str(f["message"])
		if t, ok := parseTime([]byte(str(top["timestamp"]))); ok {
			ev.Time = t
		}
		return f, true
	}
	if m, ok := top["msg"]; ok {
		ev.Format = FormatGoJSON
		ev.Message = str(m)
		if t, ok := parseTime([]byte(str(top["time"]))); ok {
			ev.Time = t
		}
		return top, true
	}
	if m, ok := top["message"]; ok {
		// tracing JSON with flatten_event(true).
		ev.Format = FormatRustJSON
		ev.Message = str(m)
		ts := str(top["timestamp"])
		if ts == "" {
			ts = str(top["time"])
		}
		if t, ok := parseTime([]byte(ts)); ok {
			ev.Time = t
		}
		return top, true
	}
	return nil, false
}

// parseTextLine reads tracing's text format:
// "TIMESTAMP  LEVEL target: message k=v k=v". The message is located by
// its phrase, so span prefixes ("span{a=1}: ") and odd targets do not
// matter; the fields are whatever follows the message.
func parseTextLine(line []byte, pi int, ev *Event) (map[string]any, bool) {
	ev.Format = FormatRustText
	tok, rest := cutToken(line)
	if t, ok := parseTime(tok); ok {
		ev.Time = t
		lv, r2 := cutToken(bytes.TrimLeft(rest, " \t"))
		if isLevel(lv) {
			ev.Level = string(lv)
			rest = r2
		}
	} else if isLevel(tok) {
		ev.Level = string(tok)
	} else {
		rest = line
	}
	ph := phrases[pi]
	j := bytes.Index(rest, phraseBytes[pi])
	if j < 0 {
		return nil, false
	}
	after := rest[j+len(ph.text):]
	msgEnd := 0
	if ph.prefix {
		// The message runs until the first " key=" token.
		msgEnd = fieldsStart(after)
	}
	ev.Message = ph.text + string(after[:msgEnd])
	return parseLogfmt(after[msgEnd:]), true
}

// fieldsStart finds where "k=v" pairs begin in s (len(s) when none).
func fieldsStart(s []byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			continue
		}
		j := i + 1
		for j < len(s) && (isIdent(s[j])) {
			j++
		}
		if j > i+1 && j < len(s) && s[j] == '=' {
			return i
		}
	}
	return len(s)
}

// parseLogfmt reads space-separated k=v pairs; values may be "quoted"
// (Go escapes), or bracketed {…} / […] with nesting (Rust Debug output).
func parseLogfmt(s []byte) map[string]any {
	out := map[string]any{}
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		ks := i
		for i < len(s) && isIdent(s[i]) {
			i++
		}
		if i == ks || i >= len(s) || s[i] != '=' {
			// Not a pair: skip the token.
			for i < len(s) && s[i] != ' ' {
				i++
			}
			continue
		}
		key := string(s[ks:i])
		var v string
		v, i = logfmtValue(s, i+1)
		out[key] = v
	}
	return out
}

// logfmtValue reads the value starting at s[i] and returns it with the
// index just past it: a quoted value unquoted, a bracketed one whole, a
// bare one up to the next space.
func logfmtValue(s []byte, i int) (string, int) {
	if i < len(s) {
		switch s[i] {
		case '"':
			return quotedValue(s, i)
		case '{', '[':
			return bracketedValue(s, i)
		}
	}
	vs := i
	for i < len(s) && s[i] != ' ' {
		i++
	}
	return string(s[vs:i]), i
}

// quotedValue reads the "…" value at s[vs] with Go's escapes; one that
// does not unquote (cut short, or an escape Go does not know) is kept
// without its quotes.
func quotedValue(s []byte, vs int) (string, int) {
	i := vs + 1
	for i < len(s) && s[i] != '"' {
		if s[i] == '\\' {
			i++
		}
		i++
	}
	if i < len(s) {
		i++
	}
	raw := string(s[vs:min(i, len(s))])
	if v, err := strconv.Unquote(raw); err == nil {
		return v, i
	}
	return strings.Trim(raw, `"`), i
}

// bracketedValue reads the {…} or […] value at s[vs] up to the bracket
// that closes it (nested brackets counted, brackets in strings ignored),
// as Rust's Debug output writes sets, lists and structs.
func bracketedValue(s []byte, vs int) (string, int) {
	i := vs
	depth := 0
	inStr := false
	for i < len(s) {
		c := s[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && (c == '{' || c == '['):
			depth++
		case !inStr && (c == '}' || c == ']'):
			depth--
		}
		i++
		if depth == 0 && !inStr {
			break
		}
	}
	return string(s[vs:min(i, len(s))]), i
}

func isIdent(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func cutToken(s []byte) ([]byte, []byte) {
	i := bytes.IndexAny(s, " \t")
	if i < 0 {
		return s, nil
	}
	return s[:i], s[i:]
}

func firstToken(s []byte) []byte {
	t, _ := cutToken(s)
	return t
}

func isLevel(t []byte) bool {
	switch string(t) {
	case "TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "trace", "debug", "info", "warn", "error":
		return true
	}
	return false
}

// isBrokerToken accepts "<name>-<n>" tokens such as kaas-1 or skafka-0.
func isBrokerToken(t []byte) bool {
	if len(t) < 3 || len(t) > 253 {
		return false
	}
	d := bytes.LastIndexByte(t, '-')
	if d <= 0 || d == len(t)-1 {
		return false
	}
	for _, c := range t[d+1:] {
		if !isDigit(c) {
			return false
		}
	}
	if !(t[0] >= 'a' && t[0] <= 'z' || t[0] >= 'A' && t[0] <= 'Z') {
		return false
	}
	for _, c := range t[:d] {
		if !(isIdent(c) || c == '-') {
			return false
		}
	}
	return true
}

// prefixBroker reads kubectl's --prefix "pod/kaas-1/kaas" (or "kaas-1/kaas",
// or "kaas-1") and returns the pod name.
func prefixBroker(s string) string {
	s = strings.TrimPrefix(s, "pod/")
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s = s[:i]
	}
	if !isBrokerToken([]byte(s)) {
		return ""
	}
	return s
}

// parseTime accepts RFC 3339 with any fraction (and a space instead of T).
func parseTime(b []byte) (time.Time, bool) {
	if len(b) < 19 || len(b) > 40 || !isDigit(b[0]) {
		return time.Time{}, false
	}
	s := string(b)
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// stripANSI removes CSI escape sequences (colours) from b.
func stripANSI(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == 0x1b && i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] < 0x40 || b[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		out = append(out, b[i])
	}
	return out
}

func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func firstStr(vs ...any) string {
	for _, v := range vs {
		if s := str(v); s != "" {
			return s
		}
	}
	return ""
}

func num(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		if f, err := x.Float64(); err == nil {
			return int64(f), true
		}
	case string:
		if n, err := strconv.ParseInt(strings.Trim(x, `"`), 10, 64); err == nil {
			return n, true
		}
	case float64:
		return int64(x), true
	}
	return 0, false
}

// strList reads a broker list: a JSON array, a Rust Debug set
// ({"kaas-0", "kaas-1"}), or a bracketed/space list. nil when absent or
// null; empty when present and empty.
func strList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s := str(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	case string:
		s := strings.TrimSpace(x)
		if s == "" || s == "null" || s == "None" {
			return nil
		}
		s = strings.TrimLeft(s, "{[")
		s = strings.TrimRight(s, "}]")
		out := []string{}
		for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
			part = strings.Trim(part, `"'`)
			if part != "" {
				out = append(out, part)
			}
		}
		return out
	}
	return nil
}

// looksKnown reports whether a line is in one of the known layouts.
func looksKnown(ln []byte) bool {
	ln = bytes.TrimLeft(ln, " \t")
	if bytes.IndexByte(ln, 0x1b) >= 0 {
		ln = stripANSI(ln)
	}
	for range 3 {
		if len(ln) == 0 {
			return false
		}
		switch {
		case ln[0] == '{':
			return (bytes.Contains(ln, []byte(`"timestamp"`)) || bytes.Contains(ln, []byte(`"time"`))) &&
				(bytes.Contains(ln, []byte(`"fields"`)) || bytes.Contains(ln, []byte(`"msg"`)) || bytes.Contains(ln, []byte(`"message"`)))
		case bytes.HasPrefix(ln, []byte("time=")):
			return bytes.Contains(ln, []byte(" msg="))
		case ln[0] == '[':
			if e := bytes.IndexByte(ln, ']'); e > 0 {
				ln = bytes.TrimLeft(ln[e+1:], " ")
				continue
			}
			return false
		case isDigit(ln[0]):
			tok, rest := cutToken(ln)
			if _, ok := parseTime(tok); !ok {
				return false
			}
			rest = bytes.TrimLeft(rest, " \t")
			if isLevel(firstToken(rest)) {
				return true
			}
			ln = rest
			continue
		default:
			tok, rest := cutToken(ln)
			if !isBrokerToken(tok) {
				return false
			}
			ln = bytes.TrimLeft(bytes.TrimLeft(bytes.TrimLeft(rest, " "), "|:"), " ")
			continue
		}
	}
	return false
}
