package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// far is a deadline no test reaches.
func far() time.Time { return time.Now().Add(time.Minute) }

// countingServer is a net/http server that counts the connections it
// accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func newPool(t *testing.T, url string, h http.Header) *Pool {
	t.Helper()
	p, err := NewPool(url, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.CloseIdle)
	return p
}

// post sends body and reads the whole answer.
func post(t *testing.T, p *Pool, body string) (int, string) {
	t.Helper()
	resp, c, err := p.Post(context.Background(), []byte(body), far(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestReuse: answers read to their end, whatever their framing (length,
// chunked, empty), leave the connection for the next request: 300
// requests, one connection, each answer the server's.
func TestReuse(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch string(b) {
		case "chunked":
			w.Write([]byte("part one "))
			w.(http.Flusher).Flush() // a flushed answer goes out chunked
			w.Write([]byte("part two"))
		case "empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Length", fmt.Sprint(len(b)))
			w.Write(b)
		}
	})
	p := newPool(t, srv.URL+"/v1/x", nil)
	for i := range 300 {
		var want, body string
		status := http.StatusOK
		switch i % 3 {
		case 0:
			body, want = "chunked", "part one part two"
		case 1:
			body, want, status = "empty", "", http.StatusNoContent
		default:
			body = strings.Repeat("é", i)
			want = body
		}
		if code, got := post(t, p, body); code != status || got != want {
			t.Fatalf("request %d: %d %q, want %d %q", i, code, got, status, want)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 300 requests one after another, want 1", n)
	}
}

// TestConcurrentConnections: C requests at a time use C connections and
// no more, over many rounds.
func TestConcurrentConnections(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	})
	p := newPool(t, srv.URL, nil)
	const c = 8
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for range 50 {
				if code, got := post(t, p, "x"); code != 200 || got != "ok" {
					t.Errorf("%d %q", code, got)
				}
			}
		})
	}
	wg.Wait()
	if n := conns.Load(); n > c {
		t.Errorf("%d connections for %d concurrent requesters", n, c)
	}
}

// TestRequestBytes: the request on the wire is exactly the one net/http
// would parse: request line, Host, the headers sorted, the length and the
// body, small (one write) or large (two).
func TestRequestBytes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan *http.Request, 2)
	bodies := make(chan []byte, 2)
	heads := make(chan string, 2)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		for range 2 {
			var head strings.Builder
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				head.WriteString(line)
				if line == "\r\n" {
					break
				}
			}
			req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(head.String())))
			if err != nil {
				return
			}
			b := make([]byte, req.ContentLength)
			if _, err := io.ReadFull(br, b); err != nil {
				return
			}
			heads <- head.String()
			got <- req
			bodies <- b
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		}
	}()
	url := "http://" + ln.Addr().String() + "/v1/chat/completions?trace=1"
	p := newPool(t, url, http.Header{"X-B": {"2"}, "Authorization": {"Bearer k"}, "x-a": {"1", "one"}})
	for _, body := range []string{`{"a":1}`, strings.Repeat("z", 100<<10)} {
		post(t, p, body)
		head, req, b := <-heads, <-got, <-bodies
		want := "POST /v1/chat/completions?trace=1 HTTP/1.1\r\nHost: " + ln.Addr().String() +
			"\r\nAuthorization: Bearer k\r\nX-A: 1\r\nX-A: one\r\nX-B: 2\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n"
		if head != want {
			t.Errorf("request head\n%q\nwant\n%q", head, want)
		}
		if req.Method != "POST" || req.URL.RequestURI() != "/v1/chat/completions?trace=1" || req.Header.Get("X-B") != "2" ||
			strings.Join(req.Header["X-A"], ",") != "1,one" || string(b) != body {
			t.Errorf("server read %s %s %v and %d bytes", req.Method, req.URL, req.Header, len(b))
		}
	}
}

// rawServer answers each connection's requests with answer(i), i counting
// the connections, after reading the request's head and body.
func rawServer(t *testing.T, answer func(conn int, nc net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for i := 0; ; i++ {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				answer(i, nc, bufio.NewReader(nc))
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// readRequest reads one request off br; false at the connection's end.
func readRequest(br *bufio.Reader) bool {
	req, err := http.ReadRequest(br)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, req.Body)
	return true
}

// closingServer answers one request per connection, advertising
// Keep-Alive, then closes the connection (as llama.cpp does after a
// stream) and says so on closed.
func closingServer(t *testing.T) (url string, closed chan struct{}) {
	closed = make(chan struct{}, 10)
	url = rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) {
		if readRequest(br) {
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nKeep-Alive: timeout=5\r\n\r\nok")
		}
		nc.Close()
		closed <- struct{}{}
	})
	return url, closed
}

