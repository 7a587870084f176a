package send

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/records"
)

// bodyExcerpt is how much of an error response a record keeps.
const bodyExcerpt = 512

// maxBody bounds a non-streaming response body.
const maxBody = 64 << 20

// client posts bodies to one chat-completions URL.
type client struct {
	url    string
	header http.Header
	hc     *http.Client
}

func newClient(endpoint, apiKey string, extra http.Header, conns int) *client {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream, application/json"}}
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
	for k, v := range extra {
		h[k] = v
	}
	tr := &http.Transport{
		Proxy:               nil, // a benchmark measures the server, not a proxy
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns, // one kept-alive connection per worker
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		DisableCompression:  true, // gzip would delay SSE chunks and cost CPU
		WriteBufferSize:     64 << 10,
		ReadBufferSize:      64 << 10,
		ForceAttemptHTTP2:   false,
	}
	return &client{url: endpoint, header: h, hc: &http.Client{Transport: tr}}
}

// CheckReachable connects once (and does the TLS handshake for https), so
// a wrong host, port or certificate is one clear error before any request.
func CheckReachable(ctx context.Context, endpoint string) error {
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
		tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname()})
		if err := tc.HandshakeContext(ctx); err != nil {
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
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		res.Error = &records.RequestError{Kind: records.ErrProtocol, Message: err.Error()}
		return res
	}
	req.Header = c.header // shared read-only: the transport does not modify it
	start := time.Now()
	res.StartNs = start.UnixNano()
	resp, err := c.hc.Do(req)
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
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		err = readStream(resp.Body, start, &res)
	} else {
		var data []byte
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if err == nil {
			err = readJSON(data, start, time.Now(), &res)
		}
	}
	res.LatencyNs = time.Since(start).Nanoseconds()
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
