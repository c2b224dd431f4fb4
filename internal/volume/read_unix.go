//go:build unix

package volume

import (
	"io/fs"
	"os"
	"syscall"
)

func platformReadInto(path string, buf []byte) ([]byte, []byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, buf, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			if buf, err = growBuf(buf); err != nil {
				return nil, buf, err
			}
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			if err == syscall.EISDIR {
				return nil, buf, &fs.PathError{Op: "read", Path: path, Err: err}
			}
			return nil, buf, os.NewSyscallError("read "+path, err)
		}
		if n == 0 {
			return buf, buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
