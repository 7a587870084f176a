// Package cachebust holds the cache-bust marker logic that compose and send
// must agree on: the target names, the marker text and its digest, where the
// marker lands (Route, RouteMessages) and how it is injected (Inject). It
// follows NVIDIA AIPerf's behaviour (see docs/reference/
// aiperf-behaviour.md §1–2): a marker "[rid:<12 hex>]" whose digest is the
// SHA-256 of "benchmark_id:recycle_pass:trajectory_index:trace_id".
//
// compose predicts where send will put the marker to shrink the right
// budget; if the two disagreed, wire ISL would drift by the marker's token
// count. So both call the same routing table here, and the tests check that
// the injector lands the marker where Route says.
package cachebust

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Target says which message carries the marker and at which end.
type Target string

// The AIPerf --cache-bust values. (AIPerf's later warmup_isolation_* targets
// are a warmup-phase feature islkit does not model.)
const (
	None            Target = "none"
	SystemPrefix    Target = "system_prefix"
	SystemSuffix    Target = "system_suffix"
	FirstTurnPrefix Target = "first_turn_prefix"
	FirstTurnSuffix Target = "first_turn_suffix"
)

// Targets lists every valid target, in AIPerf's documented order.
func Targets() []Target {
	return []Target{None, SystemPrefix, SystemSuffix, FirstTurnPrefix, FirstTurnSuffix}
}

// ParseTarget parses a target case-insensitively (AIPerf's enum is
// case-insensitive), ignoring surrounding spaces. "" is not accepted: an
// unset target should be None explicitly, not by accident.
func ParseTarget(s string) (Target, error) {
	t := Target(strings.ToLower(strings.TrimSpace(s)))
	if t.Valid() {
		return t, nil
	}
	names := make([]string, 0, 5)
	for _, v := range Targets() {
		names = append(names, string(v))
	}
	return "", fmt.Errorf("invalid cache-bust target %q: valid values are %s", s, strings.Join(names, ", "))
}

// Valid reports whether t is one of Targets (exact, lower-case spelling).
func (t Target) Valid() bool {
	switch t {
	case None, SystemPrefix, SystemSuffix, FirstTurnPrefix, FirstTurnSuffix:
		return true
	}
	return false
}

// IsPrefix reports whether the marker goes at the start of its message.
func (t Target) IsPrefix() bool { return t == SystemPrefix || t == FirstTurnPrefix }

// IsSystem reports whether t asks for the system message (which may still
// fall back to the first user turn; see Route).
func (t Target) IsSystem() bool { return t == SystemPrefix || t == SystemSuffix }

func (t Target) String() string { return string(t) }

// MarshalText makes Target a plain JSON string.
func (t Target) MarshalText() ([]byte, error) { return []byte(t), nil }

// UnmarshalText parses like ParseTarget, so JSONL inputs and flags accept
// the same spellings.
func (t *Target) UnmarshalText(b []byte) error {
	v, err := ParseTarget(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// DigestLen is the number of hex characters kept from the SHA-256 digest
// (48 bits: AIPerf's choice, ample for uniqueness within a run).
const DigestLen = 12

// MarkerPattern matches the core marker token (without whitespace).
const MarkerPattern = `\[rid:[0-9a-f]{12}\]`

// Digest is the first 12 lowercase hex characters of SHA-256 over
// "benchmarkID:recyclePass:trajectoryIndex:traceID". The target is not an
// input: every target of one session shares one rid.
func Digest(benchmarkID string, recyclePass, trajectoryIndex int, traceID string) string {
	in := benchmarkID + ":" + strconv.Itoa(recyclePass) + ":" + strconv.Itoa(trajectoryIndex) + ":" + traceID
	sum := sha256.Sum256([]byte(in))
	return hex.EncodeToString(sum[:DigestLen/2])
}

// Separator joins the marker to the message text.
const Separator = "\n\n"

// Marker returns the text injected for target t: "[rid:<digest>]\n\n" for
// prefix targets, "\n\n[rid:<digest>]" for suffix targets and "" for None.
func Marker(t Target, benchmarkID string, recyclePass, trajectoryIndex int, traceID string) string {
	if t == None || !t.Valid() {
		return ""
	}
	return FormatMarker(t, Digest(benchmarkID, recyclePass, trajectoryIndex, traceID))
}

// FormatMarker wraps an existing digest for target t (see Marker).
func FormatMarker(t Target, digest string) string {
	core := "[rid:" + digest + "]"
	switch {
	case t == None || !t.Valid():
		return ""
	case t.IsPrefix():
		return core + Separator
	default:
		return Separator + core
	}
}

// Counter counts the tokens of a text without special tokens (AIPerf's
// encode with add_special_tokens=False).
type Counter interface {
	Count(text string) int
}

// DefaultEstimatorSamples is AIPerf's marker-cost sample count.
const DefaultEstimatorSamples = 8

// EstimateCost estimates the tokens one marker adds, as AIPerf does: it
// counts the markers for ("estimator", i, i, "estimator-i"), i = 0..n-1,
// in t's orientation (so the "\n\n" is included), and returns the mean
// rounded half-to-even (Python's round; mean 5.5 gives 6), plus each
// sample's count. Deterministic inputs keep compensation identical across
// reruns. For None it returns 0 without calling c. samples <= 0 means
// DefaultEstimatorSamples.
func EstimateCost(t Target, c Counter, samples int) (cost int, counts []int) {
	if t == None || !t.Valid() {
		return 0, nil
	}
	if samples <= 0 {
		samples = DefaultEstimatorSamples
	}
	counts = make([]int, samples)
	total := 0
	for i := range samples {
		counts[i] = c.Count(Marker(t, "estimator", i, i, "estimator-"+strconv.Itoa(i)))
		total += counts[i]
	}
	return int(math.RoundToEven(float64(total) / float64(samples))), counts
}
