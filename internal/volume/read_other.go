//go:build !unix

package volume

func platformReadInto(path string, buf []byte) ([]byte, []byte, error) {
	return portableReadInto(path, buf)
}
