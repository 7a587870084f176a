package send

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

func dataset(n, turns int) []records.Conversation {
	var convs []records.Conversation
	for i := range n {
		texts := make([]string, turns)
		for k := range texts {
			texts[k] = fmt.Sprintf("question %d of conversation %d", k, i)
		}
		convs = append(convs, conv(fmt.Sprintf("c%03d", i), i, cachebust.FirstTurnPrefix, "", texts...))
	}
	return convs
}

// wantKind maps each injected fault to the error kind send must report.
var wantKind = map[string]string{
	testserver.Fault500:      records.ErrHTTP5xx,
	testserver.Fault429:      records.ErrRateLimited,
	testserver.FaultReset:    records.ErrConnection,
	testserver.FaultStall:    records.ErrTimeout,
	testserver.FaultTruncate: records.ErrTruncated,
}

// TestFaults1000: with the server injecting every fault kind, 1000
// requests give exactly 1000 records, none duplicated, each failure
// classified as the fault the server injected.
func TestFaults1000(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			s := testserver.StartTest(t, testserver.Config{NoTokenize: true, FaultRate: 0.25, Seed: 7})
			var out bytes.Buffer
			sum, err := Run(context.Background(), &out, dataset(37, 3), newBuilder(t, PayloadOptions{Stream: stream}),
				LiveOptions{URL: s.URL(), Concurrency: 32, Requests: 1000, Recycle: true, Timeout: 250 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			recs := liveRecords(t, &out)
			if len(recs) != 1000 || sum.Requests != 1000 || s.Requests() != 1000 {
				t.Fatalf("%d records, summary %d, server saw %d; want 1000", len(recs), sum.Requests, s.Requests())
			}
			seen := map[string]bool{}
			got := map[string]int{}
			failed := 0
			for _, r := range recs {
				k := fmt.Sprint(r.ConversationID, "/", r.Pass, "/", r.Turn)
				if seen[k] {
					t.Errorf("duplicate record %s", k)
				}
				seen[k] = true
				if !r.Result.OK {
					failed++
					got[r.Result.Error.Kind]++
				}
			}
			want := map[string]int{}
			injected := 0
			for f, n := range s.Faults() {
				want[wantKind[f]] += n
				injected += n
			}
			if fmt.Sprint(got) != fmt.Sprint(want) || failed != sum.Failed || injected != failed {
				t.Errorf("errors by kind %v, server injected %v (failed %d, summary %d)", got, want, failed, sum.Failed)
			}
			if len(want) != 5 {
				t.Errorf("not every fault kind was injected: %v", s.Faults())
			}
			testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, recs[0]))
		})
	}
}

// TestEachFault forces one fault per run through the request header.
func TestEachFault(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	for _, f := range testserver.FaultKinds() {
		var out bytes.Buffer
		sum, err := Run(context.Background(), &out, dataset(2, 2), newBuilder(t, PayloadOptions{Stream: true}),
			LiveOptions{URL: s.URL(), Concurrency: 2, Timeout: 200 * time.Millisecond,
				Header: http.Header{testserver.FaultHeader: {f}}})
		if err != nil {
			t.Fatal(err)
		}
		recs := liveRecords(t, &out)
		if len(recs) != 4 || sum.Failed != 4 {
			t.Fatalf("%s: %d records, %d failed", f, len(recs), sum.Failed)
		}
		for _, r := range recs {
			if r.Result.Error.Kind != wantKind[f] || r.Result.OK {
				t.Errorf("%s: got %+v", f, r.Result.Error)
			}
			if r.Turn == 1 && !r.SyntheticHistory {
				t.Errorf("%s: turn 1 after a failure should use the synthetic reply", f)
			}
			testutil.ValidateSchema(t, "request.schema.json", mustJSON(t, r))
		}
		if f == testserver.Fault500 && !strings.Contains(recs[0].Result.Error.Body, "injected fault") {
			t.Errorf("500 body excerpt: %q", recs[0].Result.Error.Body)
		}
	}
}

