package compose

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
)

var pixtralHFBodies = flag.String("pixtral-hf-bodies", "", "write TestPixtralHFGrid's request bodies into this folder (CONFIG.jsonl; CONFIG-limit2.jsonl, CONFIG-string.jsonl for the cases with a limit or the string-content template) for scripts/vision/check-pixtral-hf-reference.sh, and check nothing")

// pixtralHFModels are the families of TestPixtralHFGrid with their own
// folders (internal/vision/testdata/hfmistral).
var pixtralHFModels = []struct{ config, model string }{
	{"pixtral", "pixtral-12b"},
	{"mistral3", "mistral-small-3.1"},
}

// pixtralHFCase is one request body of TestPixtralHFGrid.
type pixtralHFCase struct {
	name, endpoint string
	body           []byte
	images         int
	limit          int // --limit-mm-per-prompt image=limit; 0: none
	// stringTemplate: the folder's template is hfmistral/string-template.jinja
	// (string content: vLLM's placeholder of the model class in front of
	// the text) instead of the model's own.
	stringTemplate bool
}

// file is the name of the bodies file of c's folder and server.
func (c *pixtralHFCase) file(config string) string {
	switch {
	case c.limit > 0:
		return fmt.Sprintf("%s-limit%d.jsonl", config, c.limit)
	case c.stringTemplate:
		return config + "-string.jsonl"
	}
	return config + ".jsonl"
}

// pixtralHFCases are the bodies TestPixtralHFGrid measures: one image of
// each size of a grid (tiny, patch multiples and one pixel off, the
// longest edge and past it, extreme aspect ratios both ways, huge), and
// the message shapes the templates treat apart (an image after or before
// its text, images alone, four interleaved, a system prompt or none, a
// system prompt as parts, consecutive user messages merged, multi-turn
// history, Responses with and without instructions, a literal [IMG] in
// the text, more images than --limit-mm-per-prompt).
func pixtralHFCases(t *testing.T) []pixtralHFCase {
	t.Helper()
	urls := map[[2]int]string{}
	url := func(w, h int) string {
		k := [2]int{w, h}
		if u, ok := urls[k]; ok {
			return u
		}
		var b bytes.Buffer
		if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		urls[k] = "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
		return urls[k]
	}
	img := func(w, h int) map[string]any {
		return map[string]any{"type": "image_url", "image_url": map[string]any{"url": url(w, h)}}
	}
	input := func(w, h int) map[string]any {
		return map[string]any{"type": "input_image", "image_url": url(w, h)}
	}
	text := func(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
	user := func(parts ...any) map[string]any { return map[string]any{"role": "user", "content": parts} }
	msg := func(role string, content any) map[string]any { return map[string]any{"role": role, "content": content} }
	var cases []pixtralHFCase
	add := func(name, endpoint string, body map[string]any, images, limit int) {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, pixtralHFCase{name: name, endpoint: endpoint, body: b, images: images, limit: limit, stringTemplate: strings.HasPrefix(name, "string/")})
	}
	chat := func(name string, images int, msgs ...any) {
		add(name, "chat", map[string]any{"messages": msgs}, images, 0)
	}
	for _, s := range [][2]int{
		{1, 1}, {15, 17}, {16, 16}, {17, 17}, {27, 29}, {28, 28}, {29, 57}, {100, 60},
		{333, 777}, {1023, 1025}, {1024, 1024}, {1025, 1024}, {1539, 1541}, {1540, 1540}, {1541, 1},
		{1, 1541}, {2, 3000}, {3000, 2}, {40, 5000}, {5000, 40}, {4000, 3000}, {3001, 4999},
	} {
		chat(fmt.Sprintf("size/%dx%d", s[0], s[1]), 1, user(text("What is in this image?"), img(s[0], s[1])))
	}
	chat("shape/image-first", 1, user(img(300, 200), text("Describe it.")))
	chat("shape/image-only", 1, user(img(300, 200)))
	chat("shape/four-interleaved", 4, user(text("Compare"), img(64, 64), img(512, 128), text("and"), img(128, 512), img(700, 500), text("please.")))
	chat("shape/system", 2, msg("system", "You are terse."), user(img(640, 480), text("One word."), img(48, 48)))
	chat("shape/system-parts", 1, msg("system", []any{text("You are terse."), text("Answer in French.")}), user(text("Where?"), img(200, 300)))
	chat("shape/consecutive-users", 3, user(text("First"), img(120, 90)), user(img(90, 120), text("second"), img(33, 33)))
	chat("shape/multi-turn", 4,
		user(text("Look."), img(448, 336)), msg("assistant", "A grey square."),
		user(img(336, 448), img(500, 20), text("And these?")), msg("assistant", "Two more."),
		user(text("Last one"), img(1000, 700)))
	chat("shape/multi-turn-system", 3, msg("system", "Be brief."),
		user(img(448, 336)), msg("assistant", "Grey."), user(text("Now"), img(20, 500), img(777, 333)))
	chat("shape/literal-img-token", 1, user(text("What does [IMG] mean?"), img(64, 64)))
	chat("shape/text-only", 0, msg("user", "Hello there, no image."))
	add("responses/instructions", "responses", map[string]any{"instructions": "You are terse.", "input": []any{
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Describe"}, input(640, 360)}},
	}}, 1, 0)
	add("responses/multi", "responses", map[string]any{"input": []any{
		map[string]any{"role": "user", "content": []any{input(200, 200), map[string]any{"type": "input_text", "text": "and"}, input(1200, 90)}},
		map[string]any{"type": "message", "role": "assistant", "content": "Two images."},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "Again"}, input(90, 1200)}},
	}}, 3, 0)
	add("limit/three-of-two", "chat", map[string]any{"messages": []any{user(img(64, 64), img(64, 64), img(64, 64), text("Three."))}}, 3, 2)
	add("limit/two-of-two", "chat", map[string]any{"messages": []any{user(img(64, 64), text("Two."), img(64, 64))}}, 2, 2)
	// Under a string-content template vLLM puts its model class's
	// placeholder in front of the text ("<image>" for Pixtral's llava.py,
	// none for mistral3.py): no [IMG] unless the text says it.
	chat("string/image", 1, user(text("Describe."), img(64, 48)))
	chat("string/literal-img", 1, user(text("Look at [IMG] here."), img(64, 48)))
	chat("string/two-literal-one-image", 1, user(text("[IMG] and [IMG]"), img(64, 48)))
	chat("string/text-only", 0, user(text("No image.")), msg("assistant", "Fine."), msg("user", "Still none."))
	return cases
}

