package repair

import (
	"net"
	"time"
)

// ReachableBrokers returns the brokers (host:port) that accept a TCP
// connection within timeout, in the order given: 'volume migrate' refuses
// while a broker of the old generation still runs. Every address is tried
// at once, so the check takes one timeout however many brokers there are.
func ReachableBrokers(brokers []string, timeout time.Duration) []string {
	type res struct {
		i  int
		up bool
	}
	ch := make(chan res, len(brokers))
	for i, b := range brokers {
		go func() {
			conn, err := net.DialTimeout("tcp", b, timeout)
			if err == nil {
				conn.Close()
			}
			ch <- res{i, err == nil}
		}()
	}
	up := make([]bool, len(brokers))
	for range brokers {
		r := <-ch
		up[r.i] = r.up
	}
	var out []string
	for i, b := range brokers {
		if up[i] {
			out = append(out, b)
		}
	}
	return out
}
