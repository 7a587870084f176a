package imagehdr

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Fetcher reads the headers of remote images (measure --fetch-images):
// only the first bytes of each, each URL once (the result, an error
// included, is cached), as many at a time as callers ask.
type Fetcher struct {
	Client  *http.Client
	Timeout time.Duration

	mu    sync.Mutex
	cache map[string]*fetched
}

type fetched struct {
	done chan struct{}
	h    Header
	err  error
}

// NewFetcher reads with client (nil: http.DefaultClient), giving up on
// one URL after timeout.
func NewFetcher(client *http.Client, timeout time.Duration) *Fetcher {
	if client == nil {
		client = http.DefaultClient
	}
	return &Fetcher{Client: client, Timeout: timeout, cache: map[string]*fetched{}}
}

// Header is the header of the image at url.
func (f *Fetcher) Header(url string) (Header, error) {
	f.mu.Lock()
	e, ok := f.cache[url]
	if !ok {
		e = &fetched{done: make(chan struct{})}
		f.cache[url] = e
	}
	f.mu.Unlock()
	if ok {
		<-e.done
		return e.h, e.err
	}
	e.h, e.err = f.read(url)
	close(e.done)
	return e.h, e.err
}

func (f *Fetcher) read(url string) (Header, error) {
	ctx, cancel := context.WithTimeout(context.Background(), f.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Header{}, fail("image URL %s: %v", clip(url), err)
	}
	resp, err := f.Client.Do(req)
	if err != nil {
		return Header{}, fail("image URL %s: %v", clip(url), err)
	}
	// Closing the body after the header drops the rest unread.
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Header{}, fail("image URL %s: %s", clip(url), resp.Status)
	}
	h, err := Read(resp.Body)
	if err != nil {
		return Header{}, fmt.Errorf("image URL %s: %w", clip(url), err)
	}
	return h, nil
}