// TestStale: a connection the server reset after its answer, reused
// before the check for it, fails its request before any byte of it is
// written: a StaleError (safe to send again); a fresh connection then
// succeeds.
func TestStale(t *testing.T) {
	reset := make(chan struct{}, 10)
	url := rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) {
		if readRequest(br) {
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nKeep-Alive: timeout=5\r\n\r\nok")
		}
		nc.(*net.TCPConn).SetLinger(0)
		nc.Close()
		reset <- struct{}{}
	})
	p := newPool(t, url, nil)
	p.checkAfter = time.Hour // never checked: the request finds the reset
	post(t, p, "one")
	<-reset
	time.Sleep(10 * time.Millisecond) // the RST is in
	_, _, err := p.Post(context.Background(), []byte("two"), far(), false)
	var stale *StaleError
	if !errors.As(err, &stale) {
		t.Fatalf("second request on the reset connection: %v, want a StaleError", err)
	}
	resp, c, err := p.Post(context.Background(), []byte("two"), far(), true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	c.Release()
	if string(b) != "ok" {
		t.Errorf("fresh connection: %q", b)
	}
}

// TestResetAfterRequest: a server that reads a request whole and then
// resets (or closes) the connection may have processed it: the failure is
// a ResetError, never a StaleError (issue 27 item 2: send resent such
// requests, and the server saw them twice). Both on a reused connection
// (the server's second request) and on a new one.
func TestResetAfterRequest(t *testing.T) {
	for _, linger := range []bool{true, false} {
		var seen atomic.Int64
		url := rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) {
			for i := 0; readRequest(br); i++ {
				seen.Add(1)
				if i == 1 {
					if linger {
						nc.(*net.TCPConn).SetLinger(0)
					}
					return // closes
				}
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}
		})
		p := newPool(t, url, nil)
		post(t, p, "one")
		_, _, err := p.Post(context.Background(), []byte("two"), far(), false)
		var reset *ResetError
		var stale *StaleError
		if !errors.As(err, &reset) || errors.As(err, &stale) || reset.Written != reset.Size {
			t.Fatalf("linger0=%v: request read whole, then the connection reset: %v, want a ResetError of the whole request", linger, err)
		}
		if n := seen.Load(); n != 2 {
			t.Errorf("server read %d requests, want 2", n)
		}
	}
}

// TestIdleClosedChecked: a connection the server closed while it waited
// unused is seen closed before it is reused: the request goes out on a
// new one, with no failure to retry (a low --rate against uvicorn's 5 s
// keep-alive would otherwise retry every request).
func TestIdleClosedChecked(t *testing.T) {
	url, closed := closingServer(t)
	p := newPool(t, url, nil)
	p.checkAfter = 0 // every reuse is checked
	for range 3 {
		if code, got := post(t, p, "x"); code != 200 || got != "ok" {
			t.Fatalf("%d %q", code, got)
		}
		<-closed
	}
}

// TestClosesAfterAnswerNotReused: a server seen closing a kept-alive
// connection right after its answer (llama.cpp) closes them all so: its
// connections are no longer reused (a request written in the moment
// before its close could not be sent again), each request gets a new one.
func TestClosesAfterAnswerNotReused(t *testing.T) {
	url, closed := closingServer(t)
	p := newPool(t, url, nil)
	for i := range 3 {
		if code, got := post(t, p, "x"); code != 200 || got != "ok" {
			t.Fatalf("%d %q", code, got)
		}
		<-closed
		p.mu.Lock()
		noReuse, idle := p.noReuse, len(p.idle)
		p.mu.Unlock()
		// The second request found the first's connection closed.
		if want := i >= 1; noReuse != want || want && idle != 0 {
			t.Errorf("request %d: noReuse %v, %d idle; want noReuse %v and none idle after", i, noReuse, idle, want)
		}
	}
}

