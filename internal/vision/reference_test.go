package vision

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type refCell struct {
	Config      string
	Width       int
	Height      int
	Kwargs      map[string]any
	Placeholder string
	Expansion   [][2]any // [piece, repeat]
	Error       string
	Message     string
}

// refSpecial says whether a reference piece is a special token (every
// family's are <...> or [...] without spaces); the rest is literal text.
func refSpecial(p string) bool {
	return len(p) > 2 && !strings.ContainsAny(p, " \n") &&
		((p[0] == '<' && p[len(p)-1] == '>') || (p[0] == '[' && p[len(p)-1] == ']'))
}

func readReference(t *testing.T) []refCell {
	t.Helper()
	f, err := os.Open("testdata/reference.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cells []refCell
	sc := bufio.NewScanner(z)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c refCell
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cells
}

// TestReference: for every family's configuration and every image size of
// the grid (tiny, exact multiples, odd, extreme aspect ratios, huge), with
// the request overrides the reference tried, the expansion is the text
// transformers' processors (PIL paths) or mistral-common's ImageEncoder put
// in place of the placeholder, and sizes they refuse are refused. (Llama 4's
// canvas functions run over a numpy stand-in for torch: llama4_ref.py.)
// Expectations: testdata/reference.jsonl.gz from scripts/vision/image_ref.py.
func TestReference(t *testing.T) {
	cells := readReference(t)
	procs := map[string]Processor{}
	perConfig := map[string]int{}
	for _, c := range cells {
		p, ok := procs[c.Config]
		if !ok {
			var err error
			if p, err = Load(filepath.Join("testdata", "configs", c.Config)); err != nil {
				t.Fatalf("%s: %v", c.Config, err)
			}
			procs[c.Config] = p
		}
		perConfig[c.Config]++
		name := func() string {
			b, _ := json.Marshal(c.Kwargs)
			return c.Config + " " + itoa(c.Width) + "×" + itoa(c.Height) + " " + string(b)
		}
		e, err := p.Expand(c.Width, c.Height, Overrides{Kwargs: c.Kwargs})
		if c.Error != "" {
			if err == nil {
				t.Errorf("%s: expanded to %d tokens; the reference refuses it (%s: %s)", name(), e.Special, c.Error, c.Message)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name(), err)
			continue
		}
		var want strings.Builder
		special, literal := 0, false
		for _, pc := range c.Expansion {
			text, n := pc[0].(string), int(pc[1].(float64))
			want.WriteString(strings.Repeat(text, n))
			if refSpecial(text) {
				special += n
			} else {
				literal = true
			}
		}
		if got := e.Text(); got != want.String() {
			t.Errorf("%s: expansion\n%s\nwant\n%s", name(), summarize(got), summarize(want.String()))
		}
		if e.Special != special || e.Literal != literal || e.Placeholder != c.Placeholder {
			t.Errorf("%s: special %d literal %v placeholder %q; want %d %v %q", name(), e.Special, e.Literal, e.Placeholder, special, literal, c.Placeholder)
		}
	}
	for _, cfg := range []string{"qwen2_5_vl", "qwen3_vl", "gemma3", "pixtral", "mistral3", "internvl3", "llava_onevision", "idefics3", "smolvlm", "mistral_small_3_1_tekken", "pixtral_12b_tekken", "llama4"} {
		if perConfig[cfg] < 40 {
			t.Errorf("%s: %d reference cells", cfg, perConfig[cfg])
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// summarize shortens long runs for messages.
func summarize(s string) string {
	if len(s) < 300 {
		return s
	}
	return s[:150] + "…" + s[len(s)-150:]
}
