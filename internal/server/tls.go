package server

import (
	"net"
	"net/http"
)

// TLS: Serve wraps the TCP listener with tls.NewListener before cmux, as
// argo-server does, so that cmux and both servers see decrypted bytes. The
// server offers ALPN h2 (gRPC clients require it), so browsers, curl and Go
// clients speak HTTP/2 to REST too. Those connections reach the HTTP server
// through cmux, which is not a *tls.Conn: the HTTP server must accept HTTP/2
// with prior knowledge, and must not see the SETTINGS ACKs that answer the
// SETTINGS frames cmux's gRPC matcher wrote while it looked at the first
// request (an unexpected ACK is a connection error to an HTTP/2 server).
// tlsHTTP arranges both.

// tlsHTTP adapts the HTTP side of Serve to TLS under cmux: HSTS on every
// response, HTTP/2 with prior knowledge on the (decrypted) connections, and
// the filter of cmux's SETTINGS ACKs.
func tlsHTTP(hs *http.Server, l net.Listener) net.Listener {
	hs.Handler = hsts(hs.Handler)
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	return ackFilterListener{l}
}

// hsts adds Strict-Transport-Security to every response, as argo-server
// does when it serves TLS (its --hsts, default true).
func hsts(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		h.ServeHTTP(w, r)
	})
}

// ackFilterListener wraps each accepted connection in an ackFilterConn.
type ackFilterListener struct{ net.Listener }

func (l ackFilterListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &ackFilterConn{Conn: c}, nil
}

// HTTP/2 framing (RFC 9113 §3.4, §4.1, §6.5).
const (
	h2Preface      = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	h2FrameHeader  = 9
	h2TypeHeaders  = 0x1
	h2TypeSettings = 0x4
	h2FlagAck      = 0x1
)

// ackFilterConn passes a connection's bytes through, except that on an
// HTTP/2 connection it drops one SETTINGS ACK for each SETTINGS frame the
// client sent before its first HEADERS frame: cmux's matcher answered each
// of those with a SETTINGS frame of its own, and the client ACKs it. Once
// those are dropped, or when the connection does not start with the HTTP/2
// preface, it reads straight from the connection.
type ackFilterConn struct {
	net.Conn
	buf     [4096]byte
	in      []byte // read, not yet parsed
	out     []byte // parsed, to be returned
	matched int    // bytes of the preface seen so far
	skip    int    // payload bytes of the current frame still to pass
	owed    int    // SETTINGS ACKs still to drop
	headers bool   // the first HEADERS frame was seen
	done    bool
	err     error // a read error to return once out is drained
}

func (c *ackFilterConn) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if err := c.err; err != nil {
			// Once, not for good: net/http interrupts reads with a past
			// deadline and then reads on.
			c.err = nil
			return 0, err
		}
		if c.done && len(c.in) == 0 {
			return c.Conn.Read(p)
		}
		n, err := c.Conn.Read(c.buf[:])
		c.in = append(c.in, c.buf[:n]...)
		c.err = err
		c.parse()
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// parse moves what it can from in to out.
func (c *ackFilterConn) parse() {
	for len(c.in) > 0 {
		switch {
		case c.done:
			c.emit(len(c.in))
		case c.matched < len(h2Preface):
			n := min(len(h2Preface)-c.matched, len(c.in))
			if string(c.in[:n]) != h2Preface[c.matched:c.matched+n] {
				c.done = true // not HTTP/2
				continue
			}
			c.matched += n
			c.emit(n)
		case c.skip > 0:
			n := min(c.skip, len(c.in))
			c.skip -= n
			c.emit(n)
		case len(c.in) < h2FrameHeader:
			return
		default:
			c.frame()
		}
	}
}

// frame handles the frame header at the start of in.
func (c *ackFilterConn) frame() {
	length := int(c.in[0])<<16 | int(c.in[1])<<8 | int(c.in[2])
	typ, ack := c.in[3], c.in[4]&h2FlagAck != 0
	switch {
	case typ == h2TypeSettings && ack && length == 0 && c.owed > 0:
		c.owed--
		c.in = c.in[h2FrameHeader:] // dropped
	case typ == h2TypeSettings && !ack && !c.headers:
		c.owed++
		c.skip = length
		c.emit(h2FrameHeader)
	default:
		c.headers = c.headers || typ == h2TypeHeaders
		c.skip = length
		c.emit(h2FrameHeader)
	}
	c.done = c.headers && c.owed == 0
}

func (c *ackFilterConn) emit(n int) {
	c.out = append(c.out, c.in[:n]...)
	c.in = c.in[n:]
}
