package compose

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/wire"
)

var mistralImageBodies = flag.String("mistral-image-bodies", "", "write TestImagesMistral's request bodies into this file for scripts/renderers/mistral-compose-images-ref.py, and check nothing")

// mistralComposeConfigs are the image settings composed for, on
// tekken_240911 (mistral-compose-images-ref.py has the same list).
var mistralComposeConfigs = []struct{ name, version, image string }{
	{"pixtral12b-v3", "v3", ""}, // as mistral-common ships the file
	{"mistral-small-3.1-v7", "v7", `{"image_patch_size": 14, "max_image_size": 1540, "spatial_merge_size": 2}`},
}

// TestImagesMistral: compose --images for a Mistral-format model, whose
// images the Mistral renderer counts as mistral-common encodes them:
// tekken_240911 with Pixtral-12B-2409's image settings (tokenizer v3, as
// mistral-common ships it) and with Mistral Small 3.1's (v7). For every
// cache-bust target, 2 conversations of 3 turns with 0–4 PNG images per
// turn of drawn sizes: every request body is the one the reference
// counted (same SHA-256; internal/compose/testdata/mistral-images-reference.jsonl.gz
// from vLLM 0.32.0's own MistralTokenizer, scripts/renderers/mistral-compose-images-ref.py),
// and compose's count, measure's (--server vllm) and the reference's are
// the turn's target.
func TestImagesMistral(t *testing.T) {
	if testing.Short() && *mistralImageBodies == "" {
		t.Skip("composes 60 requests with images")
	}
	type row struct {
		Case       string `json:"case"`
		BodySHA256 string `json:"body_sha256"`
		RefTokens  int    `json:"ref_tokens"`
	}
	want := map[string]row{}
	var out *bufio.Writer
	if *mistralImageBodies != "" {
		f, err := os.Create(*mistralImageBodies)
		if err != nil {
			t.Fatal(err)
		}
		out = bufio.NewWriter(f)
		defer f.Close()
		defer out.Flush()
	} else {
		for _, r := range testutil.ReadJSONL[row](t, filepath.Join("testdata", "mistral-images-reference.jsonl.gz")) {
			want[r.Case] = r
		}
	}
	checked, images := 0, 0
	for _, cfg := range mistralComposeConfigs {
		dir := testutil.TekkenFolder(t, "tekken_240911", cfg.version)
		if cfg.image != "" {
			path := filepath.Join(dir, "tekken.json")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			i := strings.LastIndex(s, `"image": {`)
			if i < 0 {
				t.Fatal("tekken_240911: no image settings to replace")
			}
			if err := os.WriteFile(path, []byte(s[:i]+`"image": `+cfg.image+"\n}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		src, err := modelsrc.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		vis := serverprofile.LoadVision(dir, -1)
		if vis == nil || vis.Supported() != nil {
			t.Fatalf("%s: no image processing (%v)", cfg.name, vis)
		}
		for _, target := range cachebust.Targets() {
			p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: target, Now: pinned})
			if err != nil {
				t.Fatal(err)
			}
			m, err := modelFor(p, src, "", "")
			if err != nil {
				t.Fatal(err)
			}
			m.Vision = vis
			meas := measure.New(measure.Options{Tokenizer: m.Tokenizer, Template: m.Template, ApplyChatTemplate: true, Now: m.Now, Server: serverprofile.VLLM, Model: m, Vision: vis})
			o := opts(1500)
			o.Conversations, o.Turns, o.Exact, o.Seed = 2, 3, true, 7
			if target.IsSystem() {
				o.SharedSystemPromptLength = 40
			}
			// Pixtral-12B's 16-pixel patches, unmerged: a 224×160 image
			// is 14×10 [IMG] and 10 row ends.
			o.Images = ImageOptions{PerTurn: 2, Stddev: 1.5, Width: 224, Height: 160, WidthStddev: 60, HeightStddev: 40, Format: "png"}
			c, err := New(p, m, "", o)
			if err != nil {
				t.Fatalf("%s %s: %v", cfg.name, target, err)
			}
			for i := range o.Conversations {
				conv, err := c.Conversation(i)
				if err != nil {
					t.Fatal(err)
				}
				for k := range conv.Turns {
					turn := &conv.Turns[k]
					req, err := wire.Build(conv, k, wire.Marker(conv, 0), nil)
					if err != nil {
						t.Fatal(err)
					}
					body, err := req.Body()
					if err != nil {
						t.Fatal(err)
					}
					sum := hex.EncodeToString(func() []byte { s := sha256.Sum256(body); return s[:] }())
					name := fmt.Sprintf("%s/%s/conv%d/turn%d", cfg.name, target, i, k)
					images += totalImages(conv, k)
					if turn.Unreachable != nil {
						t.Errorf("%s: unreachable %+v", name, turn.Unreachable)
					}
					if out != nil {
						line, _ := json.Marshal(map[string]any{"case": name, "body_sha256": sum, "target": turn.TargetISL, "body": json.RawMessage(body)})
						out.Write(append(line, '\n'))
						continue
					}
					r, ok := want[name]
					switch {
					case !ok:
						t.Errorf("%s: not in the reference", name)
					case r.BodySHA256 != sum:
						t.Errorf("%s: the body differs from the one the reference counted", name)
					case turn.WireISL == nil || *turn.WireISL != r.RefTokens || r.RefTokens != turn.TargetISL:
						t.Errorf("%s: compose %v, reference %d, target %d", name, deref(turn.WireISL), r.RefTokens, turn.TargetISL)
					}
					if got := measuredImages(t, meas, body); ok && got != r.RefTokens {
						t.Errorf("%s: measure --server vllm %d, reference %d", name, got, r.RefTokens)
					}
					checked++
				}
			}
		}
	}
	if out == nil && (checked != len(want) || images < checked) {
		t.Errorf("%d requests checked with %d images, %d in the reference", checked, images, len(want))
	}
}
