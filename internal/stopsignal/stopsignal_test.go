package stopsignal

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// The first signal is recorded for the worker to poll; the watch then no
// longer catches (a second signal would take the default action).
func TestFirstSignalIsRecorded(t *testing.T) {
	// SIGUSR1 stands for SIGINT: the test process must not be interrupted.
	w := catch(syscall.SIGUSR1)
	defer w.Release()
	if w.Signal() != nil {
		t.Fatal("a signal before any was sent")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for w.Signal() == nil {
		if time.Now().After(deadline) {
			t.Fatal("the signal was not recorded within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	if w.Signal() != syscall.SIGUSR1 {
		t.Fatalf("recorded %v", w.Signal())
	}
}

func TestReleaseAndNil(t *testing.T) {
	t.Parallel()
	var nw *Watch
	if nw.Signal() != nil {
		t.Fatal("nil watch has a signal")
	}
	nw.Release()
	var zero Watch
	zero.Release()
	if zero.Signal() != nil {
		t.Fatal("zero watch has a signal")
	}
	w := catch(syscall.SIGUSR2)
	w.Release()
	w.Release()
	if w.Signal() != nil {
		t.Fatal("released watch has a signal")
	}
}