// TestIdleCheckPastDeadline: the check of an idle connection is not
// fooled by the last request's deadline, passed while it waited (send's
// drain bounds a stream's rest by a read deadline 1 s on): the check's
// read failed at once as a timeout, the open connection was taken for
// closed, and a stream at a rate of less than one a second per
// connection dialled again for every request.
func TestIdleCheckPastDeadline(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	})
	p := newPool(t, srv.URL, nil)
	p.checkAfter = 0 // every reuse is checked
	for range 3 {
		resp, c, err := p.Post(context.Background(), []byte("x"), far(), false)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "ok" {
			t.Fatalf("%q %v", b, err)
		}
		// A deadline that passes before the next request.
		c.SetReadDeadline(time.Now().Add(-time.Second))
		c.Release()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 requests one after another, want 1", n)
	}
}

// TestFirstRequestNotStale: a failure on a new connection after the
// request was written is not stale: sending again could repeat a request
// the server processed.
func TestFirstRequestNotStale(t *testing.T) {
	url := rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) { readRequest(br) })
	p := newPool(t, url, nil)
	_, _, err := p.Post(context.Background(), []byte("x"), far(), false)
	var stale *StaleError
	if err == nil || errors.As(err, &stale) {
		t.Fatalf("error %v: want a plain error", err)
	}
}

// TestNotReused: answers after which the connection cannot carry another
// request close it: Connection: close, HTTP/1.0, a body ended by the
// connection's end, a body not read to its end, bytes past the answer.
func TestNotReused(t *testing.T) {
	cases := map[string]struct {
		answer string
		read   int // bytes of the body read; -1: all
	}{
		"connection close": {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", -1},
		"http/1.0":         {"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", -1},
		"until close":      {"HTTP/1.1 200 OK\r\n\r\nok", -1},
		"half read":        {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nokok", 2},
		"trailing bytes":   {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n", -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var conns atomic.Int64
			url := rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) {
				conns.Add(1)
				for readRequest(br) {
					io.WriteString(nc, tc.answer)
					if strings.Contains(tc.answer, "\r\n\r\nok") && !strings.Contains(tc.answer, "Length") {
						return // the body ends with the connection
					}
				}
			})
			p := newPool(t, url, nil)
			for range 2 {
				resp, c, err := p.Post(context.Background(), []byte("x"), far(), false)
				if err != nil {
					t.Fatal(err)
				}
				if tc.read < 0 {
					io.ReadAll(resp.Body)
				} else {
					io.ReadFull(resp.Body, make([]byte, tc.read))
					resp.Body.Close()
				}
				c.Release()
			}
			if n := conns.Load(); n != 2 {
				t.Errorf("%d connections for 2 requests, want 2", n)
			}
		})
	}
}

// TestEarlyAnswer: a server that answers before it has read the whole
// request (a 413 for a body too large) and closes is the request's
// answer, as net/http reads it, not a connection failure (nor a stale
// connection to send it again on): the 32 MB body's write fails on the
// closed connection once the socket buffers are full. The connection is
// not reused.
func TestEarlyAnswer(t *testing.T) {
	var conns atomic.Int64
	url := rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) {
		conns.Add(1)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if req.ContentLength > 1<<20 {
				// Closed with the body unread: the client's write fails.
				io.WriteString(nc, "HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\nContent-Length: 7\r\n\r\ntoo big")
				return
			}
			io.Copy(io.Discard, req.Body)
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	p := newPool(t, url, nil)
	for i, body := range []string{"x", strings.Repeat("x", 32<<20), "x"} {
		want, wantBody := 200, "ok"
		if len(body) > 1 {
			want, wantBody = 413, "too big"
		}
		if code, got := post(t, p, body); code != want || got != wantBody {
			t.Fatalf("request %d: %d %q, want %d %q", i, code, got, want, wantBody)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the one the 413 closed, a new one)", n)
	}
}

// TestInformational: a 103 before the answer is skipped.
func TestInformational(t *testing.T) {
	url := rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) {
		for readRequest(br) {
			io.WriteString(nc, "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nyes")
		}
	})
	p := newPool(t, url, nil)
	if code, got := post(t, p, "x"); code != 201 || got != "yes" {
		t.Errorf("%d %q, want 201 yes", code, got)
	}
}

// TestDeadline: a server that never answers ends at the deadline, as a
// timeout.
func TestDeadline(t *testing.T) {
	url := rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) {
		readRequest(br)
		io.Copy(io.Discard, br) // until the client gives up
	})
	p := newPool(t, url, nil)
	_, _, err := p.Post(context.Background(), []byte("x"), time.Now().Add(50*time.Millisecond), false)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("error %v, want a timeout", err)
	}
}

