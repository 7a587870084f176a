package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// The fast server: an OpenAI-compatible chat endpoint that costs as little
// as possible, so the clients' differences show. A stream waits ttft, then
// sends chunks content chunks gap apart, a usage chunk and [DONE]; a
// non-streamed request is answered at once. It counts the connections
// that carried a chat request (re-dials show as more connections than
// streams) and runs in its own process, so its memory and CPU are not the
// client's.

type connKey struct{}

type server struct {
	ttft, gap time.Duration
	chunks    int
	conns     atomic.Int64 // connections that served a chat request
}

var (
	contentChunk = []byte(`data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"finish_reason":null}]}` + "\n\n")
	finalChunks  = []byte(`data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n" +
		`data: {"id":"b","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":%d,"total_tokens":%d}}` + "\n\n" +
		"data: [DONE]\n\n")
	completion = []byte(`{"id":"b","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"tok tok"},"finish_reason":"length"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
)

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/stats" {
		fmt.Fprintf(w, `{"conns":%d}`, s.conns.Load())
		return
	}
	if c, ok := r.Context().Value(connKey{}).(*atomic.Bool); ok && c.CompareAndSwap(false, true) {
		s.conns.Add(1)
	}
	var body struct {
		Stream bool `json:"stream"`
	}
	data, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(data, &body)
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write(completion)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	fl.Flush()
	next := time.Now().Add(s.ttft)
	t := time.NewTimer(s.ttft)
	defer t.Stop()
	for i := range s.chunks {
		if i > 0 {
			next = next.Add(s.gap)
			t.Reset(time.Until(next))
		}
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		if _, err := w.Write(contentChunk); err != nil {
			return
		}
		fl.Flush()
	}
	fmt.Fprintf(w, string(finalChunks), s.chunks, 10+s.chunks)
	fl.Flush()
}

// runServer serves until stdin closes (the bench's end), printing its
// address first.
func runServer(ttft, gap time.Duration, chunks int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s := &server{ttft: ttft, gap: gap, chunks: chunks}
	hs := &http.Server{Handler: s, ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, new(atomic.Bool))
	}}
	fmt.Println("listening " + ln.Addr().String())
	go func() { io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	return hs.Serve(ln)
}

// serverConns asks the server how many connections carried chat requests.
func serverConns(base string) (int64, error) {
	resp, err := http.Get(base + "/stats")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st struct {
		Conns int64 `json:"conns"`
	}
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st.Conns, err
}
