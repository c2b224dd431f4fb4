package safefs

import (
	"fmt"
	"path/filepath"
	"strings"
)

// splitRel splits a relative path into components; ".." is refused.
func splitRel(rel string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(filepath.ToSlash(rel), "/") {
		switch p {
		case "", ".":
			continue
		case "..":
			return nil, fmt.Errorf("%s: a path with \"..\" is not below its directory", rel)
		}
		out = append(out, p)
	}
	return out, nil
}
