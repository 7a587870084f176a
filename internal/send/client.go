package send

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/version"
)

// bodyExcerpt is how much of an error response a record keeps.
const bodyExcerpt = 512

// maxBody bounds a non-streaming response body.
const maxBody = 64 << 20

// client posts bodies to one chat-completions URL.
type client struct {
	url string
	// kind is the endpoint the bodies go to: it says how to read the
	// answers.
	kind   endpoint.Kind
	header http.Header
	hc     *http.Client
	// fresh never reuses a connection: the one retry of a request whose
	// kept-alive connection turned out dead goes through it.
	fresh *http.Client
}

// TLSConfig is the client side of --insecure (no certificate check) and
// --ca-cert FILE (PEM certificates trusted besides the system's); nil when
// neither is set.
func TLSConfig(insecure bool, caFile string) (*tls.Config, error) {
	switch {
	case insecure && caFile != "":
		return nil, errors.New("--insecure skips the certificate check that --ca-cert is for: give one of them")
	case insecure:
		return &tls.Config{InsecureSkipVerify: true}, nil //nolint:gosec // asked for by --insecure
	case caFile == "":
		return nil, nil
	}
	data, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-cert: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("--ca-cert %s: no PEM certificate in the file", caFile)
	}
	return &tls.Config{RootCAs: pool}, nil
}

func newClient(kind endpoint.Kind, endpoint, apiKey string, extra http.Header, conns int, tc *tls.Config) *client {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream, application/json"},
		"User-Agent": {"islkit-send/" + version.String()}}
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
	for k, v := range extra {
		h[k] = v
	}
	tr := &http.Transport{
		Proxy:       nil, // a benchmark measures the server, not a proxy
		DialContext: (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		// One kept-alive connection per worker, however many: a pool
		// smaller than the workers closes connections that the next
		// request must dial again (make bench-send: re-dials).
		// MaxConnsPerHost too: when requests start together, a request
		// whose dial is slower than another's request takes the freed
		// connection, and its own dial would be one more.
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		DisableCompression:  true, // gzip would delay SSE chunks and cost CPU
		// The transport's default 4 KB buffers (Read/WriteBufferSize
		// unset): an SSE chunk is a few hundred bytes and a body larger
		// than the buffer is written past it, while 64 KB each cost
		// 128 KB a connection.
		ForceAttemptHTTP2: false,
		TLSClientConfig:   tc,
	}
	once := tr.Clone()
	once.DisableKeepAlives = true
	return &client{url: endpoint, kind: kind, header: h, hc: &http.Client{Transport: tr}, fresh: &http.Client{Transport: once}}
}

// closeIdle drops the kept-alive connections at the end of a run.
func (c *client) closeIdle() {
	c.hc.CloseIdleConnections()
	c.fresh.CloseIdleConnections()
}

// post sends body once. stale reports a failure on a reused connection
// before any byte of a response came back: the server closed a kept-alive
// connection we took from the pool (llama.cpp closes after each stream
// while advertising Keep-Alive), so it never saw this request.
func (c *client) post(ctx context.Context, hc *http.Client, body []byte) (resp *http.Response, stale bool, err error) {
	// One allocation for the trace, its hooks and their flags (they were
	// four).
	t := &connTrace{}
	t.trace = httptrace.ClientTrace{GotConn: t.gotConn, GotFirstResponseByte: t.gotFirstByte}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, &t.trace), http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header = c.header // shared read-only: the transport does not modify it
	resp, err = hc.Do(req)
	return resp, err != nil && t.reused.Load() && !t.answered.Load(), err
}

// connTrace says whether a request went out on a reused connection and
// whether any byte of an answer came back. Atomics: the transport's read
// loop may call gotFirstByte after Do has returned (a request cancelled
// as its answer came).
type connTrace struct {
	trace            httptrace.ClientTrace
	reused, answered atomic.Bool
}

func (t *connTrace) gotConn(i httptrace.GotConnInfo) { t.reused.Store(i.Reused) }
func (t *connTrace) gotFirstByte()                   { t.answered.Store(true) }

// CheckReachable connects once (and does the TLS handshake for https), so
// a wrong host, port or certificate is one clear error before any request.
func CheckReachable(ctx context.Context, endpoint string, tc *tls.Config) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		if u.Scheme == "https" {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %w", endpoint, err)
	}
	defer conn.Close()
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if tc != nil {
			cfg = tc.Clone()
		}
		cfg.ServerName = u.Hostname()
		if err := tls.Client(conn, cfg).HandshakeContext(ctx); err != nil {
			return fmt.Errorf("TLS handshake with %s failed: %w", endpoint, err)
		}
	}
	return nil
}

