package serverprofile

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/vision"
)

// pngURL is a data URL of a w×h PNG (encoded by image/png, so its header
// is a real one).
func pngURL(t testing.TB, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func loadVision(t testing.TB, config string, limit int) *Vision {
	t.Helper()
	p, err := vision.Load(filepath.Join("..", "vision", "testdata", "configs", config))
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVision(p, limit)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// qwenVLTemplate prints an image item as Qwen2.5-VL's template does
// (content iterated: vLLM's "openai" format).
const qwenVLTemplate = `{% for message in messages %}<|im_start|>{{ message.role }}
{% if message.content is string %}{{ message.content }}{% else %}{% for c in message.content %}{% if c.type == 'image' %}<|vision_start|><|image_pad|><|vision_end|>{% elif c.type == 'text' %}{{ c.text }}{% endif %}{% endfor %}{% endif %}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}`

// TestVisionQwen counts chat and Responses bodies with images on
// Qwen2.5-VL's processor and Qwen3's vocabulary (the Qwen-VL families
// share it): the prompt vLLM renders is written here by hand from §1.2
// (string format: one placeholder per image in front of the message's
// text, joined by "\n"; openai format: the template's image item), and
// each image's tokens are transformers' (internal/vision's reference
// grid: 640×480 → 391, 224×224 → 64, 1280×720 → 1196).
func TestVisionQwen(t *testing.T) {
	src := testmodel.Source(t, "")
	tok, _ := src.Tokenizer()
	qwen3, err := chat.LoadFS(src.FS, "")
	if err != nil {
		t.Fatal(err)
	}
	vlTmpl, err := chat.Compile(qwenVLTemplate)
	if err != nil {
		t.Fatal(err)
	}
	vis := loadVision(t, "qwen2_5_vl", -1)
	const ph = "<|vision_start|><|image_pad|><|vision_end|>"
	a, b, c := pngURL(t, 640, 480), pngURL(t, 224, 224), pngURL(t, 1280, 720)
	cases := []struct {
		name, body string
		tmpl       *chat.Template
		prompt     string // the render, placeholders unexpanded
		images     []int
	}{
		{"chat string format", `{"messages":[{"role":"user","content":[{"type":"text","text":"Describe."},{"type":"image_url","image_url":{"url":"` + a + `"}}]}]}`,
			qwen3, "<|im_start|>user\n" + ph + "\nDescribe.<|im_end|>\n<|im_start|>assistant\n", []int{391}},
		{"two messages, three images", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + a + `","detail":"high"}},{"type":"image_url","image_url":{"url":"` + b + `"}},{"type":"text","text":"A"},{"type":"text","text":"B"}]},{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + c + `"}}]}]}`,
			qwen3, "<|im_start|>user\n" + ph + "\n" + ph + "\nA\nB<|im_end|>\n<|im_start|>assistant\nok<|im_end|>\n<|im_start|>user\n" + ph + "\n<|im_end|>\n<|im_start|>assistant\n", []int{391, 64, 1196}},
		{"placeholder already in the text", `{"messages":[{"role":"user","content":[{"type":"text","text":"x ` + ph + ` y"},{"type":"image_url","image_url":{"url":"` + b + `"}}]}]}`,
			qwen3, "<|im_start|>user\nx " + ph + " y<|im_end|>\n<|im_start|>assistant\n", []int{64}},
		{"escaped, empty and bare-string texts, one placeholder of two given", `{"messages":[{"role":"user","content":["x\n\"q\"",{"type":"text","text":""},{"type":"text","text":"` + ph + `"},{"type":"image_url","image_url":{"url":"` + a + `"}},{"type":"image_url","image_url":{"url":"` + b + `"}}]}]}`,
			qwen3, "<|im_start|>user\n" + ph + "\nx\n\"q\"\n" + ph + "<|im_end|>\n<|im_start|>assistant\n", []int{391, 64}},
		{"openai format", `{"messages":[{"role":"user","content":[{"type":"text","text":"Look: "},{"type":"image_url","image_url":{"url":"` + a + `"}},{"type":"text","text":" and "},{"type":"image_url","image_url":{"url":"` + b + `"}}]}]}`,
			vlTmpl, "<|im_start|>user\nLook: " + ph + " and " + ph + "<|im_end|>\n<|im_start|>assistant\n", []int{391, 64}},
		{"responses input_image", `{"input":[{"role":"user","content":[{"type":"input_text","text":"What?"},{"type":"input_image","image_url":"` + c + `","detail":"auto"}]}]}`,
			qwen3, "<|im_start|>user\n" + ph + "\nWhat?<|im_end|>\n<|im_start|>assistant\n", []int{1196}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := extract.Body([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			pr, err := RenderVision(VLLM, ex, tc.tmpl, vis, time.Time{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(pr.Text) != tc.prompt {
				t.Fatalf("render\n%q\nwant\n%q", pr.Text, tc.prompt)
			}
			want := tok.Count(tc.prompt)
			for _, n := range tc.images {
				want += n - 1 // the placeholder token becomes n
			}
			if got := pr.Count(tok); got != want {
				t.Errorf("count %d, want %d", got, want)
			}
			if ids := pr.IDs(tok); len(ids) != want {
				t.Errorf("%d ids, want %d", len(ids), want)
			}
			if got := fmt.Sprint(pr.ImageTokens(tok)); got != fmt.Sprint(tc.images) {
				t.Errorf("image tokens %s, want %v", got, tc.images)
			}
		})
	}
}

// TestVisionRefusals: what vLLM refuses fails with the reason.
func TestVisionRefusals(t *testing.T) {
	src := testmodel.Source(t, "")
	qwen3, err := chat.LoadFS(src.FS, "")
	if err != nil {
		t.Fatal(err)
	}
	img := pngURL(t, 64, 64)
	chatBody := func(parts ...string) string {
		return `{"messages":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`
	}
	part := func(url string) string { return `{"type":"image_url","image_url":{"url":"` + url + `"}}` }
	cases := []struct {
		name, body string
		vis        *Vision
		want       string
	}{
		{"text-only model", chatBody(part(img)), nil, "media part for a text-only model"},
		{"above the limit", chatBody(part(img), part(img), part(img)), loadVision(t, "qwen2_5_vl", 2), "3 images in one prompt, above the server's limit of 2"},
		{"aspect ratio", chatBody(part(pngURL(t, 4000, 10))), loadVision(t, "qwen2_5_vl", -1), "aspect ratio"},
		{"not an image", chatBody(part("data:image/png;base64,aGVsbG8gd29ybGQ=")), loadVision(t, "qwen2_5_vl", -1), "messages[0].content[0]"},
		{"remote without fetching", chatBody(part("http://127.0.0.1:1/x.png")), loadVision(t, "qwen2_5_vl", -1), "--fetch-images"},
		{"unknown kwarg", `{"mm_processor_kwargs":{"bogus":1},` + chatBody(part(img))[1:], loadVision(t, "qwen2_5_vl", -1), "bogus"},
		{"too many placeholders", chatBody(`{"type":"text","text":"<|vision_start|><|image_pad|><|vision_end|><|vision_start|><|image_pad|><|vision_end|>"}`, part(img)), loadVision(t, "qwen2_5_vl", -1), "more '<|vision_start|><|image_pad|><|vision_end|>' placeholders"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex, err := extract.Body([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			_, err = RenderVision(VLLM, ex, qwen3, tc.vis, time.Time{}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !IsRefusal(err) {
				t.Fatalf("err %v, want a refusal with %q", err, tc.want)
			}
		})
	}
	p, err := vision.Load(filepath.Join("..", "vision", "testdata", "configs", "mistral_small_3_1_tekken"))
	if err != nil {
		t.Fatal(err)
	}
	// A Mistral-format processor is counted by the Mistral renderer only
	// (mistral_images.go); under a chat template its images are refused.
	mv, err := NewVision(p, -1)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := extract.Body([]byte(chatBody(part(img))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RenderVision(VLLM, ex, qwen3, mv, time.Time{}, nil); err == nil || !IsRefusal(err) || !strings.Contains(err.Error(), "Mistral renderer") {
		t.Errorf("Mistral format under a chat template: %v", err)
	}
}

// TestVisionLiteralExpansion: a family whose replacement holds plain text
// (Gemma 3: "\n\n" around the image, transformers' full_image_sequence,
// as the vision reference grid records it) is counted with the
// replacement in place, never rescanning it (it holds the placeholder
// again). The vocabulary is Qwen3's, for which Gemma's image tokens are
// plain text: what is checked is where the text goes.
func TestVisionLiteralExpansion(t *testing.T) {
	src := testmodel.Source(t, "")
	tok, _ := src.Tokenizer()
	qwen3, err := chat.LoadFS(src.FS, "")
	if err != nil {
		t.Fatal(err)
	}
	vis := loadVision(t, "gemma3", -1)
	img := pngURL(t, 64, 48)
	body := `{"mm_processor_kwargs":{"do_pan_and_scan":false},"messages":[{"role":"user","content":[{"type":"text","text":"A"},{"type":"image_url","image_url":{"url":"` + img + `"}},{"type":"image_url","image_url":{"url":"` + img + `"}}]}]}`
	ex, err := extract.Body([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := RenderVision(VLLM, ex, qwen3, vis, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	image := "\n\n<start_of_image>" + strings.Repeat("<image_soft_token>", 256) + "<end_of_image>\n\n"
	want := "<|im_start|>user\n" + image + "\n" + image + "\nA<|im_end|>\n<|im_start|>assistant\n"
	if got := string(pr.Expanded()); got != want {
		t.Fatalf("expanded\n%q\nwant\n%q", got, want)
	}
	if n := pr.Count(tok); n != tok.Count(want) {
		t.Errorf("count %d, want %d", n, tok.Count(want))
	}
}

// TestVisionOtherProfiles: images are counted as vLLM does; SGLang's
// processing of them is not reproduced, so a body with images is refused
// under the sglang profile rather than counted without them.
func TestVisionOtherProfiles(t *testing.T) {
	src := testmodel.Source(t, "")
	qwen3, err := chat.LoadFS(src.FS, "")
	if err != nil {
		t.Fatal(err)
	}
	body := `{"messages":[{"role":"user","content":[{"type":"text","text":"A"},{"type":"image_url","image_url":{"url":"` + pngURL(t, 64, 48) + `"}}]}]}`
	ex, err := extract.Body([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RenderVision(SGLang, ex, qwen3, loadVision(t, "qwen2_5_vl", -1), time.Time{}, nil); err == nil || !strings.Contains(err.Error(), "sglang") {
		t.Errorf("sglang: %v", err)
	}
}

// TestVisionURLsNotCopied: an image's data URL is read where it lies in
// the body (its base64 neither copied nor decoded beyond the header), an
// escaped one decoded; a size met before is expanded from the cache, the
// same as the processor's.
func TestVisionURLsNotCopied(t *testing.T) {
	body := []byte(`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + pngURL(t, 640, 480) + `"}},{"type":"text","text":"hi"}]}]}`)
	ex, err := extract.Body(body)
	if err != nil {
		t.Fatal(err)
	}
	v := loadVision(t, "qwen2_5_vl", -1)
	req, err := PrepareVision(RulesOf(VLLM), ex, nil, v)
	if err != nil {
		t.Fatal(err)
	}
	u := req.images.refs[0].url
	start := bytes.Index(body, []byte("data:image/png"))
	if len(u) == 0 || &u[0] != &body[start] {
		t.Errorf("the image's URL is a copy, not the body's bytes")
	}
	if got, ok := urlBytes([]byte(`"data:image\/png;base64,AAAA"`)); !ok || string(got) != "data:image/png;base64,AAAA" {
		t.Errorf("escaped URL read as %q", got)
	}
	for range 2 {
		e, err := v.expand(640, 480, vision.Overrides{})
		if err != nil || e.Tokens() != 391 {
			t.Fatalf("640×480: %d tokens (%v), transformers gives 391", e.Tokens(), err)
		}
	}
}

// TestVisionRefusalsPerFamily: for every family in transformers' format,
// a body with more images than --limit-mm-per-prompt fails with the
// reason (and one at the limit counts), and every image of the vision
// reference grid that the family's transformers processor refuses (the
// Qwen-VL families' aspect ratio above 200, Pixtral's 1541×1, Mistral
// Small 3.1's tiny images: internal/vision/testdata/reference.jsonl.gz)
// fails its body as a refusal naming the part, while an image the
// processor takes in the same body shape counts.
func TestVisionRefusalsPerFamily(t *testing.T) {
	src := testmodel.Source(t, "")
	qwen3, err := chat.LoadFS(src.FS, "")
	if err != nil {
		t.Fatal(err)
	}
	type cell struct {
		Config        string `json:"config"`
		Width, Height int
		Kwargs        map[string]any `json:"kwargs"`
		Error         string         `json:"error"`
	}
	refused := map[string][]cell{}
	for _, c := range testutil.ReadJSONL[cell](t, filepath.Join("..", "vision", "testdata", "reference.jsonl.gz")) {
		if c.Error != "" && len(c.Kwargs) == 0 {
			refused[c.Config] = append(refused[c.Config], c)
		}
	}
	body := func(urls ...string) []byte {
		parts := []string{`{"type":"text","text":"Look."}`}
		for _, u := range urls {
			parts = append(parts, `{"type":"image_url","image_url":{"url":"`+u+`"}}`)
		}
		return []byte(`{"messages":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`)
	}
	// Pixtral's and Mistral Small 3.1's own templates (content lists,
	// [IMG] printed for each image part): with a string-content template
	// vLLM fails every image of theirs (below).
	own := map[string]*chat.Template{}
	for config, model := range map[string]string{"pixtral": "pixtral-12b", "mistral3": "mistral-small-3.1"} {
		src, err := os.ReadFile(filepath.Join("..", "vision", "testdata", "hfmistral", model, "chat_template.jinja"))
		if err != nil {
			t.Fatal(err)
		}
		if own[config], err = chat.Compile(string(src)); err != nil {
			t.Fatal(err)
		}
	}
	var tmpl *chat.Template
	render := func(vis *Vision, b []byte) error {
		ex, err := extract.Body(b)
		if err != nil {
			t.Fatal(err)
		}
		_, err = RenderVision(VLLM, ex, tmpl, vis, time.Time{}, nil)
		return err
	}
	img := pngURL(t, 448, 336)
	for _, config := range []string{"qwen2_5_vl", "qwen3_vl", "gemma3", "llama4", "pixtral", "mistral3", "internvl3", "llava_onevision", "idefics3", "smolvlm"} {
		t.Run(config, func(t *testing.T) {
			tmpl = qwen3
			if own[config] != nil {
				// vLLM 0.32 puts "<image>" (llava.py) or nothing
				// (mistral3.py) in a string-content template's text: no
				// [IMG] for the processor to expand ("Failed to apply
				// prompt replacement").
				if err := render(loadVision(t, config, 2), body(img)); err == nil || !IsRefusal(err) || !strings.Contains(err.Error(), `holds 0 "[IMG]" for 1 images`) {
					t.Errorf("an image under a string-content template: %v", err)
				}
				tmpl = own[config]
			}
			if err := render(loadVision(t, config, 2), body(img, img)); err != nil {
				t.Errorf("2 images at a limit of 2: %v", err)
			}
			err := render(loadVision(t, config, 2), body(img, img, img))
			if err == nil || !IsRefusal(err) || !strings.Contains(err.Error(), "3 images in one prompt, above the server's limit of 2") {
				t.Errorf("3 images at a limit of 2: %v", err)
			}
			for _, c := range refused[config] {
				err := render(loadVision(t, config, -1), body(img, pngURL(t, c.Width, c.Height)))
				if err == nil || !IsRefusal(err) || !strings.Contains(err.Error(), "messages[0].content[2]") {
					t.Errorf("%d×%d (transformers: %s): %v", c.Width, c.Height, c.Error, err)
				}
			}
		})
	}
	// The families whose processor refuses some image of the grid.
	if len(refused["qwen2_5_vl"]) == 0 || len(refused["qwen3_vl"]) == 0 || len(refused["pixtral"]) == 0 || len(refused["mistral3"]) == 0 {
		t.Errorf("refused cells: %v", refused)
	}
}
