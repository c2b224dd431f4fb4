package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Log targets, as kaas's tracing output names its modules.
const (
	targetCluster     = "kaas::cluster"
	targetElection    = "kaas_controller::kube_election"
	targetWriter      = "kaas_controller::assignment_writer"
	targetCoordinator = "kaas_broker::coordinator"
	targetTakeover    = "kaas_broker::group_takeover"
	targetSandbox     = "kaasctl::sandbox"
)

// kv is one log field, kept in the order given.
type kv struct {
	k string
	v any
}

// brokerLog writes one broker's JSON lines in the shape of kaas's stock
// tracing-subscriber JSON formatter: timestamp (RFC 3339, microseconds, Z),
// level, fields{message, ...}, target.
type brokerLog struct {
	mu   sync.Mutex
	f    *os.File
	path string
	now  func() time.Time
}

func openBrokerLog(dir, id string, now func() time.Time) (*brokerLog, error) {
	p := filepath.Join(dir, id+".log")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &brokerLog{f: f, path: p, now: now}, nil
}

// line renders one log line (without writing it).
func renderLogLine(ts time.Time, level, target, msg string, fields ...kv) []byte {
	var b strings.Builder
	b.WriteString(`{"timestamp":"`)
	b.WriteString(ts.UTC().Format("2006-01-02T15:04:05.000000Z"))
	b.WriteString(`","level":"`)
	b.WriteString(level)
	b.WriteString(`","fields":{"message":`)
	writeJSON(&b, msg)
	for _, f := range fields {
		b.WriteByte(',')
		writeJSON(&b, f.k)
		b.WriteByte(':')
		writeJSON(&b, f.v)
	}
	b.WriteString(`},"target":`)
	writeJSON(&b, target)
	b.WriteString("}\n")
	return []byte(b.String())
}

func writeJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	default:
		data, err := json.Marshal(v)
		if err != nil {
			data = []byte(`"?"`)
		}
		b.Write(data)
	}
}

func (l *brokerLog) log(level, target, msg string, fields ...kv) {
	if l == nil {
		return
	}
	line := renderLogLine(l.now(), level, target, msg, fields...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_, _ = l.f.Write(line)
	}
}

func (l *brokerLog) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
}

// debugSet renders a sorted id list the way Rust's Debug prints a
// BTreeSet<String>: {"kaas-0", "kaas-1"}.
func debugSet(ids []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(id))
	}
	b.WriteByte('}')
	return b.String()
}
