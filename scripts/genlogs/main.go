// Command genlogs writes synthetic kaas broker logs for benchmarks
// (scripts/bench-trace.sh): realistic Rust tracing JSON lines with a few
// controller and coordinator-change lines among request noise.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kaasctl/kaasctl/internal/logparse"
)

func main() {
	size := flag.Int64("size", 1<<30, "total bytes to write")
	files := flag.Int("files", 1, "number of files (kaas-0.log, kaas-1.log, ...) sharing the size")
	dir := flag.String("dir", ".", "output directory (created)")
	flag.Parse()
	if *files < 1 || *size < 1 {
		fmt.Fprintln(os.Stderr, "genlogs: -size and -files must be positive")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "genlogs:", err)
		os.Exit(1)
	}
	for i := 0; i < *files; i++ {
		p := filepath.Join(*dir, fmt.Sprintf("kaas-%d.log", i))
		f, err := os.Create(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, "genlogs:", err)
			os.Exit(1)
		}
		if err := logparse.Synthesize(f, *size/int64(*files)); err != nil {
			fmt.Fprintln(os.Stderr, "genlogs:", err)
			os.Exit(1)
		}
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "genlogs:", err)
			os.Exit(1)
		}
	}
}
