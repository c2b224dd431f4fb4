package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/kaasctl/kaasctl/internal/grouphash"
)

const benchKeys = 1_000_000

// benchInput is 1,000,000 realistic group ids, one per line.
func benchInput() []byte {
	var b bytes.Buffer
	for i := 0; i < benchKeys; i++ {
		fmt.Fprintf(&b, "orders-consumer-%d\n", i)
	}
	return b.Bytes()
}

// bareHashPrint is the floor SPEC §7 compares against: read each line,
// FNV-1a it, pick the slot, print key and broker.
func bareHashPrint(in []byte, out io.Writer, ids []string) {
	br := bufio.NewReaderSize(bytes.NewReader(in), 256<<10)
	bw := bufio.NewWriterSize(out, 256<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 1 {
			key := line[:len(line)-1]
			h := grouphash.FNV1a32Bytes(key)
			bw.Write(key)
			bw.WriteByte('\t')
			bw.WriteString(ids[h%uint32(len(ids))])
			bw.WriteByte('\n')
		}
		if err != nil {
			break
		}
	}
	bw.Flush()
}

// BenchmarkWhoisStdin1M runs 'kaasctl whois --stdin -o jsonl' over 1,000,000
// keys and the bare hash-and-print loop over the same input, and reports
// both and their ratio (targets: whois under 1 s, within 3x of the loop).
func BenchmarkWhoisStdin1M(b *testing.B) {
	TuneRuntime() // as the binary runs
	in := benchInput()
	dir := b.TempDir()
	writeFile(&testing.T{}, dir, "assignment.json", `{"controllerEpoch":3,"assignmentVersion":41,"brokers":[`+
		`{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"},{"id":"kaas-2","health":"alive"},{"id":"kaas-3","health":"alive"},{"id":"kaas-4","health":"alive"}],`+
		`"partitions":[],"consumerGroups":[{"groupId":"orders-consumer-7","broker":"kaas-3","epoch":1}]}`)
	ids := []string{"kaas-0", "kaas-1", "kaas-2", "kaas-3", "kaas-4"}
	var whoisTotal, bareTotal time.Duration
	var outBytes int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cw := &countingWriter{}
		ios := &IOStreams{In: bytes.NewReader(in), Out: cw, Err: io.Discard, Getenv: func(string) string { return "" }}
		start := time.Now()
		if code := Main([]string{"kaasctl", "whois", "--stdin", "-o", "jsonl", "--cluster-dir", dir}, ios); code != 0 {
			b.Fatalf("exit %d", code)
		}
		whoisTotal += time.Since(start)
		outBytes = cw.n
		start = time.Now()
		bareHashPrint(in, io.Discard, ids)
		bareTotal += time.Since(start)
	}
	b.StopTimer()
	w := whoisTotal.Seconds() / float64(b.N)
	bare := bareTotal.Seconds() / float64(b.N)
	b.ReportMetric(w, "whois-s/1M-keys")
	b.ReportMetric(bare, "bare-s/1M-keys")
	b.ReportMetric(w/bare, "ratio-vs-bare")
	b.ReportMetric(float64(outBytes)/1e6, "MB-out")
	b.Logf("whois --stdin -o jsonl: %.3f s per 1M keys (target < 1 s); bare loop %.3f s; ratio %.2fx (target <= 3x); output %s bytes",
		w, bare, w/bare, strconv.FormatInt(outBytes, 10))
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
