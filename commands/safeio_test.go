//go:build unix

package commands

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runCLIWithin is runCLI on its own goroutine with a deadline: a command
// that blocks fails its test instead of hanging the suite.
func runCLIWithin(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	done := make(chan cliResult, 1)
	go func() { done <- runCLI(t, "", env, args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(60 * time.Second):
		t.Fatalf("kaasctl %s did not finish (blocked on a read?)", strings.Join(args, " "))
	}
	return cliResult{}
}

const safeAssignment = `{"controllerEpoch":1,"assignmentVersion":3,"generatedAt":"2026-11-30T10:00:00Z","controller":"kaas-0","brokers":[{"id":"kaas-0","health":"alive"},{"id":"kaas-1","health":"alive"}],"partitions":[]}`

// safeVolume is a small volume: assignment.json, group g's offsets and
// the manifest of orders/0 (for offline resets).
func safeVolume(t *testing.T) (data, cd string) {
	t.Helper()
	data = t.TempDir()
	cd = filepath.Join(data, "__cluster")
	writeFile(t, cd, "assignment.json", safeAssignment)
	writeFile(t, cd, "__consumer_offsets/g.json", `{"offsets":{"orders/0":5}}`)
	writeFile(t, data, "orders/0/manifest.json", `{"epoch":1,"highWatermark":50,"logStartOffset":3}`)
	writePartitionLog(t, data, "orders/0", 3, 50)
	return data, cd
}

// replaceWith turns path into a FIFO or a link to /dev/zero.
func replaceWith(t *testing.T, path, kind string) {
	t.Helper()
	os.Remove(path)
	switch kind {
	case "fifo":
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("mkfifo not possible here: %v", err)
		}
	case "devzero":
		if err := os.Symlink("/dev/zero", path); err != nil {
			t.Fatal(err)
		}
	}
}

// A FIFO or a link to /dev/zero as assignment.json or <group>.json: every
// reading command finishes and names the file.
func TestSpecialFilesNeverHang(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "devzero"} {
		for _, which := range []string{"assignment", "group"} {
			t.Run(kind+"-"+which, func(t *testing.T) {
				data, cd := safeVolume(t)
				bad := filepath.Join(cd, "assignment.json")
				if which == "group" {
					bad = filepath.Join(cd, "__consumer_offsets", "g.json")
				}
				replaceWith(t, bad, kind)
				want := "FIFO"
				if kind == "devzero" {
					want = "/dev/zero"
				}
				cmds := [][]string{
					{"whois", "g", "--data-dir", data},
					{"groups", "list", "--data-dir", data},
					{"volume", "check", "--data-dir", data},
					{"watch", "--once", "--data-dir", data},
					{"offsets", "reset", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-earliest", "--offline", "--execute"},
				}
				for _, args := range cmds {
					r := runCLIWithin(t, nil, args...)
					all := r.Out + r.Err
					mentions := strings.Contains(all, bad) && strings.Contains(all, want)
					switch {
					case which == "assignment" && (args[0] == "whois" || args[0] == "watch"):
						// They need the assignment: an error naming it.
						if r.Code != 1 || !mentions {
							t.Errorf("%v: exit %d, want 1 and a message naming %s as %s:\n%s", args, r.Code, bad, want, all)
						}
					case args[0] == "volume":
						if r.Code != 3 || !mentions {
							t.Errorf("%v: exit %d, want 3 and a finding naming %s as %s:\n%s", args, r.Code, bad, want, all)
						}
					case which == "group" && args[0] == "offsets":
						if r.Code == 0 || !mentions {
							t.Errorf("%v: exit %d, want a failure naming %s as %s:\n%s", args, r.Code, bad, want, all)
						}
					case which == "group" && args[0] == "groups":
						if !mentions {
							t.Errorf("%v: exit %d, want a warning naming %s as %s:\n%s", args, r.Code, bad, want, all)
						}
					}
				}
			})
		}
	}
}

