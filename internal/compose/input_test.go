package compose

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
)

const goodSHA = "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"

func goodProbeJSON() string {
	return `{"kind":"islkit.probe","schema_version":1,"tool_version":"dev","tokenizer":{"source":"x","sha256":"` + goodSHA +
		`","num_special_tokens_to_add":0},"chat_template":{"applied":true},"cache_bust":"first_turn_prefix","marker_tokens":10,"marker_samples":[10],"template_overhead":{"per_request_fixed":4,"per_msg_wrap":5}}`
}

func TestReadProbe(t *testing.T) {
	p, err := ReadProbe(strings.NewReader(goodProbeJSON()+"\n"), "p.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if p.CacheBust != cachebust.FirstTurnPrefix || p.MarkerTokens != 10 || p.Overhead.Fixed != 4 || p.Overhead.Wrap != 5 {
		t.Errorf("decoded %+v", p)
	}
	edit := func(from, to string) string { return strings.Replace(goodProbeJSON(), from, to, 1) }
	for _, tc := range []struct{ in, want string }{
		{"", "no probe record"},
		{"{not json", "p.jsonl:1"},
		{`{"kind":"islkit.conversation","schema_version":1}`, `field "kind"`},
		{edit(`"schema_version":1`, `"schema_version":2`), "unknown schema version 2"},
		{edit(`"tool_version"`, `"surprise":1,"tool_version"`), "surprise"},
		{edit(goodSHA, "abc"), "tokenizer.sha256"},
		{edit(`"first_turn_prefix"`, `"sideways"`), `field "cache_bust": invalid cache-bust target "sideways"`},
		{edit(`"marker_tokens":10`, `"marker_tokens":-1`), "negative"},
		{edit(`"per_msg_wrap":5`, `"per_msg_wrap":-5`), "negative overhead"},
		{edit(`"applied":true`, `"applied":false`), "not applied"},
		{edit(`"marker_tokens":10`, `"marker_tokens":"ten"`), "marker_tokens"},
		{goodProbeJSON() + "\n" + goodProbeJSON(), "more than one record"},
	} {
		_, err := ReadProbe(strings.NewReader(tc.in), "p.jsonl")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("input %.60q: err %v, want …%s…", tc.in, err, tc.want)
		}
	}
}

// Whatever the bytes, ReadProbe returns an error or a record that passes
// survives a JSON round trip.
func FuzzReadProbe(f *testing.F) {
	f.Add(goodProbeJSON())
	f.Add(`{"kind":"islkit.probe","schema_version":1}`)
	f.Add(goodProbeJSON() + "\n\n")
	f.Add(strings.Replace(goodProbeJSON(), `"applied":true`, `"applied":false`, 1))
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ReadProbe(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadProbe(strings.NewReader(string(b)), "again"); err != nil {
			t.Fatalf("round trip refused: %v", err)
		}
	})
}
