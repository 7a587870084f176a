package testserver

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestImagesInUsage: with a Qwen2.5-VL processor the server counts each
// image as vLLM does (the placeholder token become transformers' count
// for its size: 640×480 → 391, the vision reference grid) in
// usage.prompt_tokens (input_tokens), reports them again in
// prompt_tokens_details.multimodal_tokens, and refuses more images than
// its limit with a 400.
func TestImagesInUsage(t *testing.T) {
	tok, _ := testmodel.Source(t, "").Tokenizer()
	vis := serverprofile.LoadVision(filepath.Join("..", "vision", "testdata", "configs", "qwen2_5_vl"), 2)
	if vis == nil {
		t.Fatal("no vision")
	}
	s := StartTest(t, Config{Vision: vis})
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 640, 480))); err != nil {
		t.Fatal(err)
	}
	img := "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
	part := `{"type":"image_url","image_url":{"url":"` + img + `"}}`
	want := tok.Count("<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>\nDescribe.<|im_end|>\n<|im_start|>assistant\n") - 1 + 391
	var r struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			InputTokens  int `json:"input_tokens"`
			Details      struct {
				Multimodal int `json:"multimodal_tokens"`
			} `json:"prompt_tokens_details"`
			InputDetails struct {
				Multimodal int `json:"multimodal_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	}
	status, text := post(t, s, PathChat, `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":[{"type":"text","text":"Describe."},`+part+`]}]}`, nil)
	if status != 200 || json.Unmarshal([]byte(text), &r) != nil || r.Usage.PromptTokens != want || r.Usage.Details.Multimodal != 391 {
		t.Errorf("chat: %d %s; want prompt_tokens %d, multimodal_tokens 391", status, text, want)
	}
	r.Usage.InputDetails.Multimodal = 0
	status, text = post(t, s, PathResponses, `{"model":"m","max_output_tokens":2,"input":[{"role":"user","content":[{"type":"input_text","text":"Describe."},{"type":"input_image","image_url":"`+img+`"}]}]}`, nil)
	if status != 200 || json.Unmarshal([]byte(text), &r) != nil || r.Usage.InputTokens != want || r.Usage.InputDetails.Multimodal != 391 {
		t.Errorf("responses: %d %s; want input_tokens %d, multimodal_tokens 391", status, text, want)
	}
	status, text = post(t, s, PathChat, `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":[`+strings.Repeat(part+",", 3)+`{"type":"text","text":"x"}]}]}`, nil)
	if status != 400 || !strings.Contains(text, "above the server's limit of 2") {
		t.Errorf("three images: %d %s", status, text)
	}
}
