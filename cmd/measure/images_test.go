package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// vlModelDir is a Qwen2.5-VL model folder: Qwen3's tokenizer (the Qwen-VL
// families share its vocabulary) and Qwen2.5-VL's processor configuration.
func vlModelDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	copyFiles(t, testutil.RefModel(t, "qwen3"), dir, "tokenizer.json", "tokenizer_config.json")
	copyFiles(t, filepath.Join("..", "..", "internal", "vision", "testdata", "configs", "qwen2_5_vl"), dir, "config.json", "preprocessor_config.json")
	return dir
}

func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMeasureImages counts chat and Responses bodies with data-URL and
// remote images on a Qwen2.5-VL model folder: the templated count is the
// prompt vLLM renders (written here by hand: the placeholder in front of
// the text, §1.2) with each image's placeholder token become
// transformers' count for its size (640×480 → 391, 224×224 → 64: the
// vision reference grid); remote images are read once per URL.
func TestMeasureImages(t *testing.T) {
	tok, _ := testmodel.Source(t, "").Tokenizer()
	var fetches atomic.Int64
	small := pngBytes(t, 224, 224)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		w.Write(small)
	}))
	defer srv.Close()
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, 640, 480))
	chatBody := func(urls ...string) string {
		parts := []string{`{"type":"text","text":"Describe."}`}
		for _, u := range urls {
			parts = append(parts, `{"type":"image_url","image_url":{"url":"`+u+`"}}`)
		}
		return `{"model":"m","messages":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`
	}
	const ph = "<|vision_start|><|image_pad|><|vision_end|>\n"
	prompt := func(images int) int {
		return tok.Count("<|im_start|>user\n" + strings.Repeat(ph, images) + "Describe.<|im_end|>\n<|im_start|>assistant\n")
	}
	input := strings.Join([]string{
		chatBody(dataURL),
		chatBody(srv.URL+"/a.png", dataURL),
		`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"Describe."},{"type":"input_image","image_url":"` + srv.URL + `/a.png"}]}]}`,
	}, "\n") + "\n"
	want := []struct {
		count int
		per   []int
	}{
		{prompt(1) - 1 + 391, []int{391}},
		{prompt(2) - 2 + 64 + 391, []int{64, 391}},
		{prompt(1) - 1 + 64, []int{64}},
	}
	for _, folder := range []struct {
		name string
		args []string
	}{
		{"model folder", []string{"--tokenizer", vlModelDir(t)}},
		{"--processor", []string{"--processor", filepath.Join("..", "..", "internal", "vision", "testdata", "configs", "qwen2_5_vl")}},
	} {
		t.Run(folder.name, func(t *testing.T) {
			fetches.Store(0)
			code, out, errs := runCLI(input, append(folder.args, "--apply-chat-template", "--fetch-images", "--workers", "1")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != len(want) {
				t.Fatalf("%d lines out", len(lines))
			}
			for i, line := range lines {
				testutil.ValidateSchema(t, "measurement.schema.json", []byte(line))
				var rec struct {
					ISL struct {
						Templated   int `json:"templated"`
						ImageTokens struct {
							PerImage []int `json:"per_image"`
							Total    int   `json:"total"`
						} `json:"image_tokens"`
					} `json:"isl"`
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				total := 0
				for _, n := range want[i].per {
					total += n
				}
				if rec.ISL.Templated != want[i].count || fmt.Sprint(rec.ISL.ImageTokens.PerImage) != fmt.Sprint(want[i].per) || rec.ISL.ImageTokens.Total != total {
					t.Errorf("line %d: %+v, want templated %d, images %v", i+1, rec.ISL, want[i].count, want[i].per)
				}
			}
			if n := fetches.Load(); n != 1 {
				t.Errorf("%d fetches of one URL, want 1", n)
			}
		})
	}
}

// TestMeasureImagesRefused: bodies the server would refuse fail their
// line with the reason (on stderr, and in isl.error of the record, which
// keeps its place), and the others are measured.
func TestMeasureImagesRefused(t *testing.T) {
	img := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, 64, 64))
	wide := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, 3000, 10))
	body := func(urls ...string) string {
		var parts []string
		for _, u := range urls {
			parts = append(parts, `{"type":"image_url","image_url":{"url":"`+u+`"}}`)
		}
		return `{"model":"m","messages":[{"role":"user","content":[` + strings.Join(parts, ",") + `]}]}`
	}
	proc := filepath.Join("..", "..", "internal", "vision", "testdata", "configs", "qwen2_5_vl")
	cases := []struct {
		name  string
		args  []string
		body  string
		error string
	}{
		{"limit", []string{"--processor", proc, "--limit-mm-per-prompt", `{"image":1}`}, body(img, img), "2 images in one prompt, above the server's limit of 1"},
		{"aspect ratio", []string{"--processor", proc}, body(wide), "aspect ratio"},
		{"remote without --fetch-images", []string{"--processor", proc}, body("http://127.0.0.1:9/x.png"), "--fetch-images"},
		{"not an image", []string{"--processor", proc}, body("data:image/png;base64,AAAA"), "messages[0].content[0]"},
		{"text-only model", nil, body(img), "media part for a text-only model"},
		{"Mistral format", []string{"--processor", filepath.Join("..", "..", "internal", "vision", "testdata", "configs", "mistral_small_3_1_tekken")}, body(img), "mistral-common"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			input := tc.body + "\n" + `{"messages":[{"role":"user","content":"Hi"}]}` + "\n"
			code, out, errs := runCLI(input, append(tc.args, "--apply-chat-template", "--workers", "1")...)
			if code != 1 || !strings.Contains(errs, tc.error) || !strings.Contains(errs, "<stdin>:1") {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, errs, tc.error)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || !strings.Contains(lines[1], `"content":"Hi"`) {
				t.Fatalf("want both records back: %q", out)
			}
			// The refused record keeps its place, with the reason.
			var rec struct {
				ISL struct {
					Error string `json:"error"`
				} `json:"isl"`
			}
			if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil || !strings.Contains(rec.ISL.Error, tc.error) {
				t.Errorf("isl.error %q (%v), want %q", rec.ISL.Error, err, tc.error)
			}
		})
	}
	if code, _, errs := runCLI("", "--limit-mm-per-prompt", "image=x"); code != 2 || !strings.Contains(errs, "--limit-mm-per-prompt") {
		t.Errorf("bad limit: exit %d, %q", code, errs)
	}
}

// TestMeasureImagesGapCause: a bare count (AIPerf's default, text only)
// of a request with an image explains the server's count with an image
// cause of the image's tokens (640×480 → 391 on Qwen2.5-VL) and the
// template's overhead for the rest.
func TestMeasureImagesGapCause(t *testing.T) {
	tok, _ := testmodel.Source(t, "").Tokenizer()
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBytes(t, 640, 480))
	server := tok.Count("<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>\nDescribe.<|im_end|>\n<|im_start|>assistant\n") - 1 + 391
	rec := fmt.Sprintf(`{"payload":{"messages":[{"role":"user","content":[{"type":"text","text":"Describe."},{"type":"image_url","image_url":{"url":"%s"}}]}]},"responses":["{\"usage\":{\"prompt_tokens\":%d}}"]}`, dataURL, server)
	code, out, errs := runCLI(rec+"\n", "--tokenizer", vlModelDir(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	bare := tok.Count("Describe.")
	want := fmt.Sprintf(`"vs_server":{"total":%d,"causes":[{"cause":"image","tokens":391},{"cause":"template_overhead","tokens":%d}]}`, server-bare, server-bare-391)
	if !strings.Contains(out, want) {
		t.Errorf("got %s\nwant %s", out, want)
	}
}
