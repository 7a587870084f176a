package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
)

func TestPrefixCacheSummary(t *testing.T) {
	s := NewAccumulator()
	p := func(v int) *int { return &v }
	turn := 0
	add := func(id string, prompt int, expected, server *int) {
		s.Add(records.ISL{Counted: "templated", Templated: p(prompt), ConversationID: id, TurnIndex: &turn,
			ExpectedCached: expected, ServerCached: server})
	}
	add("a", 100, p(0), p(0))
	add("b", 100, p(64), p(64))
	add("c", 200, p(128), p(112)) // the server found one block less
	add("d", 100, p(32), nil)     // no server count (a dry run, or no usage)
	add("e", 100, nil, p(16))     // no expectation: not in the comparison
	r := s.Report()
	c := r.PrefixCache
	if c == nil || c.Requests != 4 || c.Compared != 3 || c.PromptTokens != 500 || c.Expected != 224 || c.Server != 176 || c.Differ != 1 {
		t.Fatalf("prefix cache %+v", c)
	}
	if c.ExpectedRate != 224.0/500 || c.ServerRate != 176.0/400 {
		t.Errorf("rates %v %v", c.ExpectedRate, c.ServerRate)
	}
	if d := c.DifferExample; len(d) != 1 || d[0].ConversationID != "c" || d[0].Turn == nil || *d[0].Turn != 0 || d[0].Expected != 128 || d[0].Server != 112 {
		t.Errorf("differ %+v", c.DifferExample)
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := "prefix cache: 4 requests, expected 224 cached tokens (44.8% of prompt); server 176 (44.0%) on 3, 1 differ (first: c expected 128, server 112)"
	if !strings.Contains(buf.String(), want+"\n") {
		t.Errorf("text summary lacks %q:\n%s", want, buf.String())
	}
	if NewAccumulator().Report().PrefixCache != nil {
		t.Error("an empty summary reports a prefix cache")
	}
}

// TestServerCacheSummary (#27 item 1): the server's cached tokens are
// reported whenever it sends them, expected or not, and a first request
// whose cached tokens reach the end of its marker is a marker hit, said in
// the text summary and the JSON.
func TestServerCacheSummary(t *testing.T) {
	s := NewAccumulator()
	p := func(v int) *int { return &v }
	turn := 0
	add := func(id string, prompt int, server, markerEnd *int) {
		s.Add(records.ISL{Counted: "templated", Templated: p(prompt), ConversationID: id, TurnIndex: &turn,
			ServerCached: server, MarkerEnd: markerEnd})
	}
	add("a", 100, p(16), p(30))  // the shared system prompt before the marker
	add("b", 200, p(192), p(30)) // the marker was cached: a hit
	add("c", 100, nil, nil)      // no server count
	add("d", 100, p(0), nil)
	c := s.Report().ServerCache
	if c == nil || c.Requests != 3 || c.PromptTokens != 400 || c.CachedTokens != 208 || c.HitRate != 208.0/400 || c.MarkerHits != 1 {
		t.Fatalf("server cache %+v", c)
	}
	if e := c.MarkerHitExamples; len(e) != 1 || e[0] != (MarkerHit{"b", 192, 30}) {
		t.Errorf("marker hits %+v", e)
	}
	if data := validate(t, s); !strings.Contains(string(data), `"marker_hits":1`) {
		t.Errorf("summary JSON lacks marker_hits: %s", data)
	}
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"server cached tokens: 208 of 400 prompt tokens (52.0%) on 3 requests\n",
		"warning: 1 first request(s) found their cache-bust marker already cached (first: b, 192 cached, the marker ends at token 30)",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text summary lacks %q:\n%s", want, buf.String())
		}
	}
	if NewAccumulator().Report().ServerCache != nil {
		t.Error("an empty summary reports server cached tokens")
	}
}
