package volume

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every parser: never panics, returns either a *FileError or a value, and
// what it returns is internally consistent.

func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var fe *FileError
	if !errors.As(err, &fe) || fe.Problem == "" {
		t.Fatalf("error is not a *FileError with a problem: %#v", err)
	}
}

func checkFindings(t *testing.T, fs []Finding, path string) {
	t.Helper()
	for _, f := range fs {
		if f.Path != path || f.Code == "" || f.Message == "" || (f.Severity != SevError && f.Severity != SevWarning && f.Severity != SevInfo) {
			t.Fatalf("bad finding %+v", f)
		}
	}
}

func FuzzParseOffsetFile(f *testing.F) {
	for _, s := range []string{
		`{"offsets":{"orders/0":1042,"orders/1":998,"audit/0":17},"metadata":{"orders/0":"host-a"}}`,
		`{"orders/0":12}`, `{}`, ``, `null`, `{"offsets":null}`, `{"offsets":{"a/b/0":1}}`, `{"offsets":{"x":"1"}}`,
		`{"offsets":{"t/0":-1},"metadata":{"t/1":"m"},"extra":1}`, `{"offsets":{"t/00":1,"t/+1":2,"/0":3}}`, `[1,2]`, `{"offsets":{"t/0":1e3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		of, fs, err := ParseOffsetFile("p.json", data)
		checkErr(t, err)
		checkFindings(t, fs, "p.json")
		if err != nil {
			if of != nil {
				t.Fatal("value and error")
			}
			return
		}
		if of == nil || (of.Format != FormatEnvelope && of.Format != FormatPlainMap) {
			t.Fatalf("result %+v", of)
		}
		if !slices.IsSortedFunc(of.Entries, func(a, b OffsetEntry) int {
			if c := strings.Compare(a.Topic, b.Topic); c != 0 {
				return c
			}
			return int(a.Partition) - int(b.Partition)
		}) {
			t.Fatal("entries not sorted")
		}
		for _, e := range of.Entries {
			tp, p, err := SplitOffsetKey(e.Topic + "/" + strconv.Itoa(int(e.Partition)))
			if err != nil || tp != e.Topic || p != e.Partition {
				t.Fatalf("entry %+v does not round-trip", e)
			}
		}
		if of.BrokerSeesEmpty != (of.Format == FormatPlainMap && len(of.Entries) > 0) {
			t.Fatalf("BrokerSeesEmpty %v for %s with %d entries", of.BrokerSeesEmpty, of.Format, len(of.Entries))
		}
	})
}

func FuzzSplitOffsetKey(f *testing.F) {
	for _, s := range []string{"orders/0", "a/b/12", "noslash", "/0", "t/", "t/-1", "t/2147483648", "t/01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, k string) {
		topic, p, err := SplitOffsetKey(k)
		if err != nil {
			return
		}
		if p < 0 || topic == "" || topic+"/"+strconv.Itoa(int(p)) != k {
			t.Fatalf("%q split into %q / %d", k, topic, p)
		}
	})
}

func FuzzParseTxnSlot(f *testing.F) {
	for _, s := range []string{
		`{"payments-tx-0":{"pid":3298534884100,"epoch":2,"partitions":[{"topic":"orders","partitions":[0,3]}],"ongoingSinceMs":1784800000000,"transactionTimeoutMs":60000,"state":"Ongoing","groups":["orders-app"]}}`,
		`{"tx-commit":{"pid":1,"epoch":0,"state":""}}`, `{"tx-bare":{"pid":1,"epoch":0,"state":"Empty"}}`, `{}`, ``, `null`,
		`{"a":{"pid":1,"epoch":70000}}`, `{"a":{"epoch":1}}`, `{"a":[]}`, `{"a":{"pid":1,"epoch":1,"partitions":null}}`,
	} {
		f.Add([]byte(s), 9)
	}
	f.Fuzz(func(t *testing.T, data []byte, slot int) {
		if slot < -1 || slot >= 50 {
			slot = -1
		}
		sf, fs, err := ParseTxnSlot("slot.json", slot, data)
		checkErr(t, err)
		checkFindings(t, fs, "slot.json")
		if err != nil {
			return
		}
		bad := false
		for _, x := range fs {
			bad = bad || x.Code == CodeTxnUnknownState || x.Code == CodeTxnBadEntry
		}
		for _, e := range sf.Entries {
			if e.Undecodable != bad {
				t.Fatalf("entry %q undecodable=%v, slot has bad entries=%v", e.ID, e.Undecodable, bad)
			}
			if e.State == "" {
				t.Fatalf("entry %q has an empty state (want Empty)", e.ID)
			}
		}
	})
}

func FuzzParseFenceFile(f *testing.F) {
	for _, s := range []string{`{"3298534884100":2}`, `{}`, ``, `{"abc":1}`, `{"1":40000}`, `{"1":"2"}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ff, fs, err := ParseFenceFile("from-kaas-0.json", "kaas-0", data)
		checkErr(t, err)
		checkFindings(t, fs, "from-kaas-0.json")
		if err == nil && (ff == nil || !slices.IsSortedFunc(ff.Entries, func(a, b FenceEntry) int {
			if a.PID < b.PID {
				return -1
			}
			if a.PID > b.PID {
				return 1
			}
			return 0
		})) {
			t.Fatal("fence entries missing or unsorted")
		}
	})
}

