package wire

import (
	"fmt"
	"strconv"
)

func itoa(p int32) string { return strconv.Itoa(int(p)) }

func fmtSscan(s string, p *int32) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("bad partition %q", s)
	}
	*p = int32(n)
	return 1, nil
}
