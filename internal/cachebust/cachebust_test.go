package cachebust

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/endpoint"
)

// Vectors from aiperf-behaviour.md §1.2.
func TestDigestVectors(t *testing.T) {
	want := []string{
		"8e15353008f0", "aa4ebc4be507", "a3a0193ebdfe", "a85a26fafbc9",
		"d92da992430f", "219645128b72", "2ca036eb9f53", "a9f20f688655",
	}
	for i, w := range want {
		if got := Digest("estimator", i, i, "estimator-"+strconv.Itoa(i)); got != w {
			t.Errorf("Digest(estimator:%d:%d:estimator-%d) = %s, want %s", i, i, i, got, w)
		}
	}
	if got := Digest("bench", 0, 0, "trace_a"); got != "eb232ceb3496" {
		t.Errorf("Digest(bench:0:0:trace_a) = %s, want eb232ceb3496", got)
	}
}

func TestMarkerShapes(t *testing.T) {
	tests := []struct {
		t    Target
		want string
	}{
		{SystemPrefix, "[rid:eb232ceb3496]\n\n"},
		{FirstTurnPrefix, "[rid:eb232ceb3496]\n\n"},
		{SystemSuffix, "\n\n[rid:eb232ceb3496]"},
		{FirstTurnSuffix, "\n\n[rid:eb232ceb3496]"},
		{None, ""},
	}
	for _, tt := range tests {
		if got := Marker(tt.t, "bench", 0, 0, "trace_a"); got != tt.want {
			t.Errorf("Marker(%s) = %q, want %q", tt.t, got, tt.want)
		}
	}
	if m := Marker(SystemPrefix, "bench", 0, 0, "trace_a"); len(m) != 20 {
		t.Errorf("prefix marker is %d chars, want 20", len(m))
	}
	re := regexp.MustCompile(MarkerPattern)
	// Position never changes the digest: all four targets share one rid.
	rids := map[string]bool{}
	for _, tg := range []Target{SystemPrefix, SystemSuffix, FirstTurnPrefix, FirstTurnSuffix} {
		m := Marker(tg, "bench", 3, 7, "trace_xyz")
		rids[re.FindString(m)] = true
		if tg.IsPrefix() != (strings.HasSuffix(m, "\n\n") && !strings.HasPrefix(m, "\n\n")) {
			t.Errorf("%s: orientation wrong in %q", tg, m)
		}
	}
	if len(rids) != 1 || rids[""] {
		t.Errorf("targets produced rids %v, want one", rids)
	}
}

func TestDigestInputsAllMatter(t *testing.T) {
	base := Digest("bench", 3, 7, "trace_xyz")
	for name, d := range map[string]string{
		"benchmark_id":     Digest("bench2", 3, 7, "trace_xyz"),
		"recycle_pass":     Digest("bench", 4, 7, "trace_xyz"),
		"trajectory_index": Digest("bench", 3, 8, "trace_xyz"),
		"trace_id":         Digest("bench", 3, 7, "trace_xyz2"),
	} {
		if d == base {
			t.Errorf("changing %s kept digest %s", name, d)
		}
	}
	if Digest("bench", 3, 7, "trace_xyz") != base {
		t.Error("digest not deterministic")
	}
}

// test_cache_bust_collision_free: 10 traces × 10 lanes × 100 passes.
func TestMarkersCollisionFree(t *testing.T) {
	seen := make(map[string]bool, 10000)
	for tr := range 10 {
		for lane := range 10 {
			for pass := range 100 {
				seen[Marker(FirstTurnPrefix, "bench", pass, lane, "trace-"+strconv.Itoa(tr))] = true
			}
		}
	}
	if len(seen) != 10000 {
		t.Fatalf("%d distinct markers, want 10000", len(seen))
	}
	rids := map[string]bool{}
	for tr := range 100 {
		rids[Digest("bench", 0, 0, "trace-"+strconv.Itoa(tr))] = true
	}
	if len(rids) != 100 {
		t.Fatalf("%d distinct rids at pass 0 lane 0, want 100", len(rids))
	}
}

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]Target{
		"none": None, "NONE": None, "System_Prefix": SystemPrefix, " system_suffix ": SystemSuffix,
		"FIRST_TURN_PREFIX": FirstTurnPrefix, "first_turn_suffix": FirstTurnSuffix,
	} {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "system", "first-turn-prefix", "warmup_isolation_system"} {
		_, err := ParseTarget(in)
		want := `invalid cache-bust target "` + in + `": valid values are none, system_prefix, system_suffix, first_turn_prefix, first_turn_suffix`
		if err == nil || err.Error() != want {
			t.Errorf("ParseTarget(%q) err = %v", in, err)
		}
	}
	var tg Target
	if err := tg.UnmarshalText([]byte("First_Turn_Suffix")); err != nil || tg != FirstTurnSuffix {
		t.Errorf("UnmarshalText = %q, %v", tg, err)
	}
}