// A copied snapshot (assignment.json directly in --data-dir) whose
// assignment.json is a FIFO: the error names the FIFO, not "holds neither
// __cluster/ nor assignment.json".
func TestSnapshotDirWithSpecialAssignment(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "devzero"} {
		snap := t.TempDir()
		writeFile(t, snap, "__consumer_offsets/g.json", `{"offsets":{"orders/0":5}}`)
		replaceWith(t, filepath.Join(snap, "assignment.json"), kind)
		want := map[string]string{"fifo": "FIFO", "devzero": "/dev/zero"}[kind]
		r := runCLIWithin(t, nil, "whois", "g", "--data-dir", snap)
		if r.Code != 1 || !strings.Contains(r.Err, "assignment.json") || !strings.Contains(r.Err, want) || strings.Contains(r.Err, "holds neither") {
			t.Errorf("%s: whois: exit %d %s", kind, r.Code, r.Err)
		}
		r = runCLIWithin(t, nil, "volume", "check", "--data-dir", snap)
		if r.Code != 3 || !strings.Contains(r.Out, "assignment") || !strings.Contains(r.Out+r.Err, want) {
			t.Errorf("%s: volume check: exit %d\n%s%s", kind, r.Code, r.Out, r.Err)
		}
	}
}

// volume repair on a clean volume prints no bare table header; when its
// only change fails (a planted .kaasctl-quarantine link), it does not claim
// that files were set aside.
func TestVolumeRepairNothingAndAllFailed(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	r := runCLIWithin(t, nil, "volume", "repair", "--data-dir", data, "--execute")
	if r.Code != 0 || r.Out != "" || !strings.Contains(r.Err, "nothing to repair") {
		t.Errorf("clean volume: exit %d, stdout %q, stderr %s", r.Code, r.Out, r.Err)
	}
	if r := runCLIWithin(t, nil, "volume", "repair", "--data-dir", data, "-o", "json"); !strings.Contains(r.Out, `"actions": []`) {
		t.Errorf("json of a clean volume: %s", r.Out)
	}
	tmp := filepath.Join(cd, "__consumer_offsets", "g.json.123.tmp")
	writeFile(t, filepath.Dir(tmp), filepath.Base(tmp), `{"offsets":{}}`)
	old := time.Now().Add(-3 * time.Hour)
	os.Chtimes(tmp, old, old)
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(cd, ".kaasctl-quarantine")); err != nil {
		t.Fatal(err)
	}
	r = runCLIWithin(t, nil, "volume", "repair", "--data-dir", data, "--execute")
	if r.Code != 1 || !strings.Contains(r.Out, "FAILED") || strings.Contains(r.Err, "files set aside are in") || !strings.Contains(r.Err, "no change made") {
		t.Errorf("planted quarantine link: exit %d\n%s%s", r.Code, r.Out, r.Err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("repair wrote through the link: %v", ents)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("the temp file moved: %v", err)
	}
}

// groups describe of a group whose file is a FIFO or a link names the file
// and what it is, rather than "no offset file".
func TestDescribeNamedGroupSpecialFile(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"fifo", "devzero"} {
		data, cd := safeVolume(t)
		bad := filepath.Join(cd, "__consumer_offsets", "g.json")
		replaceWith(t, bad, kind)
		want := map[string]string{"fifo": "FIFO", "devzero": "/dev/zero"}[kind]
		r := runCLIWithin(t, nil, "groups", "describe", "g", "--data-dir", data)
		if r.Code != 1 || !strings.Contains(r.Err, bad) || !strings.Contains(r.Err, want) || !strings.Contains(r.Err, "no readable offset file") {
			t.Errorf("%s: exit %d\n%s%s", kind, r.Code, r.Out, r.Err)
		}
	}
}

