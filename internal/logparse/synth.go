package logparse

import (
	"bufio"
	"io"
	"strconv"
	"time"
)

// Synthesize writes about size bytes of realistic kaas Rust tracing JSON
// logs to w, for benchmarks: mostly request noise, 2% heartbeat lines from
// a kaas_controller target (they pass the byte prefilter but are not
// recognized), and every 20,000 lines an "assignment published" and a
// "group coordinator change" line.
func Synthesize(w io.Writer, size int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	t0 := time.Date(2026, 7, 23, 0, 0, 0, 0, time.UTC)
	var line []byte
	var ts []byte
	var written int64
	for i := 0; written < size; i++ {
		if i%1000 == 0 {
			ts = t0.Add(time.Duration(i)*time.Millisecond).AppendFormat(ts[:0], "2006-01-02T15:04:05.000000Z")
		}
		line = append(line[:0], `{"timestamp":"`...)
		line = append(line, ts...)
		switch {
		case i%20000 == 0:
			line = append(line, `","level":"INFO","fields":{"message":"controller active: assignment published","epoch":`...)
			line = strconv.AppendInt(line, int64(1+i/1000000), 10)
			line = append(line, `,"version":`...)
			line = strconv.AppendInt(line, int64(i/20000), 10)
			line = append(line, `},"target":"kaas::cluster"}`...)
		case i%20000 == 7:
			line = append(line, `","level":"INFO","fields":{"message":"group coordinator change","group":"group-`...)
			line = strconv.AppendInt(line, int64(i%977), 10)
			line = append(line, `","from":"kaas-1","to":"kaas-2","assignment_version":`...)
			line = strconv.AppendInt(line, int64(i/20000), 10)
			line = append(line, `,"side":"gained"},"target":"kaas_broker::group_takeover"}`...)
		case i%50 == 3:
			line = append(line, `","level":"DEBUG","fields":{"message":"heartbeat received","broker":"kaas-`...)
			line = strconv.AppendInt(line, int64(i%5), 10)
			line = append(line, `","healthy":true},"target":"kaas_controller::heartbeat_server"}`...)
		case i%3 == 0:
			line = append(line, `","level":"INFO","fields":{"message":"fetch served","topic":"orders","partition":`...)
			line = strconv.AppendInt(line, int64(i%12), 10)
			line = append(line, `,"bytes":`...)
			line = strconv.AppendInt(line, int64(i%65536), 10)
			line = append(line, `},"target":"kaas_broker::handlers::fetch"}`...)
		default:
			line = append(line, `","level":"INFO","fields":{"message":"produce request handled","topic":"payments","partition":`...)
			line = strconv.AppendInt(line, int64(i%24), 10)
			line = append(line, `,"records":`...)
			line = strconv.AppendInt(line, int64(i%500), 10)
			line = append(line, `,"acks":-1},"target":"kaas_broker::handlers::produce"}`...)
		}
		line = append(line, '\n')
		n, err := bw.Write(line)
		written += int64(n)
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}
