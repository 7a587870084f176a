package send

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/send/exact"
)

// BenchmarkExactOverhead measures what --exact adds to each request at
// ISL 8k: 16 two-turn conversations of the embedded Qwen3 (chat template
// applied, first_turn_suffix marker, --isl 4000 --osl 256, so turn 1's
// request is about 8,260 tokens), turn 1 sent after a reply of a random
// length up to its budget, as the test server's random stop gives it.
// For every such request it times the body build alone (send without
// --exact) and the sizing that replaces it (prediction, resize, one
// render and count, the body build; the resized text's own count for
// resized_to is taken after the request went out), and reports the build time and the
// added time (sizing − build) at the median and p99, and their ratios;
// and, as the floor --exact cannot go below, one render and count of the
// same request alone (added/count: how close the sizing is to that); and
// the whole-request renders per request sized, both turns counted, and
// the median time sizing a first turn takes.
// "fresh" sends pass 0, whose first turns compose sized; "recycled" sends
// every round as a new recycle pass (a new marker, pass 1, 2, ...), whose
// first turns are predicted with it.
func BenchmarkExactOverhead(b *testing.B) {
	for _, recycled := range []bool{false, true} {
		b.Run(map[bool]string{false: "fresh", true: "recycled"}[recycled], func(b *testing.B) { exactOverhead(b, recycled) })
	}
}

func exactOverhead(b *testing.B, recycled bool) {
	convs := liveConversations(b, "", cachebust.FirstTurnSuffix, compose.Options{ISL: 4000, OSL: 256, Conversations: 16, Turns: 2, Seed: 3})
	z := exactSizer(b, "", convs)
	bl, _ := NewBuilder(PayloadOptions{Stream: true}, nil)
	words := []string{"lorem", " ipsum", " dolor", " sit", " amet", ",", " consectetur", " adipiscing", " elit", "."}
	rng := rand.New(rand.NewPCG(1, 2))
	replies := make([]string, len(convs))
	for i := range replies {
		var sb strings.Builder
		for k := range 1 + rng.IntN(convs[i].Turns[0].MaxTokens) {
			sb.WriteString(words[k%len(words)])
		}
		replies[i] = sb.String()
	}
	var build, added, count, first []time.Duration
	var renders, requests int64
	target, pass := 0, 0
	var counted int64
	b.ResetTimer()
	for b.Loop() {
		if recycled {
			pass++
		}
		for i := range convs {
			orig := &convs[i]
			c := *orig
			c.Turns = slices.Clone(orig.Turns)
			var st exact.Session
			f0 := time.Now()
			if f, err := exact.Fit(z, bl, &c, &orig.Turns[0], 0, pass, nil, &st); err != nil || f.Wire != orig.Turns[0].TargetISL {
				b.Fatalf("%v: first turn counts %d, target %d", err, f.Wire, orig.Turns[0].TargetISL)
			}
			first = append(first, time.Since(f0))
			hist := []string{replies[i]}
			plain := *orig
			t0 := time.Now()
			if _, err := bl.Build(&plain, 1, pass, hist); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			s, err := exact.Fit(z, bl, &c, &orig.Turns[1], 1, pass, hist, &st)
			t2 := time.Now()
			if err != nil || s.Wire != orig.Turns[1].TargetISL {
				b.Fatalf("%v: counts %d, target %d", err, s.Wire, orig.Turns[1].TargetISL)
			}
			target = s.Wire
			build = append(build, t1.Sub(t0))
			added = append(added, t2.Sub(t1)-t1.Sub(t0))
			renders, requests = z.Renders()
			renders -= counted // the benchmark's own counts below
			t3 := time.Now()
			if _, err := z.Count(s.Built.Body); err != nil {
				b.Fatal(err)
			}
			count = append(count, time.Since(t3))
			counted++
		}
	}
	b.StopTimer()
	slices.Sort(build)
	slices.Sort(added)
	slices.Sort(count)
	slices.Sort(first)
	q := func(d []time.Duration, p int) float64 { return float64(d[(len(d)-1)*p/100].Microseconds()) }
	b.ReportMetric(float64(target), "isl")
	b.ReportMetric(q(build, 50), "build-p50-µs")
	b.ReportMetric(q(build, 99), "build-p99-µs")
	b.ReportMetric(q(added, 50), "added-p50-µs")
	b.ReportMetric(q(added, 99), "added-p99-µs")
	b.ReportMetric(q(added, 50)/q(build, 50), "added/build-p50")
	b.ReportMetric(q(added, 99)/q(build, 99), "added/build-p99")
	b.ReportMetric(q(count, 50), "count-p50-µs")
	b.ReportMetric(q(added, 50)/q(count, 50), "added/count-p50")
	b.ReportMetric(q(first, 50), "first-p50-µs")
	b.ReportMetric(float64(renders)/float64(requests), "renders/request")
}
