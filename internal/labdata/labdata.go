// Package labdata finds the captured lab cluster data (shared/testdata/
// lab-go-kaas) for tests, and reads its FindCoordinator transcripts. It is
// used by tests only.
package labdata

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// Dir returns the lab-go-kaas directory: the shared one (found by walking
// up from the working directory to a parent holding shared/SPEC.md), else
// the copy under the repository's testdata/.
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	var repoCopy string
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "shared", "SPEC.md")); err == nil {
			p := filepath.Join(d, "shared", "testdata", "lab-go-kaas")
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				return p, nil
			}
		}
		if repoCopy == "" {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				repoCopy = filepath.Join(d, "testdata", "lab", "lab-go-kaas")
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if repoCopy != "" {
		if _, err := os.Stat(repoCopy); err == nil {
			return repoCopy, nil
		}
	}
	return "", errors.New("lab-go-kaas test data not found (neither ../shared/testdata nor testdata/lab/)")
}

var fcLine = regexp.MustCompile(`FindCoordinator\(([^)]*)\) via \S+ \(v\d+\): node=(-?\d+) \S+ err=0`)

// FindCoordinator reads an api-findcoordinator.txt transcript: group → the
// broker id answered ("skafka-N" for node N). When brokers disagreed, the
// group maps to "" (the tests treat that as a failure).
func FindCoordinator(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := fcLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		id := "skafka-" + strconv.Itoa(n)
		if prev, ok := out[m[1]]; ok && prev != id {
			out[m[1]] = ""
			continue
		}
		out[m[1]] = id
	}
	return out, sc.Err()
}