func TestUnreachable(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var out bytes.Buffer
	_, err := Run(context.Background(), &out, dataset(3, 1), newBuilder(t, PayloadOptions{}),
		LiveOptions{URL: "http://" + addr, Concurrency: 4, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot reach http://"+addr) || !strings.Contains(err.Error(), "refused") || out.Len() != 0 {
		t.Errorf("err %v, output %q", err, out.String())
	}
	// A TLS server spoken to over https without a trusted certificate.
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	_, err = Run(context.Background(), &out, dataset(1, 1), newBuilder(t, PayloadOptions{}),
		LiveOptions{URL: strings.Replace(s.URL(), "http:", "https:", 1), Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "TLS handshake") {
		t.Errorf("https to plain http: %v", err)
	}
}

func TestValidate(t *testing.T) {
	const u = "http://h:8000"
	bad := map[string]LiveOptions{
		"--concurrency":       {URL: u, Concurrency: -1, Timeout: time.Second},
		"--rate":              {URL: u, Rate: -2, Timeout: time.Second},
		"--rate NaN":          {URL: u, Rate: math.NaN(), Timeout: time.Second},
		"--rate +Inf":         {URL: u, Rate: math.Inf(1), Timeout: time.Second},
		"--timeout":           {URL: u, Concurrency: 1, Timeout: 0},
		"--recycle":           {URL: u, Concurrency: 1, Timeout: time.Second, Recycle: true},
		"--requests":          {URL: u, Concurrency: 1, Timeout: time.Second, Requests: -5},
		"--rate-distribution": {URL: u, Rate: 5, RateDistribution: "uniform", Timeout: time.Second},
		"--url":               {URL: "h:8000", Concurrency: 1, Timeout: time.Second},
	}
	for flag, o := range bad {
		if err := o.Validate(); err == nil || !strings.HasPrefix(err.Error(), strings.Fields(flag)[0]) {
			t.Errorf("%+v: error %v, want one about %s", o, err, flag)
		}
	}
	o := LiveOptions{URL: u, Timeout: time.Second}
	if err := o.Validate(); err != nil || o.Concurrency != 1 {
		t.Errorf("defaults: %v, concurrency %d", err, o.Concurrency)
	}
}

// TestInterrupt: cancelling stops issuing, in-flight requests get the
// grace period and then a "cancelled" record each; nothing is lost.
func TestInterrupt(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true, TokensPerSecond: 20, DefaultMaxTokens: 200})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var out bytes.Buffer
	startT := time.Now()
	convs := dataset(50, 1)
	for i := range convs {
		convs[i].Turns[0].MaxTokens = 200
	}
	sum, err := Run(ctx, &out, convs, newBuilder(t, PayloadOptions{Stream: true}),
		LiveOptions{URL: s.URL(), Concurrency: 4, Timeout: time.Minute, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(startT); el > 3*time.Second {
		t.Errorf("stop took %v", el)
	}
	recs := liveRecords(t, &out)
	if len(recs) != 4 || s.Requests() != 4 || !sum.Interrupted {
		t.Fatalf("%d records, server saw %d, summary %+v", len(recs), s.Requests(), sum)
	}
	for _, r := range recs {
		if r.Result.Error == nil || r.Result.Error.Kind != records.ErrCancelled {
			t.Errorf("record %+v", r.Result)
		}
	}
}

// TestRate: --rate paces requests (constant and Poisson) and --duration
// stops issuing.
func TestRate(t *testing.T) {
	s := testserver.StartTest(t, testserver.Config{NoTokenize: true})
	for _, dist := range []string{RateConstant, RatePoisson} {
		var out bytes.Buffer
		sum, err := Run(context.Background(), &out, dataset(5, 2), newBuilder(t, PayloadOptions{Stream: true}),
			LiveOptions{URL: s.URL(), Rate: 200, RateDistribution: dist, Recycle: true, Duration: 500 * time.Millisecond, Timeout: time.Second, Grace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		recs := liveRecords(t, &out)
		// 200/s for 0.5 s: 100 expected; Poisson's count varies (sd 10).
		if len(recs) < 65 || len(recs) > 135 || sum.Failed != 0 {
			t.Errorf("%s: %d records in 0.5 s at 200/s, %d failed", dist, len(recs), sum.Failed)
		}
		starts := make([]int64, len(recs))
		for i, r := range recs {
			starts[i] = r.Result.StartNs
		}
		sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
		if span := time.Duration(starts[len(starts)-1] - starts[0]); span < 350*time.Millisecond {
			t.Errorf("%s: requests spread over %v only", dist, span)
		}
	}
}
