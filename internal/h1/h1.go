// Package h1 is send's HTTP/1.1 client: a request goes out and its answer
// comes back on the calling goroutine, over a kept-alive connection that
// the caller holds for the request's time.
//
// net/http's Transport hands every request to two goroutines of its
// connection (the write loop and the read loop) and back, and threads a
// context, a trace and a pool through it. At the request rates a load
// generator must reach, that was most of send's CPU per request, and what
// kept it below vegeta's req/s (make bench-send). What HTTP makes subtle
// stays the standard library's: the answer is parsed by http.ReadResponse
// (status line, headers, chunked and length-delimited bodies, trailers,
// Connection: close). What is left here is the connection's life: one
// request at a time, reused only when its answer was read to its end.
package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// idleTimeout is how long a connection may wait unused before it is
// dropped rather than reused (net/http's default IdleConnTimeout): a
// server has likely closed it by then.
const idleTimeout = 90 * time.Second

// checkAfter is how long a connection may wait unused before it is
// checked, without waiting, for a close by the server before it is reused
// (servers close idle connections: uvicorn, vLLM's and SGLang's, after 5
// s; llama.cpp's after every stream). Every reuse is checked: a request
// written on a connection the server has closed may fail after the server
// received it, and such a request is never sent again (ResetError), so
// the close must be found before writing. One read that does not wait.
const checkAfter = 0

// closesAfterAnswer: a kept-alive connection found closed this soon
// after its last answer was closed by a server that closes after each
// answer (llama.cpp's, while it advertises Keep-Alive), not by an idle
// timeout: its connections are not reused (a request written in the
// moment before the server's close would fail, and could not be sent
// again).
const closesAfterAnswer = time.Second

// dialTimeout bounds a dial and a TLS handshake.
const dialTimeout = 10 * time.Second

// bufSize is each connection's read buffer: an SSE chunk is a few hundred
// bytes, and bodies larger than the buffer are read past it.
const bufSize = 4 << 10

// ErrAborted is the answer to a request after Abort.
var ErrAborted = errors.New("h1: the client was stopped")

// StaleError is a failure before any byte of the request was written:
// the server had closed (reset) the connection, so it never saw the
// request, and sending it again on a new connection is safe.
type StaleError struct{ Err error }

func (e *StaleError) Error() string {
	return "connection closed by the server before the request was written: " + e.Err.Error()
}
func (e *StaleError) Unwrap() error { return e.Err }

// ResetError is a failure after some or all of the request was written
// and before any byte of an answer: the connection was reset or closed.
// The server may have received the request, and processed it: it must
// not be sent again (a POST is not idempotent; net/http does not resend
// one either).
type ResetError struct {
	Err           error
	Written, Size int // bytes of the request written, of its total
}

func (e *ResetError) Error() string {
	if e.Written >= e.Size {
		return "connection closed or reset by the server after the whole request was sent, before any answer: " + e.Err.Error()
	}
	return fmt.Sprintf("connection closed or reset by the server after %d of the request's %d bytes were sent, before any answer: %v", e.Written, e.Size, e.Err)
}
func (e *ResetError) Unwrap() error { return e.Err }

// Pool posts to one URL. It keeps one connection per concurrent request:
// a request takes an idle one or dials, and gives it back at its end.
type Pool struct {
	addr string      // host:port to dial
	tls  *tls.Config // nil for plain HTTP
	// head is the request up to its Content-Length value: request line,
	// Host and the fixed headers.
	head []byte
	// checkAfter is the package's checkAfter (tests change it).
	checkAfter time.Duration

	mu      sync.Mutex
	idle    []*Conn // last in, first out: the warmest connection first
	live    map[*Conn]struct{}
	aborted bool
	// noReuse: the server closes its connections after each answer
	// (closesAfterAnswer); each request gets a new one.
	noReuse bool
}

// NewPool prepares requests to rawURL (http or https) with header; tc is
// the TLS configuration for https (nil: the system's roots).
func NewPool(rawURL string, header http.Header, tc *tls.Config) (*Pool, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err // not the URL again: it may hold a password
		}
		return nil, fmt.Errorf("the URL does not parse: %w", err)
	}
	p := &Pool{live: map[*Conn]struct{}{}, checkAfter: checkAfter}
	port := u.Port()
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		p.tls = &tls.Config{}
		if tc != nil {
			p.tls = tc.Clone()
		}
		if p.tls.ServerName == "" {
			p.tls.ServerName = u.Hostname()
		}
		// This client speaks HTTP/1.1 only: a server that would pick h2
		// must not.
		p.tls.NextProtos = []string{"http/1.1"}
	default:
		return nil, fmt.Errorf("%s: the scheme must be http or https", u.Redacted())
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s: no host", u.Redacted())
	}
	p.addr = net.JoinHostPort(u.Hostname(), port)
	if u.User != nil && header.Get("Authorization") == "" {
		// As net/http does for a URL's user:password.
		pw, _ := u.User.Password()
		if header = header.Clone(); header == nil {
			header = http.Header{}
		}
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
	}
	p.head, err = requestHead(u, header)
	return p, err
}

