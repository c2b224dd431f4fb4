package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/completion"
	"github.com/kaasctl/kaasctl/views"
)

func TestRunCompletionAndComplete(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	ios := &IOStreams{Out: &out, Err: &errb}
	g := mustGlobals(t, ios)
	if err := runCompletion(context.Background(), g, completionOptions{Script: completion.Scripts["fish"]}); err != nil {
		t.Fatal(err)
	}
	if out.String() != completion.Scripts["fish"] {
		t.Fatalf("completion fish printed %q", out.String())
	}
	out.Reset()
	if err := runComplete(ios, completeOptions{App: NewApp(ios), Words: []string{"config", "set-profile", "--sasl-m"}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != "--sasl-mechanism" {
		t.Fatalf("flag candidates %q", got)
	}
	out.Reset()
	if err := runComplete(ios, completeOptions{App: NewApp(ios), Words: []string{"config", "set-profile", "--sasl-mechanism=SCRAM"}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(out.String()); len(got) != 2 || got[0] != "--sasl-mechanism=SCRAM-SHA-256" {
		t.Fatalf("value candidates %q", got)
	}
	out.Reset()
	if err := runComplete(ios, completeOptions{App: NewApp(ios), Words: []string{"config", "h"}}); err != nil || out.Len() != 0 {
		t.Fatalf("a parent's help sub-command offered: %q %v", out.String(), err)
	}
}

func TestRunVersionDirect(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	g := mustGlobals(t, &IOStreams{Out: &out, Err: &out}, "-o", "json")
	if err := runVersion(context.Background(), g, versionOptions{}); err != nil {
		t.Fatal(err)
	}
	var v views.VersionView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Version != Version || v.SupportedKaas != SupportedKaas || v.Platform == "" {
		t.Fatalf("%s: %v", out.String(), err)
	}
}
