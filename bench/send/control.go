package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The control client: what a careful minimal Go streaming client does, and
// nothing more. c goroutines each post the body, read the SSE lines with
// a bufio.Scanner, decode each data line with encoding/json into the few
// fields a benchmark needs, and keep the time to the first content chunk.
// One kept-alive connection per goroutine (MaxIdleConnsPerHost = c); the
// transport's default 4 KB buffers.

type controlChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func runControl(url string, body []byte, c, requests int, stagger time.Duration) result {
	tr := &http.Transport{MaxIdleConns: c, MaxIdleConnsPerHost: c, DisableCompression: true}
	hc := &http.Client{Transport: tr}
	var left atomic.Int64
	left.Store(int64(requests))
	var mu sync.Mutex
	var res result
	var wg sync.WaitGroup
	start := time.Now()
	for k := range c {
		wg.Go(func() {
			if c > 1 {
				time.Sleep(time.Until(start.Add(stagger * time.Duration(k) / time.Duration(c-1))))
			}
			var ttfts []int64
			chunks, failed := 0, 0
			for n := 0; left.Add(-1) >= 0; n++ {
				t0 := time.Now()
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				resp, err := hc.Do(req)
				if err != nil {
					failed++
					continue
				}
				sc := bufio.NewScanner(resp.Body)
				first := true
				ok := false
				for sc.Scan() {
					line := sc.Bytes()
					data, found := bytes.CutPrefix(line, []byte("data: "))
					if !found {
						continue
					}
					if string(data) == "[DONE]" {
						ok = true
						break
					}
					chunks++
					var ch controlChunk
					if json.Unmarshal(data, &ch) != nil {
						break
					}
					if first && len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
						// After the first request, as for send (main.go).
						if n > 0 {
							ttfts = append(ttfts, time.Since(t0).Nanoseconds())
						}
						first = false
					}
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if !ok {
					failed++
				}
			}
			mu.Lock()
			res.TTFTNs = append(res.TTFTNs, ttfts...)
			res.Chunks += chunks
			res.Errors += failed
			mu.Unlock()
		})
	}
	wg.Wait()
	res.ElapsedS = time.Since(start).Seconds()
	res.Requests = requests
	return res
}
