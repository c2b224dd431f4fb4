package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConcurrent(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
		want      bool
		why       string
	}{
		{"plain", "package p\nfunc F() int { return 1 }\n", false, ""},
		{"gostmt", "package p\nfunc F() { ch := make(chan int); go func() { ch <- 1 }(); <-ch }\n", true, "go statement at a.go:2"},
		{"sync", "package p\nimport \"sync\"\nvar mu sync.Mutex\n", true, "a.go imports sync"},
		{"atomic", "package p\nimport \"sync/atomic\"\nvar n atomic.Int64\n", true, "a.go imports sync/atomic"},
		{"fsnotify", "package p\nimport _ \"github.com/fsnotify/fsnotify\"\n", true, "a.go imports github.com/fsnotify/fsnotify"},
		{"word", "package p\n// go statements in comments do not count: go func()\nvar gopher = \"go \"\n", false, ""},
	}
	for _, c := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		got, why, err := concurrent(pkg{ImportPath: "p", Dir: dir, GoFiles: []string{"a.go"}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want || why != c.why {
			t.Errorf("%s: concurrent = %v (%q), want %v (%q)", c.name, got, why, c.want, c.why)
		}
	}
	if _, _, err := concurrent(pkg{Dir: t.TempDir(), GoFiles: []string{"missing.go"}}); err == nil || !strings.Contains(err.Error(), "missing.go") {
		t.Fatalf("a missing file: err = %v", err)
	}
}
