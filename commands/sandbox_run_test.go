package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/kaasctl/kaasctl/internal/sandbox"
	"github.com/kaasctl/kaasctl/internal/volume"
	"github.com/kaasctl/kaasctl/views"
)

func TestRunSandboxDirect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errb bytes.Buffer
	g := mustGlobals(t, &IOStreams{In: strings.NewReader("status\nquit\n"), Out: &out, Err: &errb}, "-o", "json")
	o := sandboxOptions{Brokers: 2, DataDir: dir, Placement: sandbox.PlacementHash, Failover: sandbox.FailoverDrop,
		Topics: []sandbox.Topic{{Name: "orders", Partitions: 2}}}
	if err := runSandbox(context.Background(), g, o); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	full := out.String()
	var info views.SandboxInfo
	if err := json.NewDecoder(strings.NewReader(full)).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if len(info.Brokers) != 2 || info.DataDir != dir || info.Placement != "hash" || info.Control != "" || info.TempDir {
		t.Fatalf("info %+v", info)
	}
	if !strings.Contains(full, "assignment v") {
		t.Fatalf("status not answered: %q", full)
	}
	if _, err := os.Stat(info.StateFile); !os.IsNotExist(err) {
		t.Fatalf("state file %s left after the run: %v", info.StateFile, err)
	}
	if _, err := os.Stat(volume.DataDirLayout(dir, "").AssignmentPath()); err != nil {
		t.Fatalf("volume not kept in the given dir: %v", err)
	}
}
