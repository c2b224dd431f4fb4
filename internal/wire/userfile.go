package wire

import (
	"errors"
	"fmt"
	"io"

	"github.com/kaasctl/kaasctl/internal/safefs"
)

// readUserFile reads a file the user named for a connection setting (a
// properties file, a password, a PEM file), what naming it in messages
// ("--command-config /etc/x"): links are followed, a FIFO, device, socket
// or directory is refused without blocking (safefs.OpenFollow), and more
// than limit bytes is an error.
func readUserFile(what, path string, limit int64) ([]byte, error) {
	f, _, err := safefs.OpenFollow(path)
	if err != nil {
		var ke *safefs.KindError
		if errors.As(err, &ke) {
			return nil, fmt.Errorf("%s %s: %s", what, path, safefs.Problem(err))
		}
		return nil, fmt.Errorf("%s %s: %v", what, path, unwrapPathErr(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", what, path, unwrapPathErr(err))
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s %s is larger than %d bytes; is it the right file?", what, path, limit)
	}
	return b, nil
}
