package commands

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// readKeys calls fn with each non-blank line of r (CR LF trimmed), without
// holding more than one line; a line longer than the buffer is collected
// whole. fn's slice is only valid during the call.
func readKeys(r io.Reader, fn func(key []byte) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if key := bytes.TrimRight(line, "\r\n"); len(key) > 0 {
			if ferr := fn(key); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading keys from standard input: %w", err)
		}
	}
}