// TestAbort: Abort ends a request in flight (its read fails) and refuses
// new ones.
func TestAbort(t *testing.T) {
	url := rawServer(t, func(_ int, nc net.Conn, br *bufio.Reader) {
		readRequest(br)
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
		io.Copy(io.Discard, br) // a stream that never ends
	})
	p := newPool(t, url, nil)
	resp, c, err := p.Post(context.Background(), []byte("x"), far(), false)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 3)
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "abc" {
		t.Fatalf("first chunk %q, %v", first, err)
	}
	done := make(chan error)
	go func() {
		_, err := io.ReadAll(resp.Body)
		done <- err
	}()
	p.Abort()
	if err := <-done; err == nil {
		t.Error("the stream's read ended without an error after Abort")
	}
	c.Release()
	if _, _, err := p.Post(context.Background(), []byte("x"), far(), false); !errors.Is(err, ErrAborted) {
		t.Errorf("after Abort: %v, want ErrAborted", err)
	}
}

// TestTLS: https works and keeps its connection.
func TestTLS(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, r.Proto)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	tc := srv.Client().Transport.(*http.Transport).TLSClientConfig
	p, err := NewPool(srv.URL, nil, tc)
	if err != nil {
		t.Fatal(err)
	}
	defer p.CloseIdle()
	for range 3 {
		if code, got := post(t, p, "x"); code != 200 || got != "HTTP/1.1" {
			t.Fatalf("%d %q", code, got)
		}
	}
	if conns.Load() != 1 {
		t.Errorf("%d TLS connections for 3 requests", conns.Load())
	}
}

// TestBadConfig: headers that could split or confuse the request, and
// URLs this client cannot serve, are refused up front.
func TestBadConfig(t *testing.T) {
	for _, tc := range []struct {
		url string
		h   http.Header
	}{
		{"http://h/x", http.Header{"X-A": {"a\r\nX-Injected: 1"}}},
		{"http://h/x", http.Header{"Bad Name": {"v"}}},
		{"http://h/x", http.Header{"Content-Length": {"3"}}},
		{"http://h/x", http.Header{"Host": {"other"}}},
		{"ftp://h/x", nil},
		{"http:///x", nil},
	} {
		if _, err := NewPool(tc.url, tc.h, nil); err == nil {
			t.Errorf("NewPool(%q, %v) accepted", tc.url, tc.h)
		}
	}
}

// FuzzAnswer: whatever bytes a server answers with, a request ends (no
// panic, no hang past the deadline), and a connection is kept only after
// a complete answer whose framing allows another.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-T: 1\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"garbage\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, answer []byte) {
		client, server := net.Pipe()
		defer server.Close()
		go func() {
			br := bufio.NewReader(server)
			if readRequest(br) {
				server.Write(answer)
			}
			server.Close()
		}()
		p := &Pool{head: []byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: "), live: map[*Conn]struct{}{}}
		c, err := p.adopt(client)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.roundTrip([]byte("x"), time.Now().Add(2*time.Second))
		if err != nil {
			c.close()
			return
		}
		b, rerr := io.ReadAll(resp.Body)
		c.Release()
		kept := len(p.idle) == 1
		if kept && (rerr != nil || resp.Close || resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 ||
			resp.ContentLength >= 0 && int64(len(b)) != resp.ContentLength || !bytes.Contains(answer, b)) {
			t.Errorf("kept the connection after %q (body %q, %v)", answer, b, rerr)
		}
		p.CloseIdle()
	})
}

// TestURLUser: a URL's user:password is sent as Basic authentication, as
// net/http sends it (r.BasicAuth reads it back), unless an Authorization
// header is given.
func TestURLUser(t *testing.T) {
	var got []string
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u, pw, ok := r.BasicAuth()
		got = append(got, fmt.Sprint(u, ":", pw, ":", ok, ":", r.Header.Get("Authorization")))
	})
	with := strings.Replace(srv.URL, "http://", "http://ann:s3cr%3At@", 1)
	post(t, newPool(t, with, nil), "x")
	post(t, newPool(t, with, http.Header{"Authorization": {"Bearer k"}}), "x")
	want := []string{"ann:s3cr:t:true:Basic YW5uOnMzY3I6dA==", "::false:Bearer k"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("server saw %q, want %q", got, want)
	}
}
