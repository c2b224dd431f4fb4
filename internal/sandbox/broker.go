package sandbox

import (
	"net"
	"sync"
	"time"
)

// broker is one sandbox broker: a listener whose connections are relayed to
// kfake through the coordination layer.
type broker struct {
	s    *Sandbox
	id   string
	node int32
	addr string // advertised to clients
	bind string // what the listener binds
	log  *brokerLog

	mu      sync.Mutex
	ln      net.Listener
	conns   map[*clientConn]struct{}
	running bool
	wg      sync.WaitGroup
}

func (b *broker) isRunning() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.running
}

// listen binds the broker's address; serve starts accepting.
func (b *broker) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.ln = ln
	b.running = true
	b.mu.Unlock()
	return nil
}

func (b *broker) serve() {
	b.mu.Lock()
	ln := b.ln
	b.mu.Unlock()
	if ln == nil {
		return
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.DialTimeout("tcp", b.s.kfAddr, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			b.mu.Lock()
			if !b.running || b.ln != ln {
				b.mu.Unlock()
				c.Close()
				up.Close()
				continue
			}
			cc := newClientConn(b, c, up)
			b.conns[cc] = struct{}{}
			b.mu.Unlock()
			go cc.run()
		}
	}()
}

// stop closes the listener and every connection, and waits for the accept
// loop to end.
func (b *broker) stop() {
	b.mu.Lock()
	b.running = false
	ln := b.ln
	b.ln = nil
	conns := b.conns
	b.conns = map[*clientConn]struct{}{}
	b.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for cc := range conns {
		cc.kill()
	}
	b.wg.Wait()
}

func (b *broker) forget(cc *clientConn) {
	b.mu.Lock()
	delete(b.conns, cc)
	b.mu.Unlock()
}

// item is one request on a client connection, in arrival order: either a
// local answer or a request relayed to kfake whose response is post-processed.
type item struct {
	f     *frame
	local []byte                            // a full response frame, when answered here
	resp  chan []byte                       // the relayed response (no size prefix)
	post  func(f *frame, raw []byte) []byte // turns the relayed response into the client's frame
	fwd   []byte                            // what to relay (nil: the request as received)
	// later makes the full response frame once it can (nil: the
	// connection closes), or gives up when dead closes; for a request
	// answered here after a wait (listgroups.go).
	later func(dead <-chan struct{}) []byte
}

// clientConn relays one client connection over one kfake connection, so
// requests that park (JoinGroup, Fetch) block only their own connection,
// and responses keep the request order.
type clientConn struct {
	b    *broker
	c    net.Conn
	up   net.Conn
	dead chan struct{}
	once sync.Once

	pending chan *item // every answered request, in order (for the writer)
	relayed chan *item // relayed requests awaiting kfake's response, in order
}

func newClientConn(b *broker, c, up net.Conn) *clientConn {
	return &clientConn{b: b, c: c, up: up, dead: make(chan struct{}), pending: make(chan *item, 256), relayed: make(chan *item, 256)}
}

func (cc *clientConn) kill() {
	cc.once.Do(func() {
		close(cc.dead)
		cc.c.Close()
		cc.up.Close()
	})
}

func (cc *clientConn) run() {
	defer cc.b.forget(cc)
	go cc.readUpstream()
	go cc.write()
	cc.read()
}

// read takes requests off the client, answers or relays them in order.
func (cc *clientConn) read() {
	defer cc.kill()
	for {
		raw, err := readFrame(cc.c)
		if err != nil {
			return
		}
		f, err := parseRequestHeader(raw)
		if err != nil {
			return
		}
		if !cc.b.s.waitThawed(cc.b, cc.dead) {
			return
		}
		it := cc.b.s.handle(cc.b, f)
		if it.local == nil && it.later == nil {
			expect := !(f.key == 0 && produceAcks(f) == 0)
			if expect {
				it.resp = make(chan []byte, 1)
				select {
				case cc.relayed <- it:
				case <-cc.dead:
					return
				}
			}
			out := it.fwd
			if out == nil {
				out = f.raw
			}
			if _, err := cc.up.Write(withSize(out)); err != nil {
				return
			}
			if !expect {
				continue
			}
		}
		select {
		case cc.pending <- it:
		case <-cc.dead:
			return
		}
	}
}

func (cc *clientConn) readUpstream() {
	defer cc.kill()
	for {
		raw, err := readFrame(cc.up)
		if err != nil {
			return
		}
		select {
		case it := <-cc.relayed:
			it.resp <- raw
		case <-cc.dead:
			return
		}
	}
}

func (cc *clientConn) write() {
	defer cc.kill()
	for {
		var it *item
		select {
		case it = <-cc.pending:
		case <-cc.dead:
			return
		}
		out := it.local
		if it.later != nil {
			if out = it.later(cc.dead); out == nil {
				return
			}
		}
		if out == nil {
			select {
			case raw := <-it.resp:
				if it.post != nil {
					out = it.post(it.f, raw)
				} else {
					out = withSize(raw)
				}
			case <-cc.dead:
				return
			}
		}
		if _, err := cc.c.Write(out); err != nil {
			return
		}
	}
}