type countFunc func(string) int

func (f countFunc) Count(s string) int { return f(s) }

func TestEstimateCost(t *testing.T) {
	// ceil(len/4): a 20-char marker costs 5, for every target.
	calls := 0
	ceil4 := countFunc(func(s string) int { calls++; return (len(s) + 3) / 4 })
	for _, tg := range []Target{SystemPrefix, SystemSuffix, FirstTurnPrefix, FirstTurnSuffix} {
		calls = 0
		cost, counts := EstimateCost(tg, ceil4, 0)
		if cost != 5 || calls != 8 || len(counts) != 8 {
			t.Errorf("%s: cost %d calls %d counts %v; want 5, 8 calls", tg, cost, calls, counts)
		}
		for _, c := range counts {
			if c != 5 {
				t.Errorf("%s: per-sample count %d, want 5", tg, c)
			}
		}
	}
	calls = 0
	if cost, _ := EstimateCost(FirstTurnPrefix, ceil4, 4); cost != 5 || calls != 4 {
		t.Errorf("samples=4: cost %d, %d calls", cost, calls)
	}
	calls = 0
	if cost, counts := EstimateCost(None, ceil4, 8); cost != 0 || calls != 0 || counts != nil {
		t.Errorf("none: cost %d, %d calls", cost, calls)
	}
	// Jitter 5,6,5,6,... has mean 5.5, which Python's round takes to 6.
	n := 0
	jitter := countFunc(func(string) int { n++; return 5 + (n+1)%2 })
	cost, counts := EstimateCost(FirstTurnPrefix, jitter, 8)
	if cost != 6 || counts[0] != 5 || counts[1] != 6 {
		t.Errorf("jitter: cost %d counts %v, want 6", cost, counts)
	}
	// Mean 4.5 rounds to even 4, not 5.
	n = 0
	cost, _ = EstimateCost(FirstTurnPrefix, countFunc(func(string) int { n++; return 4 + (n+1)%2 }), 8)
	if cost != 4 {
		t.Errorf("mean 4.5: cost %d, want 4", cost)
	}
	// The estimator sees the exact marker texts, orientation included.
	var seen []string
	EstimateCost(SystemSuffix, countFunc(func(s string) int { seen = append(seen, s); return 1 }), 2)
	if seen[0] != "\n\n[rid:8e15353008f0]" || seen[1] != "\n\n[rid:aa4ebc4be507]" {
		t.Errorf("estimator markers %q", seen)
	}
}

func TestLandingText(t *testing.T) {
	for _, l := range []Landing{{}, {SharedSystemPrompt, true}, {SharedSystemPrompt, false}, {FirstUserTurn, true}, {FirstUserTurn, false}} {
		b, _ := l.MarshalText()
		var back Landing
		if err := back.UnmarshalText(b); err != nil || back != l {
			t.Errorf("%v → %s → %v, %v", l, b, back, err)
		}
	}
	if b, _ := (Landing{FirstUserTurn, true}).MarshalText(); string(b) != "first_user_turn/prefix" {
		t.Errorf("text %s", b)
	}
	var l Landing
	if err := l.UnmarshalText([]byte("system")); err == nil {
		t.Error("accepted invalid landing")
	}
}

// A completions prompt is the first user turn whatever the target asks:
// prefix targets at its start, suffix targets at its end.
func TestRouteEndpointCompletions(t *testing.T) {
	for _, tg := range Targets() {
		for _, sys := range []bool{false, true} {
			got := RouteEndpoint(endpoint.Completions, tg, sys)
			want := Landing{Slot: FirstUserTurn, Prefix: tg.IsPrefix()}
			if tg == None {
				want = Landing{}
			}
			if got != want {
				t.Errorf("completions %s (system %v): %s, want %s", tg, sys, got, want)
			}
			for _, k := range []endpoint.Kind{endpoint.Chat, endpoint.Responses} {
				if got, want := RouteEndpoint(k, tg, sys), Route(tg, sys); got != want {
					t.Errorf("%s %s (system %v): %s, want the table's %s", k, tg, sys, got, want)
				}
			}
		}
	}
}