func FuzzParseMarker(f *testing.F) {
	for _, s := range []string{
		`{"transactionalId":"tx","producerId":5,"producerEpoch":1,"commit":true,"coordinatorEpoch":4,"partitions":[{"topic":"o","partitions":[1]}]}`,
		`{"producerId":5}`, ``, `{"transactionalId":"tx","producerId":5,"producerEpoch":99999,"commit":false}`, `null`,
	} {
		f.Add([]byte(s), "5-1.json")
	}
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		m, fs, err := ParseMarker("m.json", "kaas-1", name, data)
		checkErr(t, err)
		checkFindings(t, fs, "m.json")
		if err == nil && m == nil {
			t.Fatal("nil marker without error")
		}
	})
}

func FuzzParseProducerIDFile(f *testing.F) {
	for _, s := range []string{`{"nextBlock":1000}`, `{"nextBlock":-5}`, `{"nextBlock":"x"}`, `{}`, ``, `{"nextBlock":1500}`, `{"nextBlock":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, fs, err := ParseProducerIDFile("kaas-0.json", "kaas-0", data)
		checkErr(t, err)
		checkFindings(t, fs, "kaas-0.json")
		if err == nil && (p == nil || (p.NextBlock < 0) != slices.ContainsFunc(fs, func(x Finding) bool { return x.Severity == SevError })) {
			t.Fatalf("negative nextBlock must be an error finding: %+v %+v", p, fs)
		}
	})
}

func FuzzParseManifest(f *testing.F) {
	for _, s := range []string{`{"epoch":1,"highWatermark":100,"logStartOffset":50}`, `{"epoch":1,"highWatermark":10,"logStartOffset":20}`, `{"epoch":1}`, ``, `null`, `{"epoch":1,"highWatermark":"1","logStartOffset":0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, fs, err := ParseManifest("manifest.json", "t", 0, data)
		checkErr(t, err)
		checkFindings(t, fs, "manifest.json")
		if err != nil {
			return
		}
		bad := m.LogStartOffset < 0 || m.HighWatermark < 0 || m.LogStartOffset > m.HighWatermark
		if bad != (len(fs) > 0) {
			t.Fatalf("manifest %+v findings %+v", m, fs)
		}
	})
}

// FuzzFastEnvelope checks that the fast path agrees with the general parser
// on every input it accepts.
// manyKeys is an envelope of n partitions of t; dup >= 0 repeats that
// partition's key at the end.
func manyKeys(n, dup int) string {
	var b strings.Builder
	b.WriteString(`{"offsets":{`)
	for i := range n {
		fmt.Fprintf(&b, `"t/%d":%d,`, i, i)
	}
	if dup >= 0 {
		fmt.Fprintf(&b, `"t/%d":0,`, dup)
	}
	return strings.TrimSuffix(b.String(), ",") + `}}`
}

func FuzzFastEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"offsets":{"orders/0":1042,"orders/1":998},"metadata":{"orders/0":"host-a"}}`,
		` { "metadata" : { "t/0" : "m" } , "offsets" : { "t/0" : 0 } } `, `{"offsets":{"t/0":1,"t/0":2}}`,
		`{"offsets":{"t/0":9223372036854775807}}`, `{"offsets":{"t/0":9223372036854775808}}`, `{"offsets":{"t/0":-0}}`,
		`{"offsets":{"a\u00e9/0":1}}`, `{"offsets":{"é/0":1}}`, `{"offsets":{"t/0":1.0}}`, `{"offsets":{}}`,
		`{"offsets":{"t/0":1,"t/1":1,"t/2":1,"t/1":2}}`, `{"offsets":{"t/0":1},"metadata":{"t/0":"a:b:c:d"}}`,
		manyKeys(20, -1), manyKeys(20, 17), // past smallKeys: without and with a duplicate
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := fastEnvelope("p", data)
		if !ok {
			return
		}
		slow, fs, err := parseOffsetFileGeneral("p", data)
		if err != nil || len(fs) != 0 {
			t.Fatalf("fast path accepted %q; general parser: %v %+v", data, err, fs)
		}
		if !slices.Equal(fast.Entries, slow.Entries) || fast.Format != slow.Format || fast.BrokerSeesEmpty != slow.BrokerSeesEmpty {
			t.Fatalf("%q: fast %+v, general %+v", data, fast, slow)
		}
	})
}

// FuzzSummarizeFast checks the allocation-free summary against the general
// parser: whenever it accepts, the general parser finds nothing wrong and
// counts the same partitions.
func FuzzSummarizeFast(f *testing.F) {
	for _, s := range []string{
		`{"offsets":{"orders/0":1042,"orders/1":998},"metadata":{"orders/0":"host-a"}}`,
		`{"offsets":{"t/0":1,"t/0":2}}`, `{"offsets":{"t/0":1},"metadata":{"t/1":"x"}}`, `{"offsets":{"t/01":1}}`,
		`{"offsets":{"t/2147483648":1}}`, `{"offsets":{"/0":1}}`, `{"offsets":{"t/0":-1}}`, `{"offsets":{}}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, ok := summarizeFast(data)
		if !ok {
			return
		}
		of, fs, err := parseOffsetFileGeneral("p", data)
		if err != nil || len(fs) != 0 || of.Format != sum.Format || len(of.Entries) != sum.Partitions {
			t.Fatalf("summary accepted %q as %+v; general parser: %v %+v %+v", data, sum, err, fs, of)
		}
	})
}
