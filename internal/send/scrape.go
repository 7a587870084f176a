package send

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/islkit/islkit/internal/metrics/scrape"
	"github.com/islkit/islkit/internal/records"
)

// ScrapeConfig is send --scrape-metrics: the server's Prometheus metrics
// sampled into the record stream, one islkit.metrics record per sample:
// one before the first request, one every Interval, one after the last
// request (after Settle), so their difference covers the run.
type ScrapeConfig struct {
	// URL is the address scraped; "" scrapes nothing.
	URL string
	// Auto: URL is the server's /metrics next to --url, not the user's:
	// when its first scrape fails the run goes on without scraping
	// (Run's Summary.ScrapeOff says why) instead of failing.
	Auto bool
	// Interval between samples (DefaultScrapeInterval when 0).
	Interval time.Duration
	// Series are the series kept (metrics.DefaultSelection of the server
	// when nil).
	Series *scrape.Selection
	// Settle is how long the last scrape waits after the last request
	// ended: vLLM counts a request's tokens after it has handed its
	// output over, so a scrape at once can miss the last ones.
	Settle time.Duration
}

// DefaultScrapeInterval and DefaultScrapeSettle are send's defaults.
const (
	DefaultScrapeInterval = 5 * time.Second
	DefaultScrapeSettle   = time.Second
)

// check refuses a scrape configuration send cannot honour.
func (c *ScrapeConfig) check() error {
	if c.URL == "" {
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--scrape-metrics %q: want auto, off or an http(s) URL", c.URL)
	}
	switch {
	case c.Interval < 0 || (c.Interval > 0 && c.Interval < 100*time.Millisecond):
		return fmt.Errorf("--scrape-interval %v: want at least 100ms", c.Interval)
	case c.Settle < 0:
		return fmt.Errorf("scrape settle %v: want >= 0", c.Settle)
	}
	return nil
}

// scraper samples the server's metrics and writes each sample.
type scraper struct {
	cfg    ScrapeConfig
	url    string // without a password, for the records
	client *http.Client
	header http.Header // credentials: only for --url's own host
	sel    scrape.Selection
	start  time.Time
	stage  func() *records.Stage
	write  func(*records.Metrics) error
	// stop cancels the periodic samples (one in flight is dropped).
	stop  context.CancelFunc
	wg    sync.WaitGroup
	errMu sync.Mutex
	err   error // the first write error
}

// startScrape takes the first sample and starts the periodic ones; nil
// (and a reason in off) when scraping is off or an automatic scrape
// failed. A failing explicit --scrape-metrics URL fails the run.
func startScrape(ctx context.Context, o *Config, server string, tlsCfg *tls.Config, stage func() *records.Stage, write func(*records.Metrics) error) (sc *scraper, off string, err error) {
	c := o.Scrape
	if c.URL == "" {
		return nil, "", nil
	}
	if c.Interval == 0 {
		c.Interval = DefaultScrapeInterval
	}
	sel := scrape.DefaultSelection(server)
	if c.Series != nil {
		sel = *c.Series
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	s := &scraper{cfg: c, url: scrape.Redacted(c.URL), sel: sel, start: time.Now(), stage: stage, write: write,
		client: &http.Client{Transport: tr, Timeout: min(c.Interval, 10*time.Second)}}
	if sameHost(c.URL, o.URL) {
		s.header = o.Header.Clone()
		if s.header == nil {
			s.header = http.Header{}
		}
		if o.APIKey != "" {
			s.header.Set("Authorization", "Bearer "+o.APIKey)
		}
	}
	first := s.sample(ctx)
	if first.Error != "" {
		tr.CloseIdleConnections()
		if c.Auto {
			return nil, fmt.Sprintf("no metrics at %s (%s): the run is not scraped (--scrape-metrics off: no scrape, no note)", s.url, first.Error), nil
		}
		return nil, "", fmt.Errorf("--scrape-metrics %s: %s", s.url, first.Error)
	}
	if err := write(first); err != nil {
		return nil, "", err
	}
	loopCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.wg.Go(func() { s.loop(loopCtx) })
	return s, "", nil
}

// loop samples every interval until ctx is cancelled.
func (s *scraper) loop(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if m := s.sample(ctx); ctx.Err() == nil {
				s.emit(m)
			}
		case <-ctx.Done():
			return
		}
	}
}

func (s *scraper) emit(m *records.Metrics) {
	if err := s.write(m); err != nil {
		s.errMu.Lock()
		s.err = cmpOr(s.err, err)
		s.errMu.Unlock()
	}
}

// finish stops the periodic samples and takes the last one, after the
// settle time. After a signal (ctx done) the settle is skipped and the
// last sample gets a second at most: the run ends promptly, its window
// still closed. It returns the first write error.
func (s *scraper) finish(ctx context.Context) error {
	if s == nil {
		return nil
	}
	s.stop()
	s.wg.Wait()
	last := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		last, cancel = context.WithTimeout(last, time.Second)
		defer cancel()
	} else if s.cfg.Settle > 0 {
		t := time.NewTimer(s.cfg.Settle)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	s.emit(s.sample(last))
	s.client.CloseIdleConnections()
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// stageEnd takes a sample as a stage ends, stamped with it, once its
// requests have all ended (nil s: not scraped).
func (s *scraper) stageEnd(ctx context.Context, stage *records.Stage) {
	if s == nil || ctx.Err() != nil {
		return
	}
	m := s.sample(ctx)
	m.Stage = stage
	s.emit(m)
}

// sample scrapes once; a failure is a record with its error.
func (s *scraper) sample(ctx context.Context) *records.Metrics {
	samples, err := s.get(ctx)
	now := time.Now()
	m := &records.Metrics{Kind: records.KindMetrics, SchemaVersion: records.SchemaVersion, URL: s.url,
		Time: now.UTC().Format(time.RFC3339Nano), ElapsedNs: now.Sub(s.start).Nanoseconds(), Samples: samples}
	if s.stage != nil {
		m.Stage = s.stage()
	}
	if err != nil {
		m.Samples, m.Error = nil, err.Error()
	}
	return m
}

func (s *scraper) get(ctx context.Context) ([]records.MetricSample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range s.header {
		req.Header[k] = v
	}
	// The classic text format: what every Prometheus client library
	// writes when asked for it (not OpenMetrics, not protobuf).
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the record already
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return scrape.Parse(resp.Body, s.sel)
}

// sameHost reports whether a and b name the same scheme and host: only
// then do --url's credentials go with the scrape.
func sameHost(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && ua.Scheme == ub.Scheme && ua.Host == ub.Host
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// scrapeServer is the server whose default series are scraped: --server,
// else the conversations' (compose --server), else "" (both vLLM's and
// SGLang's).
func scrapeServer(b *Builder, convs []*records.Conversation) string {
	if b.opts.Server != "" {
		return b.opts.Server
	}
	for _, c := range convs {
		if c.Server != "" {
			return c.Server
		}
	}
	return ""
}