// CheckHeader says whether header can go on a request: valid names and
// values, none the client sets itself (Host, Content-Length, ...). A
// user's headers are checked before a run, as a usage error.
func CheckHeader(header http.Header) error {
	_, err := requestHead(&url.URL{Path: "/"}, header)
	return err
}

// requestHead writes the request line and headers, sorted by name as
// net/http writes them, up to the Content-Length value. Each request adds
// its length and the blank line.
func requestHead(u *url.URL, header http.Header) ([]byte, error) {
	b := []byte("POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n")
	canon := http.Header{}
	for k, vs := range header {
		if !validName(k) {
			return nil, fmt.Errorf("header name %q: not a valid HTTP field name", k)
		}
		ck := http.CanonicalHeaderKey(k)
		canon[ck] = append(canon[ck], vs...)
	}
	for _, k := range slices.Sorted(maps.Keys(canon)) {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			return nil, fmt.Errorf("header %s: set by the client itself", k)
		}
		for _, v := range canon[k] {
			if !validValue(v) {
				return nil, fmt.Errorf("header %s: value %q holds a control character", k, v)
			}
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	return append(b, "Content-Length: "...), nil
}

// validName: a field name is a token (RFC 9110 §5.1).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validValue: no control characters but tab (RFC 9110 §5.5), so no header
// can be split.
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// Conn is one connection, held by one request at a time.
type Conn struct {
	pool *Pool
	nc   net.Conn
	br   *bufio.Reader
	out  []byte // the request being written, reused
	body body
	resp *http.Response
	// idleSince is when it was last given back.
	idleSince time.Time
}

// probeRequest tells http.ReadResponse what the answers are to: a POST
// (a HEAD's answer would have no body).
var probeRequest = &http.Request{Method: http.MethodPost}

// Post sends body on a kept-alive connection, or a new one (fresh: always
// a new one), and reads the head of its answer. deadline bounds the
// request, its answer's body included, and ctx the dial. On success the
// body is the caller's to read, and Release gives the connection back. An
// error before any byte of the request was written is a *StaleError (safe
// to send again); one after some of it was written and before any byte
// of an answer, a *ResetError (not safe).
func (p *Pool) Post(ctx context.Context, body []byte, deadline time.Time, fresh bool) (*http.Response, *Conn, error) {
	var c *Conn
	if !fresh {
		c = p.takeIdle()
	}
	if c == nil {
		var err error
		if c, err = p.dial(ctx, deadline); err != nil {
			return nil, nil, err
		}
	}
	resp, err := c.roundTrip(body, deadline)
	if err != nil {
		c.close()
		return nil, nil, err
	}
	return resp, c, nil
}

func (p *Pool) takeIdle() *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		idle := now.Sub(c.idleSince)
		if idle < p.checkAfter || idle < idleTimeout && !peerClosedIdle(c.nc) {
			return c
		}
		if idle < closesAfterAnswer {
			p.noReuse = true
		}
		p.forget(c)
		c.nc.Close()
	}
	return nil
}

// peerClosedIdle is peerClosed past the last request's deadline: a
// deadline passed fails the check's read at once, an open connection
// taken for closed (a stream's drain leaves one a second on).
func peerClosedIdle(nc net.Conn) bool {
	if nc.SetReadDeadline(time.Time{}) != nil {
		return true
	}
	return peerClosed(nc)
}

