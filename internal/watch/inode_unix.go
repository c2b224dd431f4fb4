//go:build unix

package watch

import (
	"io/fs"
	"syscall"
)

func inode(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}