// A reset or delete with nothing to plan prints no bare table header: the
// reason is on stderr, stdout stays empty (and -o json still has its document).
func TestResetNothingPlannedNoBareHeader(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	replaceWith(t, filepath.Join(cd, "__consumer_offsets", "g.json"), "fifo")
	for _, args := range [][]string{
		{"offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-earliest"},
		{"offsets", "delete", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders"},
	} {
		r := runCLIWithin(t, nil, args...)
		if r.Code == 0 || r.Out != "" || !strings.Contains(r.Err, "FIFO") {
			t.Errorf("%v: exit %d, stdout %q, stderr %s", args, r.Code, r.Out, r.Err)
		}
		if r := runCLIWithin(t, nil, append(args, "-o", "json")...); !strings.HasPrefix(strings.TrimSpace(r.Out), "{") {
			t.Errorf("%v -o json: stdout %q", args, r.Out)
		}
	}
}

// volume repair lists the special files and links volume check reports in
// the offsets dir as skipped, with the reason, and leaves them as they are;
// it never says "nothing to repair" in silence about them.
func TestVolumeRepairListsSpecialFilesItSkips(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	od := filepath.Join(cd, "__consumer_offsets")
	replaceWith(t, filepath.Join(od, "fifo.json"), "fifo")
	replaceWith(t, filepath.Join(od, "zero.json"), "devzero")
	if err := os.Symlink(t.TempDir(), filepath.Join(od, "linked")); err != nil {
		t.Fatal(err)
	}
	check := runCLIWithin(t, nil, "volume", "check", "--data-dir", data)
	if check.Code != 3 || !strings.Contains(check.Out, "linked") || strings.Contains(check.Out, "a directory, in the offsets dir: reading it would block") {
		t.Fatalf("volume check: exit %d\n%s", check.Code, check.Out)
	}
	r := runCLIWithin(t, nil, "volume", "repair", "--data-dir", data, "--execute", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Err)
	}
	var rep struct {
		Actions []struct{ Action, Path, Group, Detail string }
	}
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Out)
	}
	skipped := map[string]string{}
	for _, a := range rep.Actions {
		if a.Action == "skip" {
			skipped[filepath.Base(a.Path)] = a.Detail
		}
	}
	for name, want := range map[string]string{"fifo.json": "FIFO", "zero.json": "/dev/zero", "linked": "a directory"} {
		if !strings.Contains(skipped[name], want) || !strings.Contains(skipped[name], "remove") {
			t.Errorf("%s: skip detail %q, want one naming %q and the fix (all actions: %+v)", name, skipped[name], want, rep.Actions)
		}
	}
	if strings.Contains(r.Err, "nothing to repair") && !strings.Contains(r.Err, "left alone on purpose") {
		t.Errorf("stderr: %s", r.Err)
	}
	for _, name := range []string{"fifo.json", "zero.json", "linked"} {
		if _, err := os.Lstat(filepath.Join(od, name)); err != nil {
			t.Errorf("%s was touched: %v", name, err)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// watch started before the cluster exists waits for it.
func TestWatchWaitsForTheVolume(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data") // does not exist yet
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "watch", "--data-dir", data, "--poll-interval", "10ms", "--count", "1", "--timeout", "60s", "-o", "jsonl"},
			&IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	}()
	// Wait until the watch says it is waiting (a guard, not a timing assertion).
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errb.String(), "waiting for it to appear"); {
		if time.Now().After(deadline) {
			t.Fatalf("watch is not waiting: %s", errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The controller starts: the data dir, then the cluster dir and its
	// assignment (written by rename, as kaas does).
	os.MkdirAll(filepath.Join(data, "__cluster"), 0o755)
	tmp := filepath.Join(data, "__cluster", "assignment.json.tmp")
	os.WriteFile(tmp, []byte(safeAssignment), 0o644)
	os.Rename(tmp, filepath.Join(data, "__cluster", "assignment.json"))
	var code int
	select {
	case code = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("watch did not finish")
	}
	if code != 0 || !strings.Contains(errb.String(), "the volume appeared") {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	// --once does not wait: a clear error, exit 1.
	r := runCLIWithin(t, nil, "watch", "--once", "--data-dir", filepath.Join(t.TempDir(), "nothing"))
	if r.Code != 1 || !strings.Contains(r.Err, "does not exist") {
		t.Errorf("--once on a missing volume: exit %d %s", r.Code, r.Err)
	}
}

// watch --offsets started before the cluster exists waits for it too, then
// follows the offset files the brokers write.
func TestWatchOffsetsWaitsForTheVolume(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data") // does not exist yet
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"kaasctl", "watch", "--offsets", "--data-dir", data, "--poll-interval", "10ms", "--count", "1", "--timeout", "60s", "-o", "jsonl"},
			&IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errb.String(), "waiting for it to appear"); {
		if time.Now().After(deadline) {
			t.Fatalf("watch --offsets is not waiting: %s", errb.String())
		}
		select {
		case code := <-done:
			t.Fatalf("watch --offsets ended (exit %d) instead of waiting:\n%s", code, errb.String())
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	cd := filepath.Join(data, "__cluster")
	os.MkdirAll(filepath.Join(cd, "__consumer_offsets"), 0o755)
	tmp := filepath.Join(cd, "assignment.json.tmp")
	os.WriteFile(tmp, []byte(safeAssignment), 0o644)
	os.Rename(tmp, filepath.Join(cd, "assignment.json"))
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errb.String(), "watching the offset files"); {
		if time.Now().After(deadline) {
			t.Fatalf("watch --offsets did not start on the new volume: %s", errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A group's first commit (its snapshot), then its next one: the change --count 1 waits for.
	commit := func(off string) {
		tmp := filepath.Join(cd, "__consumer_offsets", "app.json.tmp")
		os.WriteFile(tmp, []byte(`{"offsets":{"orders/0":`+off+`},"metadata":{}}`), 0o644)
		os.Rename(tmp, filepath.Join(cd, "__consumer_offsets", "app.json"))
	}
	commit("7")
	// The first commit is either seen as a new file or, when the follower's
	// first scan came after it, taken into its baseline: both are ready
	// for the change --count 1 waits for.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), `"group":"app"`) && !strings.Contains(errb.String(), "baseline: 1 offset file"); {
		if time.Now().After(deadline) {
			t.Fatalf("watch --offsets did not see the first commit: %s%s", out.String(), errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	commit("9")
	var code int
	select {
	case code = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("watch --offsets did not finish")
	}
	if code != 0 || !strings.Contains(errb.String(), "the volume appeared") || !strings.Contains(out.String(), `"orders/0":9`) {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	// --once does not wait: a clear error, exit 1.
	r := runCLIWithin(t, nil, "watch", "--offsets", "--once", "--data-dir", filepath.Join(t.TempDir(), "nothing"))
	if r.Code != 1 || !strings.Contains(r.Err, "does not exist") {
		t.Errorf("--offsets --once on a missing volume: exit %d %s", r.Code, r.Err)
	}
}

// An offline reset through a linked __consumer_offsets is refused (and
// volume check says why); --follow-symlinks lets the user write through it.
func TestOffsetsResetSymlinkedOffsetsDir(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	real := filepath.Join(t.TempDir(), "offsets")
	os.Rename(filepath.Join(cd, "__consumer_offsets"), real)
	os.Symlink(real, filepath.Join(cd, "__consumer_offsets"))
	args := []string{"offsets", "reset", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-earliest", "--offline", "--execute"}
	r := runCLIWithin(t, nil, args...)
	if r.Code != 1 || !strings.Contains(r.Err, "symbolic link") || !strings.Contains(r.Err, "--follow-symlinks") {
		t.Errorf("linked offsets dir: exit %d %s", r.Code, r.Err)
	}
	if got, _ := os.ReadFile(filepath.Join(real, "g.json")); string(got) != `{"offsets":{"orders/0":5}}` {
		t.Errorf("written through the link: %s", got)
	}
	r = runCLIWithin(t, nil, "volume", "check", "--data-dir", data, "-o", "json")
	if !strings.Contains(r.Out, `"volume.symlinkedDir"`) {
		t.Errorf("volume check does not report the linked dir:\n%s", r.Out)
	}
	r = runCLIWithin(t, nil, append(args, "--follow-symlinks")...)
	if r.Code != 0 {
		t.Fatalf("--follow-symlinks: exit %d %s", r.Code, r.Err)
	}
	if got, _ := os.ReadFile(filepath.Join(real, "g.json")); string(got) != `{"offsets":{"orders/0":3}}` {
		t.Errorf("after --follow-symlinks: %s", got)
	}
	if fi, _ := os.Lstat(filepath.Join(cd, "__consumer_offsets")); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
}

// A 246-byte group id (kaas's longest) resets offline; the backup name
// fits NAME_MAX.
func TestOffsetsResetLongGroupID(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	group := strings.Repeat("x", 246)
	writeFile(t, cd, "__consumer_offsets/"+group+".json", `{"offsets":{"orders/0":40}}`)
	r := runCLIWithin(t, nil, "offsets", "reset", "--data-dir", data, "-g", group, "--topic", "orders", "--to-earliest", "--offline", "--execute")
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Out, r.Err)
	}
	if got, _ := os.ReadFile(filepath.Join(cd, "__consumer_offsets", group+".json")); string(got) != `{"offsets":{"orders/0":3}}` {
		t.Errorf("file %s", got)
	}
	ents, _ := os.ReadDir(filepath.Join(cd, "__consumer_offsets"))
	backups := 0
	for _, e := range ents {
		if strings.Contains(e.Name(), ".kaasctl-bak-") {
			backups++
			if len(e.Name()) > 255 || !strings.HasPrefix(e.Name(), strings.Repeat("x", 100)) {
				t.Errorf("backup name %d bytes: %s", len(e.Name()), e.Name())
			}
		}
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
	if backups != 1 {
		t.Errorf("%d backups: %v", backups, ents)
	}
}

// --keep-backups and KAASCTL_KEEP_BACKUPS bound the backups; volume check
// counts them.
func TestKeepBackups(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	count := func() int {
		ents, _ := os.ReadDir(filepath.Join(cd, "__consumer_offsets"))
		n := 0
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "g.json.kaasctl-bak-") {
				n++
			}
		}
		return n
	}
	reset := func(env map[string]string, to string, extra ...string) {
		t.Helper()
		r := runCLIWithin(t, env, append([]string{"offsets", "reset", "--data-dir", data, "-g", "g", "--topic", "orders:0", "--to-offset", to, "--offline", "--execute"}, extra...)...)
		if r.Code != 0 {
			t.Fatalf("exit %d %s", r.Code, r.Err)
		}
	}
	for i := range 5 {
		reset(nil, strconv.Itoa(10+i), "--keep-backups", "2")
	}
	if n := count(); n != 2 {
		t.Errorf("--keep-backups 2: %d backups", n)
	}
	reset(map[string]string{"KAASCTL_KEEP_BACKUPS": "1"}, "20")
	if n := count(); n != 1 {
		t.Errorf("KAASCTL_KEEP_BACKUPS=1: %d backups", n)
	}
	for i := range 3 {
		reset(map[string]string{"KAASCTL_KEEP_BACKUPS": "1"}, strconv.Itoa(30+i), "--keep-backups", "0") // the flag wins; 0 keeps all
	}
	if n := count(); n != 4 {
		t.Errorf("--keep-backups 0: %d backups, want 4", n)
	}
	r := runCLIWithin(t, map[string]string{"KAASCTL_KEEP_BACKUPS": "many"}, "offsets", "reset", "--data-dir", data, "-g", "g", "--topic", "orders:0", "--to-offset", "1", "--offline")
	if r.Code != 2 || !strings.Contains(r.Err, "KAASCTL_KEEP_BACKUPS") {
		t.Errorf("bad env: exit %d %s", r.Code, r.Err)
	}
	r = runCLIWithin(t, nil, "volume", "check", "--data-dir", data, "-o", "json")
	var rep struct {
		Findings []struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(r.Out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Out)
	}
	found := false
	for _, f := range rep.Findings {
		if f.Code == "volume.kaasctlBackup" {
			found = true
			if !strings.HasPrefix(f.Message, "4 kaasctl backup files (") || !strings.Contains(f.Message, "bytes)") {
				t.Errorf("backup finding: %s", f.Message)
			}
		}
	}
	if !found {
		t.Errorf("no backup finding:\n%s", r.Out)
	}
}

// A <group>.json linked to a secret file: offsets reset and delete refuse
// it, read nothing into a backup, and volume check names the link.
func TestSymlinkedGroupFileToSecret(t *testing.T) {
	t.Parallel()
	data, cd := safeVolume(t)
	secret := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(secret, []byte(`{"offsets":{"orders/0":99}}`), 0o600)
	gp := filepath.Join(cd, "__consumer_offsets", "g.json")
	os.Remove(gp)
	os.Symlink(secret, gp)
	for _, args := range [][]string{
		{"offsets", "reset", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-earliest", "--offline", "--execute"},
		{"offsets", "delete", "--data-dir", data, "-g", "g", "--topic", "orders", "--offline", "--execute"},
	} {
		r := runCLIWithin(t, nil, args...)
		if r.Code != 1 || !strings.Contains(r.Err, gp+": is a symbolic link (to "+secret+")") {
			t.Errorf("%v: exit %d %s", args[:2], r.Code, r.Err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(cd, "__consumer_offsets"))
	if len(ents) != 1 {
		t.Errorf("files created beside the link: %v", ents)
	}
	if got, _ := os.ReadFile(secret); string(got) != `{"offsets":{"orders/0":99}}` {
		t.Errorf("secret changed: %s", got)
	}
	r := runCLIWithin(t, nil, "volume", "check", "--data-dir", data)
	if !strings.Contains(r.Out, "volume.symlink") || !strings.Contains(r.Out, secret) {
		t.Errorf("volume check:\n%s", r.Out)
	}
}

// On a volume whose live offsets dir cannot be told, a reset names the
// group once and says why (not "group 'g': group "g": ...").
func TestResetAmbiguousVolumeNamesGroupOnce(t *testing.T) {
	t.Parallel()
	data, _ := safeVolume(t)
	writeFile(t, data, "__consumer_offsets/other.json", `{"orders/0":5}`)
	r := runCLI(t, "", nil, "offsets", "reset", "--offline", "--data-dir", data, "-g", "g", "--topic", "orders", "--to-offset", "7")
	if r.Code == 0 || !strings.Contains(r.Err, "Error: group 'g': kaasctl cannot tell which offsets dir") || strings.Count(r.Err, `"g"`) != 0 {
		t.Errorf("exit %d\n%s", r.Code, r.Err)
	}
}
