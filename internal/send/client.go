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
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/h1"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/stream"
	"github.com/islkit/islkit/internal/version"
	"github.com/islkit/islkit/internal/wire"
)

// bodyExcerpt is how much of an error response a record keeps.
const bodyExcerpt = 512

// maxBody bounds a non-streaming response body (a variable: tests lower
// it).
var maxBody = 64 << 20

// client posts bodies to one endpoint URL, over one kept-alive
// connection per request in flight (internal/h1: net/http's Transport
// cost send most of its CPU per request).
type client struct {
	// kind is the endpoint the bodies go to: it says how to read the
	// answers.
	kind endpoint.Kind
	pool *h1.Pool
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

func newClient(kind endpoint.Kind, endpoint, apiKey string, extra http.Header, tc *tls.Config) (*client, error) {
	// Accept-Encoding identity: send reads answers as they come, and a
	// compressed stream cannot be read chunk by chunk (issue 27 item 18).
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream, application/json"},
		"Accept-Encoding": {"identity"}, "User-Agent": {"islkit-send/" + version.String()}}
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
	for k, v := range extra {
		h[http.CanonicalHeaderKey(k)] = v
	}
	// No proxy, as before with net/http's Transport (Proxy nil): a
	// benchmark measures the server, not a proxy. No compression: gzip
	// would delay SSE chunks and cost CPU.
	pool, err := h1.NewPool(endpoint, h, tc)
	if err != nil {
		return nil, err
	}
	return &client{kind: kind, pool: pool}, nil
}

// closeIdle drops the kept-alive connections at the end of a run.
func (c *client) closeIdle() { c.pool.CloseIdle() }

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
		return fmt.Errorf("cannot reach %s: %w", wire.RedactURL(endpoint), err)
	}
	defer conn.Close()
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if tc != nil {
			cfg = tc.Clone()
		}
		cfg.ServerName = u.Hostname()
		if err := tls.Client(conn, cfg).HandshakeContext(ctx); err != nil {
			return fmt.Errorf("TLS handshake with %s failed: %w", wire.RedactURL(endpoint), err)
		}
	}
	return nil
}

