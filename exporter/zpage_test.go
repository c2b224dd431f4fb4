package exporter

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCRCConcat(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, sizes := range [][2]int{{0, 0}, {0, 5}, {7, 0}, {1, 1}, {1, 2}, {100, 3}, {3, 255}, {9, 256}, {5, 70 << 10}, {40 << 10, 33 << 10}, {11, 1<<20 + 3}} {
		a, b := make([]byte, sizes[0]), make([]byte, sizes[1])
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crcConcat(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), len(b)); got != want {
			t.Errorf("sizes %v: crcConcat %08x, want %08x", sizes, got, want)
		}
	}
}

// A gzip scrape is one gzip member: the page (here many pieces) and then
// the exporter's own metrics, so a reader that stops after the first
// member (curl --compressed does) still gets everything the plain text
// holds.
func TestGzipScrapeIsOneMember(t *testing.T) {
	t.Parallel()
	e := New(Options{})
	bigSnapshot(e, 256<<10)
	var page strings.Builder
	if err := writeText(&page, &e.snap.Load().page); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q", rec.Header().Get("Content-Encoding"))
	}
	body := bytes.NewReader(rec.Body.Bytes())
	zr, err := gzip.NewReader(body)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	first, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(first), page.String()) || !strings.Contains(string(first[page.Len():]), "# TYPE ") {
		t.Fatalf("the first member holds %d bytes: not the page (%d bytes) followed by the own metrics", len(first), page.Len())
	}
	if body.Len() != 0 {
		t.Fatalf("%d bytes after the first gzip member", body.Len())
	}
}
