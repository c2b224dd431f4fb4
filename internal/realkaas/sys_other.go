//go:build unix && !linux

package realkaas

import "syscall"

// A process group of its own (the registry reaps what a killed run left).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