// TestPixtralHFGrid: measure --server vllm on Pixtral-12B and Mistral
// Small 3.1 in transformers' format (their own folders: the tokenizer
// transformers converts from tekken_240911, the chat templates
// mistral-common generates, the processor configurations) equals vLLM
// 0.32's own count of every body of pixtralHFCases
// (testdata/pixtral-hf-reference.jsonl.gz from
// scripts/vision/pixtral_hf_ref.py: vLLM's HfRenderer and its multimodal
// processor), and every body vLLM refuses fails its line with the reason.
func TestPixtralHFGrid(t *testing.T) {
	type row struct {
		Case       string `json:"case"`
		BodySHA256 string `json:"body_sha256"`
		Images     int    `json:"images"`
		RefTokens  *int   `json:"ref_tokens"`
		Error      string `json:"error"`
	}
	want := map[string]row{}
	if *pixtralHFBodies == "" {
		for _, r := range testutil.ReadJSONL[row](t, filepath.Join("testdata", "pixtral-hf-reference.jsonl.gz")) {
			want[r.Case] = r
		}
	}
	cases := pixtralHFCases(t)
	checked, refused := 0, 0
	for _, m := range pixtralHFModels {
		dir := hfMistralFolder(t, m.model, m.config)
		stringDir := hfMistralFolder(t, m.model, m.config)
		tmpl, err := os.ReadFile(filepath.Join("..", "vision", "testdata", "hfmistral", "string-template.jinja"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(stringDir, "chat_template.jinja"), tmpl, 0o644); err != nil {
			t.Fatal(err)
		}
		model := func(dir string) *Model {
			src, err := modelsrc.Resolve(dir)
			if err != nil {
				t.Fatal(err)
			}
			p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: cachebust.None, Now: pinned})
			if err != nil {
				t.Fatal(err)
			}
			mod, err := modelFor(p, src, "", "")
			if err != nil {
				t.Fatal(err)
			}
			return mod
		}
		own, str := model(dir), model(stringDir)
		outs := map[string]*bufio.Writer{}
		for _, c := range cases {
			name := m.config + "/" + c.name
			sum := sha256.Sum256(c.body)
			if *pixtralHFBodies != "" {
				w := outs[c.file(m.config)]
				if w == nil {
					f, err := os.Create(filepath.Join(*pixtralHFBodies, c.file(m.config)))
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					w = bufio.NewWriter(f)
					defer w.Flush()
					outs[c.file(m.config)] = w
				}
				line, _ := json.Marshal(map[string]any{"case": name, "endpoint": c.endpoint, "body_sha256": hex.EncodeToString(sum[:]), "images": c.images, "body": json.RawMessage(c.body)})
				w.Write(append(line, '\n'))
				continue
			}
			limit := -1
			if c.limit > 0 {
				limit = c.limit
			}
			mod := own
			if c.stringTemplate {
				mod = str
			}
			vis := serverprofile.LoadVision(dir, limit)
			meas := measure.New(measure.Options{Tokenizer: mod.Tokenizer, Template: mod.Template, ApplyChatTemplate: true, Now: mod.Now, Server: serverprofile.VLLM, Model: mod, Vision: vis})
			// A request vLLM refuses fails its line: Record's error is the
			// reason the measure CLI writes.
			var rec struct {
				ISL records.ISL `json:"isl"`
			}
			res, err := meas.Record(append([]byte(`{"model":"m",`), c.body[1:]...))
			if err != nil {
				rec.ISL.Error = err.Error()
			} else if len(res.Lines) != 1 {
				t.Fatalf("%s: measure: %d lines", name, len(res.Lines))
			} else if err := json.Unmarshal(res.Lines[0], &rec); err != nil {
				t.Fatal(err)
			}
			r, ok := want[name]
			switch {
			case !ok:
				t.Errorf("%s: not in the reference", name)
				continue
			case r.BodySHA256 != hex.EncodeToString(sum[:]) || r.Images != c.images:
				t.Errorf("%s: the body differs from the one the reference counted", name)
			case r.RefTokens != nil && (rec.ISL.Templated == nil || *rec.ISL.Templated != *r.RefTokens):
				t.Errorf("%s: measure --server vllm %v (%s), vLLM %d", name, deref(rec.ISL.Templated), rec.ISL.Error, *r.RefTokens)
			case r.RefTokens == nil && (rec.ISL.Templated != nil || !strings.Contains(rec.ISL.Error, "vllm would refuse")):
				t.Errorf("%s: measure --server vllm %v (%q); vLLM refuses it: %s", name, deref(rec.ISL.Templated), rec.ISL.Error, r.Error)
			}
			if r.RefTokens == nil {
				refused++
			}
			checked++
		}
	}
	if *pixtralHFBodies == "" && (checked != len(want) || refused == 0 || refused == checked) {
		t.Errorf("%d bodies checked (%d refused), %d in the reference", checked, refused, len(want))
	}
}
