package vision

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t *testing.T, name string) Processor {
	t.Helper()
	p, err := Load(filepath.Join("testdata", "configs", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeConfig(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestUnknownRefused: a model type without a rule is refused by name, a
// text-only model says so, nothing is guessed.
func TestUnknownRefused(t *testing.T) {
	cases := []struct {
		files map[string]string
		want  string
		text  bool
	}{
		{map[string]string{"config.json": `{"model_type": "paligemma", "vision_config": {"model_type": "siglip_vision_model"}}`}, `model type "paligemma": no image rule for it (families: qwen2_vl, qwen3_vl, gemma3`, false},
		{map[string]string{"config.json": `{"model_type": "qwen3"}`}, `model type "qwen3" has no vision_config`, true},
		{map[string]string{"tekken.json": `{"config": {}, "vocab": []}`}, "no image settings", true},
		{map[string]string{"config.json": `{"model_type": "internvl_chat", "vision_config": {}}`}, "internvl_chat", false},
		{map[string]string{}, "no config.json or tekken.json", false},
		{map[string]string{"config.json": `{"model_type": "llava_onevision", "vision_config": {}}`}, "no image_grid_pinpoints", false},
	}
	for _, c := range cases {
		_, err := Load(writeConfig(t, c.files))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want %q", c.files, err, c.want)
		}
		if err != nil && errors.Is(err, ErrTextOnly) != c.text {
			t.Errorf("%v: errors.Is(ErrTextOnly) = %v", c.files, !c.text)
		}
	}
}

// TestLoadFormats: a Mistral model folder is read as transformers' files
// by default and as tekken.json's with FormatMistral; the two round
// differently (transformers floors the scaled sides, mistral-common rounds
// half to even: 2048×1025 on Pixtral 12B is 1024×512.5).
func TestLoadFormats(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{"testdata/configs/pixtral", "testdata/configs/pixtral_12b_tekken"} {
		entries, _ := os.ReadDir(src)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(src, e.Name()))
			os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
	}
	hf, err := Load(dir)
	if err != nil || hf.Family() != PixtralHF {
		t.Fatalf("%v %v", hf, err)
	}
	mi, err := LoadFormat(dir, FormatMistral)
	if err != nil || mi.Family() != MistralTekken {
		t.Fatalf("%v %v", mi, err)
	}
	// 1024 wide is 64 tokens a row; 512 high (floored) is 32 rows, and
	// 512.5 rounded half to even is 512 as well: both 32×(64+1).
	for _, p := range []Processor{hf, mi} {
		e, err := p.Expand(2048, 1025, Overrides{})
		if err != nil || e.Special != 32*65 {
			t.Errorf("%s: %d tokens, %v; want %d", p.Family(), e.Special, err, 32*65)
		}
	}
}

// TestPixtralClasses: vLLM picks the model class from config.json's
// architectures: LlavaForConditionalGeneration with a pixtral vision tower
// is family pixtral (vLLM's llava.py), Mistral3ForConditionalGeneration is
// mistral3 (mistral3.py); without architectures the model_type decides.
func TestPixtralClasses(t *testing.T) {
	for _, c := range []struct {
		config string
		want   Family
	}{
		{`{"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava", "vision_config": {"model_type": "pixtral"}}`, PixtralHF},
		{`{"architectures": ["Mistral3ForConditionalGeneration"], "model_type": "mistral3", "vision_config": {"model_type": "pixtral"}}`, Mistral3},
		{`{"model_type": "mistral3", "vision_config": {"model_type": "pixtral"}}`, Mistral3},
		{`{"model_type": "llava", "vision_config": {"model_type": "pixtral"}}`, PixtralHF},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(c.config), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load(dir)
		if err != nil || p.Family() != c.want {
			t.Errorf("%s: %v %v, want %s", c.config, p, err, c.want)
		}
	}
}

// TestOverrides: mm_processor_kwargs a family takes change its count, others
// are refused by name, and detail changes nothing.
func TestOverrides(t *testing.T) {
	q := load(t, "qwen2_5_vl")
	base, _ := q.Expand(1280, 720, Overrides{})
	// 1280×720 on Qwen2.5-VL: smart_resize gives 1288×728 (46×26 merged
	// patches of 28) = 1196 tokens.
	if base.Special != 1196 {
		t.Errorf("1280×720: %d tokens, want 1196", base.Special)
	}
	small, err := q.Expand(1280, 720, Overrides{Kwargs: map[string]any{"max_pixels": float64(256 * 28 * 28)}})
	if err != nil || small.Special >= base.Special || small.Special > 256 {
		t.Errorf("max_pixels 256×28×28: %d tokens, %v", small.Special, err)
	}
	high, _ := q.Expand(1280, 720, Overrides{Detail: "high"})
	if high.Special != base.Special {
		t.Errorf("detail high: %d tokens, want %d", high.Special, base.Special)
	}
	for _, c := range []struct {
		o    Overrides
		want string
	}{
		{Overrides{Kwargs: map[string]any{"do_pan_and_scan": true}}, "mm_processor_kwargs do_pan_and_scan: not a setting"},
		{Overrides{Kwargs: map[string]any{"max_pixels": "big"}}, "max_pixels: big is not a whole number"},
		{Overrides{Kwargs: map[string]any{"size": map[string]any{"longest_edge": float64(100)}}}, "positive shortest_edge and longest_edge"},
		{Overrides{Detail: "ultra"}, `detail "ultra"`},
	} {
		if _, err := q.Expand(100, 100, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.o, err, c.want)
		}
	}
	g := load(t, "gemma3")
	plain, _ := g.Expand(1800, 600, Overrides{})
	pan, err := g.Expand(1800, 600, Overrides{Kwargs: map[string]any{"do_pan_and_scan": true}})
	if err != nil || plain.Tiles != 1 || pan.Tiles != 4 || !pan.Literal || plain.Tokens() != -1 {
		t.Errorf("gemma3 1800×600: plain %d tiles, pan-and-scan %d tiles (%v)", plain.Tiles, pan.Tiles, err)
	}
}

// TestLimits: the refusals the integration calls before counting.
func TestLimits(t *testing.T) {
	if err := CheckCount(3, 2); err == nil || !strings.Contains(err.Error(), "3 images in one prompt, above the server's limit of 2") {
		t.Errorf("CheckCount(3, 2) = %v", err)
	}
	if CheckCount(2, 2) != nil || CheckCount(100, -1) != nil {
		t.Error("CheckCount refused a count within the limit")
	}
	q := load(t, "qwen3_vl")
	// The reference refuses 201×1 and takes 200×1 (smart_resize's > 200).
	if err := CheckAspect(q, 201, 1); err == nil || !strings.Contains(err.Error(), "aspect ratio 201.0 above 200.0") {
		t.Errorf("CheckAspect(201×1) = %v", err)
	}
	if err := CheckAspect(q, 200, 1); err != nil {
		t.Errorf("CheckAspect(200×1) = %v", err)
	}
	if _, err := q.Expand(1, 201, Overrides{}); err == nil || !strings.Contains(err.Error(), "above 200") {
		t.Errorf("Expand(1×201) = %v", err)
	}
	if MaxAspect(load(t, "gemma3")) != 0 || CheckAspect(load(t, "gemma3"), 10000, 1) != nil {
		t.Error("gemma3 has no aspect limit")
	}
}

// TestLlama4Canvas: get_best_fit's own documented example: a 200×300
// (height×width) image among [[224,672],[672,224],[224,448],[448,224],
// [224,224]] upscales by 1.12 to 224×448, the smaller of two canvases.
func TestLlama4Canvas(t *testing.T) {
	h, w := llama4BestFit(200, 300, [][2]int{{224, 672}, {672, 224}, {224, 448}, {448, 224}, {224, 224}}, false)
	if h != 224 || w != 448 {
		t.Errorf("got %d×%d, want 224×448", h, w)
	}
}
