package volume

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The volume check hands on assignment.json as it read it, so that the
// checks after it (doctor's entry audit) do not read it again; an
// unreadable one is handed on as nil, with its finding.
func TestCheckVolumeHandsOnTheAssignment(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	cd := filepath.Join(data, "__cluster")
	if err := os.MkdirAll(cd, 0o755); err != nil {
		t.Fatal(err)
	}
	l := Layout{DataDir: data, ClusterDir: cd}
	good := `{"controllerEpoch":1,"assignmentVersion":3,"controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"}],"partitions":[],"consumerGroups":[{"groupId":"g","broker":"kaas-0","epoch":1}]}`
	if err := os.WriteFile(l.AssignmentPath(), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := CheckVolume(l, time.Now(), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Assignment; a == nil || a.AssignmentVersion != 3 || len(a.ConsumerGroups) != 1 {
		t.Fatalf("assignment handed on: %+v", res.Assignment)
	}
	if err := os.WriteFile(l.AssignmentPath(), []byte(`{"controllerEpoch":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err = CheckVolume(l, time.Now(), ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range res.Findings {
		found = found || f.Code == CodeAssignmentUnreadable
	}
	if res.Assignment != nil || !found {
		t.Errorf("torn assignment: handed on %+v, unreadable finding %v", res.Assignment, found)
	}
}
