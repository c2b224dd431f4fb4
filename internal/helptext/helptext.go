// Package helptext holds kaasctl's long help texts as text files embedded
// in the binary: the pages of 'kaasctl help TOPIC' (text/topics/NAME.txt),
// each command's description and usage text (text/commands/PATH.txt and
// PATH.usage.txt, PATH being the command's words joined by "_": groups
// describe is groups_describe), the pages of 'kaasctl help formats'
// (text/formats-*.txt) and what 'kaasctl mcp' tells its clients it is for
// (text/mcp-instructions.txt). A text may name a value the code owns as
// {{name}}; the caller gives it (Vars), so a constant is written once.
package helptext

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

//go:embed text
var files embed.FS

// Vars are the values a text names as {{name}}.
type Vars map[string]string

var placeholder = regexp.MustCompile(`\{\{[A-Za-z][A-Za-z0-9]*\}\}`)

// read is the text file name under text/ with its placeholders filled
// ("" when there is no such file); a placeholder without a value is a bug
// in the caller (the golden help pages catch it), so it panics.
func read(name string, vars Vars) string {
	b, err := files.ReadFile("text/" + name)
	if err != nil {
		return ""
	}
	return placeholder.ReplaceAllStringFunc(string(b), func(p string) string {
		v, ok := vars[p[2:len(p)-2]]
		if !ok {
			panic(fmt.Sprintf("helptext: %s names %s, which the caller does not give", name, p))
		}
		return v
	})
}

// Topic is the page of 'kaasctl help NAME', as it is printed.
func Topic(name string, vars Vars) string { return read("topics/"+name+".txt", vars) }

// Page is a page of text/NAME.txt as it is printed ('help formats').
func Page(name string, vars Vars) string { return read(name+".txt", vars) }

// Command is the description of the command at path ("groups describe"),
// without the file's final newline ("": the command has none).
func Command(path string, vars Vars) string {
	return strings.TrimSuffix(read("commands/"+fileName(path)+".txt", vars), "\n")
}

// Usage is the usage text of the command at path, without the file's
// final newline ("": urfave's, from the command's name and arguments).
func Usage(path string, vars Vars) string {
	return strings.TrimSuffix(read("commands/"+fileName(path)+".usage.txt", vars), "\n")
}

func fileName(path string) string { return strings.Join(strings.Fields(path), "_") }

// Names lists the texts there are (topics/NAME.txt, commands/PATH.txt,
// ...), sorted: for the test that every file is read by some caller.
func Names() []string {
	var out []string
	_ = fs.WalkDir(files, "text", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, "text/"))
		}
		return nil
	})
	slices.Sort(out)
	return out
}