func (p *Pool) dial(ctx context.Context, deadline time.Time) (*Conn, error) {
	p.mu.Lock()
	aborted := p.aborted
	p.mu.Unlock()
	if aborted {
		return nil, ErrAborted
	}
	d := net.Dialer{Timeout: dialTimeout, Deadline: deadline, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	if p.tls != nil {
		tc := tls.Client(nc, p.tls)
		hctx, cancel := context.WithDeadline(ctx, earliest(deadline, time.Now().Add(dialTimeout)))
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	return p.adopt(nc)
}

// adopt makes nc one of the pool's connections.
func (p *Pool) adopt(nc net.Conn) (*Conn, error) {
	c := &Conn{pool: p, nc: nc, br: bufio.NewReaderSize(nc, bufSize)}
	c.body.c = c
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.aborted {
		nc.Close()
		return nil, ErrAborted
	}
	p.live[c] = struct{}{}
	return c, nil
}

func earliest(a, b time.Time) time.Time {
	if !a.IsZero() && a.Before(b) {
		return a
	}
	return b
}

// roundTrip writes the request and reads its answer's head. A failure
// before any byte of an answer is a *StaleError when nothing of the
// request was written, a *ResetError when some of it was (a timeout is
// neither: it is the request's own).
func (c *Conn) roundTrip(body []byte, deadline time.Time) (*http.Response, error) {
	if err := c.nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	c.out = append(c.out[:0], c.pool.head...)
	c.out = strconv.AppendInt(c.out, int64(len(body)), 10)
	c.out = append(c.out, "\r\n\r\n"...)
	var err error
	var written int
	size := len(c.out) + len(body)
	if len(body) <= 16<<10 {
		// One write: small bodies are copied rather than sent in a second
		// segment (or a second TLS record).
		c.out = append(c.out, body...)
		written, err = c.nc.Write(c.out)
	} else {
		bufs := net.Buffers{c.out, body}
		var n int64
		n, err = bufs.WriteTo(c.nc)
		written = int(n)
	}
	if cap(c.out) > 64<<10 {
		c.out = nil // a large body's copy is not kept for the next request
	}
	if err != nil {
		// A server may answer before it has read the whole request (a
		// 413 for a body too large) and close the connection: that
		// answer, when it came, is the request's, as net/http reads it.
		if _, perr := c.br.Peek(1); perr == nil {
			resp, rerr := c.readAnswer()
			if rerr == nil {
				resp.Close = true // the request's rest is lost with the connection
			}
			return resp, rerr
		}
		// Else: not a byte written, the server cannot have seen it.
		// Some written, it may have read them (a server can act on a
		// request before its end): not safe to send again.
		switch {
		case isTimeout(err):
			return nil, err
		case written == 0:
			return nil, &StaleError{err}
		}
		return nil, &ResetError{Err: err, Written: written, Size: size}
	}
	if _, err := c.br.Peek(1); err != nil {
		if isTimeout(err) {
			return nil, err
		}
		return nil, &ResetError{Err: err, Written: written, Size: size}
	}
	return c.readAnswer()
}

// readAnswer reads the head of the answer, past informational ones.
func (c *Conn) readAnswer() (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(c.br, probeRequest)
		if err != nil {
			return nil, err
		}
		// An informational answer (103 Early Hints, an unasked 100
		// Continue) comes before the real one.
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		c.resp = resp
		c.body.r, c.body.eof, c.body.failed = resp.Body, false, false
		resp.Body = &c.body
		return resp, nil
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// SetReadDeadline moves the read deadline of the request in flight (to
// bound a drain).
func (c *Conn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// Release ends the request: the connection goes back to the pool when its
// answer was read to its end and the server keeps it open; else it is
// closed.
func (c *Conn) Release() {
	resp := c.resp
	c.resp = nil
	keep := c.body.eof && !c.body.failed && !resp.Close &&
		// A body delimited by the connection's end cannot be followed.
		(resp.ContentLength >= 0 || len(resp.TransferEncoding) > 0) &&
		// Bytes past the answer are no answer to anything.
		c.br.Buffered() == 0
	if !keep {
		c.close()
		return
	}
	c.idleSince = time.Now()
	p := c.pool
	p.mu.Lock()
	if p.aborted || p.noReuse {
		p.mu.Unlock()
		c.close()
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

func (c *Conn) close() {
	c.nc.Close()
	c.pool.mu.Lock()
	c.pool.forget(c)
	c.pool.mu.Unlock()
}

// forget drops c from the live set; p.mu is held.
func (p *Pool) forget(c *Conn) { delete(p.live, c) }

// Abort closes every connection, those of requests in flight too (their
// reads fail at once), and refuses new ones: the run's hard stop.
func (p *Pool) Abort() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.aborted = true
	for c := range p.live {
		nc := c.nc
		if tc, ok := nc.(*tls.Conn); ok {
			// Not tls.Conn.Close: its close_notify may wait up to 5 s on
			// a full send buffer, for each connection in turn.
			nc = tc.NetConn()
		}
		nc.Close()
	}
	p.idle = nil
}

// Aborted says whether Abort was called: a request's failure after it is
// the abort's doing, even when its context does not say so yet (a context
// cancels its children and runs its AfterFuncs in no set order).
func (p *Pool) Aborted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.aborted
}

// CloseIdle closes the connections no request holds.
func (p *Pool) CloseIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		p.forget(c)
		c.nc.Close()
	}
	p.idle = nil
}

// body is an answer's body: it notes whether it was read to its end,
// which decides whether its connection can carry the next request.
type body struct {
	c           *Conn
	r           io.ReadCloser
	eof, failed bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
	} else if err != nil {
		b.failed = true
	}
	return n, err
}

// Close before the end closes the connection first: http.ReadResponse's
// body would read the rest of the answer otherwise (all of a stream).
func (b *body) Close() error {
	if !b.eof {
		b.failed = true
		b.c.nc.Close()
	}
	return b.r.Close()
}