// do sends one body and fills a Result. reqCtx carries the per-request
// timeout; hard is the run's hard-stop context, to tell a cancelled
// request from a timed-out one.
func (c *client) do(reqCtx, hard context.Context, body []byte) records.Result {
	var res records.Result
	start := time.Now()
	res.StartNs = start.UnixNano()
	resp, stale, err := c.post(reqCtx, c.hc, body)
	if stale && reqCtx.Err() == nil {
		// Safe to send again: nothing was processed. Only once, and only
		// this case; any other failure is recorded as it is.
		res.Retried = true
		// The timings are the retry's: the first attempt never reached
		// the server.
		start = time.Now()
		res.StartNs = start.UnixNano()
		resp, _, err = c.post(reqCtx, c.fresh, body)
	}
	if err != nil {
		res.LatencyNs = time.Since(start).Nanoseconds()
		res.Error = classify(err, reqCtx, hard, records.ErrConnection)
		return res
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, bodyExcerpt))
		res.LatencyNs = time.Since(start).Nanoseconds()
		kind := records.ErrHTTP4xx
		switch {
		case resp.StatusCode == http.StatusTooManyRequests:
			kind = records.ErrRateLimited
		case resp.StatusCode >= 500:
			kind = records.ErrHTTP5xx
		case resp.StatusCode < 400:
			kind = records.ErrProtocol
		}
		res.Error = &records.RequestError{Kind: kind, Message: resp.Status, Body: string(excerpt)}
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(excerpt, &body) == nil {
			if se := parseAPIError(body.Error); se != nil {
				res.Error.Code, res.Error.Type = se.code, se.typ
			}
		}
		return res
	}
	readSSE, readWhole := readStream, readJSON
	if c.kind == endpoint.Responses {
		readSSE, readWhole = readResponsesStream, readResponsesJSON
	}
	stream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if stream {
		err = readSSE(resp.Body, start, &res)
	} else {
		buf := bodies.Get().(*bytes.Buffer)
		buf.Reset()
		_, err = buf.ReadFrom(io.LimitReader(resp.Body, maxBody))
		if err == nil {
			// The parse copies what it keeps: the buffer is free after it.
			err = readWhole(buf.Bytes(), start, time.Now(), &res)
		}
		if buf.Cap() <= 1<<20 {
			bodies.Put(buf)
		}
	}
	res.LatencyNs = time.Since(start).Nanoseconds()
	if stream && err == nil {
		drain(resp.Body)
	}
	if err != nil {
		var pe *protocolError
		var se *serverError
		if errors.As(err, &se) {
			res.Error = &records.RequestError{Kind: records.ErrServer, Message: se.Error(), Code: se.code, Type: se.typ}
		} else if errors.As(err, &pe) {
			res.Error = &records.RequestError{Kind: records.ErrProtocol, Message: err.Error()}
		} else {
			res.Error = classify(err, reqCtx, hard, records.ErrTruncated)
		}
		return res
	}
	res.OK = true
	return res
}

// bodies are the buffers of non-streamed answers read so far, for the
// next ones: a fresh, growing buffer per request was the most garbage a
// non-streamed request made (make bench-send's CPU per request).
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// drainWait bounds drain: a server that keeps a stream open after [DONE]
// costs this connection, not the worker's time.
var drainWait = 50 * time.Millisecond

// drain reads what is left of a stream after [DONE] (the end of its
// chunked body, usually already on its way), so that its connection goes
// back to the pool: closing a body before its end closes the connection,
// and the next request must dial again (make bench-send: re-dials).
func drain(body io.ReadCloser) {
	t := time.AfterFunc(drainWait, func() { body.Close() })
	defer t.Stop()
	io.CopyN(io.Discard, body, 64<<10)
}

// classify names a transport error; other is the kind when it is neither a
// timeout nor a cancellation (connection before the response, truncated
// after it).
func classify(err error, reqCtx, hard context.Context, other string) *records.RequestError {
	kind := other
	switch {
	case hard.Err() != nil:
		kind = records.ErrCancelled
	case errors.Is(reqCtx.Err(), context.DeadlineExceeded), isTimeout(err):
		kind = records.ErrTimeout
	}
	return &records.RequestError{Kind: kind, Message: err.Error()}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
