package serverprofile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/tokenizer"
	"github.com/islkit/islkit/internal/vision"
)

// mistralImagesExpect is one line of testdata/mistral-images-expect.jsonl.gz,
// written by scripts/renderers/mistral-images-ref.py: the token ids vLLM's
// MistralTokenizer (vLLM 0.32.0, mistral-common 1.13.1) encodes for a chat
// body with images over mistral-common's tekken_240911.json read as a
// tokenizer version, with its own image settings (Image nil) or the ones
// given, or the error it raises.
type mistralImagesExpect struct {
	Tekken  string          `json:"tekken"`
	Version string          `json:"version"`
	Image   json.RawMessage `json:"image"`
	Name    string          `json:"name"`
	Body    json.RawMessage `json:"body"`
	Count   int             `json:"count"`
	IDs     []int           `json:"ids"`
	Error   string          `json:"error"`
}

func readMistralImagesExpect(t testing.TB) []mistralImagesExpect {
	return readExpect[mistralImagesExpect](t, "mistral-images-expect.jsonl.gz")
}

// mistralImageFolder is a Mistral-format model folder: the Tekken file
// as version, its image settings replaced by image where given (the
// shipped file's are the last member).
func mistralImageFolder(t testing.TB, tekken, version string, image json.RawMessage) string {
	t.Helper()
	data := string(testutil.TekkenFile(t, tekken, version))
	if len(image) > 0 && string(image) != "null" {
		i := strings.LastIndex(data, `"image": {`)
		if i < 0 {
			t.Fatalf("%s: no image settings to replace", tekken)
		}
		data = data[:i] + `"image": ` + string(image) + "\n}\n"
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tekken.json"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMistralImagesMatchVLLM: for chat bodies with 1 to 4 PNG and JPEG
// images per turn (sizes from 1×1 to 3000×200, text before, between and
// after them, multi-turn, system prompts, consecutive user messages),
// under Pixtral-12B-2409's image settings (tokenizer v3) and Mistral Small
// 3.1's (v7), the count and token ids equal those of vLLM's own
// MistralTokenizer, and images in system and assistant messages are
// refused as mistral-common refuses them.
func TestMistralImagesMatchVLLM(t *testing.T) {
	cases := readMistralImagesExpect(t)
	byConfig := map[string][]mistralImagesExpect{}
	var order []string
	for _, c := range cases {
		k := c.Tekken + "-" + c.Version
		if byConfig[k] == nil {
			order = append(order, k)
		}
		byConfig[k] = append(byConfig[k], c)
	}
	if len(byConfig) != 2 {
		t.Fatalf("%d configurations, want 2", len(byConfig))
	}
	for _, k := range order {
		cs := byConfig[k]
		t.Run(k, func(t *testing.T) {
			dir := mistralImageFolder(t, cs[0].Tekken, cs[0].Version, cs[0].Image)
			data, err := os.ReadFile(filepath.Join(dir, "tekken.json"))
			if err != nil {
				t.Fatal(err)
			}
			tok, err := tokenizer.FromTekken(data)
			if err != nil {
				t.Fatal(err)
			}
			mf, err := MistralFormatOf(data)
			if err != nil {
				t.Fatal(err)
			}
			vis := LoadVision(dir, -1)
			if vis == nil || vis.Supported() != nil || vis.Processor.Family() != vision.MistralTekken {
				t.Fatalf("LoadVision(%s): %+v", dir, vis)
			}
			tmpl := &chat.Template{Mistral: mf}
			ok, images := 0, 0
			for _, c := range cs {
				ex, err := extract.Body(c.Body)
				if err != nil {
					t.Fatalf("%s: %v", c.Name, err)
				}
				pr, err := RenderVision(VLLM, ex, tmpl, vis, time.Time{}, nil)
				if c.Error != "" {
					if err == nil || !IsRefusal(err) {
						t.Errorf("%s: vLLM refuses it (%s); got %v", c.Name, c.Error, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				ok++
				images += len(pr.Images)
				if n := pr.Count(tok); n != c.Count {
					t.Errorf("%s: count %d, vLLM %d", c.Name, n, c.Count)
				}
				ids := pr.IDs(tok)
				if !slices.Equal(ids, c.IDs) {
					t.Errorf("%s: ids differ\n go:  %v\n ref: %v", c.Name, ids, c.IDs)
				}
				// Every image's share is its [IMG], [IMG_BREAK] and
				// [IMG_END] tokens: together, all of those in the ids.
				sum, special := 0, 0
				for _, n := range pr.ImageTokens(tok) {
					sum += n
				}
				for _, id := range c.IDs {
					if id == mf.Special["[IMG]"] || id == mf.Special["[IMG_BREAK]"] || id == mf.Special["[IMG_END]"] {
						special++
					}
				}
				if sum != special {
					t.Errorf("%s: image tokens %d, the reference's ids hold %d", c.Name, sum, special)
				}
			}
			if ok < 40 || images < 100 {
				t.Errorf("%d bodies with %d images counted, want at least 40 and 100", ok, images)
			}
		})
	}
}

// TestMistralImagesRefused: the limits and models vLLM refuses images
// for, each by its reason.
func TestMistralImagesRefused(t *testing.T) {
	cases := readMistralImagesExpect(t)
	var body json.RawMessage
	for _, c := range cases {
		if c.Name == "images4-0" && c.Version == "v3" {
			body = c.Body
		}
	}
	if body == nil {
		t.Fatal("no images4-0 body")
	}
	dir := mistralImageFolder(t, "tekken_240911", "v3", nil)
	data, err := os.ReadFile(filepath.Join(dir, "tekken.json"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := MistralFormatOf(data)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &chat.Template{Mistral: mf}
	ex, err := extract.Body(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		vis  *Vision
		want string
	}{
		{"text-only model", nil, "text-only"},
		{"above the limit", LoadVision(dir, 3), "above the server's limit of 3"},
		{"transformers' processor", &Vision{Processor: hfPixtral(t), Limit: -1, Dir: "hf"}, "transformers' format"},
	} {
		_, err := RenderVision(VLLM, ex, tmpl, tc.vis, time.Time{}, nil)
		if err == nil || !IsRefusal(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a refusal naming %q", tc.name, err, tc.want)
		}
	}
	// Under a chat template (not the Mistral renderer), a Mistral-format
	// processor has no placeholder to expand: refused, not miscounted.
	var refs imageRefs
	refs.vis = LoadVision(dir, -1)
	part, _ := harmonyObject(json.RawMessage(`{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}`))
	if err := refs.add(part, 0, 0); err == nil || !strings.Contains(err.Error(), "Mistral renderer") {
		t.Errorf("a tekken processor under a chat template: %v", err)
	}
}

func hfPixtral(t *testing.T) vision.Processor {
	t.Helper()
	p, err := vision.Load(filepath.Join(testutil.RepoRoot(t), "internal", "vision", "testdata", "configs", "pixtral"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMistralImagesBesideHF: a Mistral repo ships transformers' processor
// files beside tekken.json; vision.Load reads transformers' (Pixtral's
// floor rule), but vLLM in tokenizer mode mistral sizes images by
// tekken.json's settings (mistral-common's rounding). The Mistral
// renderer counts by tekken.json's: the v3 expectations hold over such a
// folder.
func TestMistralImagesBesideHF(t *testing.T) {
	dir := mistralImageFolder(t, "tekken_240911", "v3", nil)
	hf := filepath.Join(testutil.RepoRoot(t), "internal", "vision", "testdata", "configs", "pixtral")
	for _, name := range []string{"config.json", "preprocessor_config.json", "processor_config.json"} {
		b, err := os.ReadFile(filepath.Join(hf, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "tekken.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.FromTekken(data)
	if err != nil {
		t.Fatal(err)
	}
	mf, err := MistralFormatOf(data)
	if err != nil {
		t.Fatal(err)
	}
	vis := LoadVision(dir, -1)
	if vis == nil || vis.Processor.Family() != vision.PixtralHF {
		t.Fatalf("LoadVision: %+v, want transformers' Pixtral processor", vis)
	}
	tmpl := &chat.Template{Mistral: mf}
	n := 0
	for _, c := range readMistralImagesExpect(t) {
		if c.Version != "v3" || c.Error != "" {
			continue
		}
		ex, err := extract.Body(c.Body)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := RenderVision(VLLM, ex, tmpl, vis, time.Time{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if got := pr.Count(tok); got != c.Count {
			t.Errorf("%s: count %d, vLLM %d", c.Name, got, c.Count)
		}
		n++
	}
	if n < 40 {
		t.Errorf("%d bodies, want at least 40", n)
	}
}