// do sends one body and fills a Result. timeout bounds the request;
// hard is the run's hard-stop context, to tell a cancelled request from a
// timed-out one (its cancellation aborts the pool).
func (c *client) do(hard context.Context, timeout time.Duration, body []byte) records.Result {
	var res records.Result
	start := time.Now()
	res.StartNs = start.UnixNano()
	deadline := start.Add(timeout)
	resp, conn, err := c.pool.Post(hard, body, deadline, false)
	var stale *h1.StaleError
	if errors.As(err, &stale) && hard.Err() == nil && !c.pool.Aborted() && time.Now().Before(deadline) {
		// Safe to send again: not a byte of the request was written. Only
		// once, and only this case; any other failure is recorded as it
		// is (a reset after the request was written is ErrReset: the
		// server may have processed it).
		res.Retried = true
		// The timings are the retry's: the first attempt never reached
		// the server.
		start = time.Now()
		res.StartNs = start.UnixNano()
		resp, conn, err = c.pool.Post(hard, body, deadline, true)
	}
	if err != nil {
		res.LatencyNs = time.Since(start).Nanoseconds()
		kind := records.ErrConnection
		if _, ok := errors.AsType[*h1.ResetError](err); ok {
			kind = records.ErrReset
		}
		res.Error = c.classify(err, hard, kind)
		return res
	}
	defer conn.Release()
	res.Status = resp.StatusCode
	if resp.StatusCode != http.StatusOK {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, bodyExcerpt))
		res.LatencyNs = time.Since(start).Nanoseconds()
		kind := records.ErrHTTP4xx
		msg := resp.Status
		switch {
		case resp.StatusCode == http.StatusTooManyRequests:
			kind = records.ErrRateLimited
		case resp.StatusCode >= 500:
			kind = records.ErrHTTP5xx
		case resp.StatusCode < 400:
			kind = records.ErrProtocol
			if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 {
				// send does not follow a redirect (a POST's body would
				// not follow it everywhere): say where it pointed.
				msg += ", Location: " + loc + " (send does not follow redirects: give --url the address it points to)"
			}
		}
		res.Error = &records.RequestError{Kind: kind, Message: msg, Body: string(excerpt)}
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(excerpt, &body) == nil {
			if se := stream.ParseAPIError(body.Error); se != nil {
				res.Error.Code, res.Error.Type = se.Code, se.Type
			}
		}
		return res
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		// Asked for identity, the server compressed anyway: its bytes
		// are no SSE and no JSON (they read as a stream truncated after
		// 0 chunks).
		res.LatencyNs = time.Since(start).Nanoseconds()
		res.Error = &records.RequestError{Kind: records.ErrProtocol,
			Message: fmt.Sprintf("the server compressed its answer (Content-Encoding: %s) although send asked for Accept-Encoding: identity; send reads answers uncompressed: turn compression off on the server or the proxy in front of it", enc)}
		return res
	}
	readSSE, readWhole := stream.Readers(c.kind)
	streamed := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if streamed {
		err = readSSE(resp.Body, start, &res)
	} else {
		buf := bodies.Get().(*bytes.Buffer)
		buf.Reset()
		// One byte past the limit tells a body over it from one of it.
		_, err = buf.ReadFrom(io.LimitReader(resp.Body, int64(maxBody)+1))
		switch {
		case err == nil && buf.Len() > maxBody:
			err = &stream.ProtocolError{Err: fmt.Errorf("the response body exceeded send's limit of %s for a non-streamed answer", sizeText(maxBody))}
		case err == nil:
			// The parse copies what it keeps: the buffer is free after it.
			err = readWhole(buf.Bytes(), start, time.Now(), &res)
		}
		if buf.Cap() <= 1<<20 {
			bodies.Put(buf)
		}
	}
	res.LatencyNs = time.Since(start).Nanoseconds()
	if streamed && err == nil {
		drain(conn, resp.Body, deadline)
	}
	if err != nil {
		var pe *stream.ProtocolError
		var se *stream.ServerError
		if errors.As(err, &se) {
			res.Error = &records.RequestError{Kind: records.ErrServer, Message: se.Error(), Code: se.Code, Type: se.Type}
		} else if errors.As(err, &pe) {
			res.Error = &records.RequestError{Kind: records.ErrProtocol, Message: err.Error()}
		} else {
			res.Error = c.classify(err, hard, records.ErrTruncated)
		}
		return res
	}
	res.OK = true
	return res
}

// sizeText is n bytes in MiB when whole, else in bytes.
func sizeText(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// bodies are the buffers of non-streamed answers read so far, for the
// next ones: a fresh, growing buffer per request was the most garbage a
// non-streamed request made (make bench-send's CPU per request).
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// drainWait bounds drain: a server that keeps a stream open after [DONE]
// loses this connection after it. Not less: on an overloaded machine the
// end of a chunked body can come 50 ms after [DONE] (make bench-send at
// 4000 streams, 2 cores: a 50 ms bound cost up to 5 re-dials a run). The
// wait is the worker's, and counts as its next request's schedule lag.
var drainWait = time.Second

// drain reads what is left of a stream after [DONE] (the end of its
// chunked body, usually already on its way), so that its connection goes
// back to the pool: a body not read to its end closes the connection,
// and the next request must dial again (make bench-send: re-dials).
func drain(conn *h1.Conn, body io.Reader, deadline time.Time) {
	if t := time.Now().Add(drainWait); t.Before(deadline) {
		deadline = t
	}
	if conn.SetReadDeadline(deadline) == nil {
		io.CopyN(io.Discard, body, 64<<10)
	}
}

// classify names a transport error; other is the kind when it is neither a
// timeout nor a cancellation (connection before the response, truncated
// after it).
func (c *client) classify(err error, hard context.Context, other string) *records.RequestError {
	kind := other
	switch {
	case hard.Err() != nil, c.pool.Aborted():
		kind = records.ErrCancelled
	case isTimeout(err):
		kind = records.ErrTimeout
	}
	return &records.RequestError{Kind: kind, Message: err.Error()}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
