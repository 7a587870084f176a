package serverprofile

import (
	"path/filepath"
	"testing"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/vision"
)

// FuzzMistral feeds chat bodies to the Mistral renderer (v3 and v7): no
// panic, the text bounded by the body's size (Python's json.dumps writes
// a byte as at most 6, a number as at most a few times its literal), and
// every special token a span of the text that names it, in order; with
// Mistral Small 3.1's image settings, every image one Fixed span and the
// cuts in order.
func FuzzMistral(f *testing.F) {
	const png1 = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4IPABAAPkAfGVogMUAAAAAElFTkSuQmCC"
	for _, b := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"system","content":[{"type":"text","text":"a"}]},{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"abcdefghi","function":{"name":"f","arguments":"{\"a\": [1e400, -0, 1.5e-7]}"}}]},{"role":"tool","tool_call_id":"abcdefghi","content":"{\"x\":\"\u0001\"}"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}`,
		`{"messages":[{"role":"assistant","content":"a "}],"continue_final_message":true,"add_generation_prompt":false}`,
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"` + png1 + `"}},{"type":"text","text":"b"}]},{"role":"user","content":[{"type":"image_url","image_url":"` + png1 + `"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`,
		`{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"image_url","image_url":{"url":"` + png1 + `"}}]},{"role":"user","content":"b"}]}`,
	} {
		f.Add([]byte(b), true, false)
		f.Add([]byte(b), false, true)
	}
	formats := map[bool]*chat.MistralFormat{}
	for _, v7 := range []bool{false, true} {
		mf := &chat.MistralFormat{Version: "v3", Special: map[string]int{}}
		if v7 {
			mf.Version = "v7"
		}
		for rank, s := range mistralDefaultSpecials {
			mf.Special[s] = rank
		}
		formats[v7] = mf
	}
	p, err := vision.Load(filepath.Join("..", "vision", "testdata", "configs", "mistral_small_3_1_tekken"))
	if err != nil {
		f.Fatal(err)
	}
	vis, err := NewVision(p, 8)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, v7, sglang bool) {
		ex, err := extract.Body(body)
		if err != nil || ex.Body == nil {
			return
		}
		sv := mistralVLLM
		if sglang {
			sv = mistralSGLang
		}
		pr, err := renderMistral(sv, ex, formats[v7], vis, nil)
		if err != nil {
			return
		}
		images := 0
		for _, s := range pr.Fixed {
			if s.Image > 0 {
				images++
				if s.Image != images {
					t.Fatalf("image span %d is image %d", images, s.Image)
				}
			}
		}
		if images != len(pr.Images) {
			t.Fatalf("%d image spans, %d images", images, len(pr.Images))
		}
		for k := 1; k < len(pr.Cuts); k++ {
			if pr.Cuts[k] <= pr.Cuts[k-1] || pr.Cuts[k] > len(pr.Text) {
				t.Fatalf("cuts %v out of order or outside the %d-byte text", pr.Cuts, len(pr.Text))
			}
		}
		if limit := 4096 + 24*len(body); len(pr.Text) > limit {
			t.Fatalf("%d bytes rendered from a %d-byte body", len(pr.Text), len(body))
		}
		end := 0
		for _, s := range pr.Fixed {
			if s.Start < end || s.End > len(pr.Text) || s.Start >= s.End {
				t.Fatalf("special span %d..%d out of order or outside the %d-byte text", s.Start, s.End, len(pr.Text))
			}
			if id, ok := formats[v7].Special[string(pr.Text[s.Start:s.End])]; !ok || id != s.ID {
				t.Fatalf("span %q is not the special token %d", pr.Text[s.Start:s.End], s.ID)
			}
			end = s.End
		}
	})
}

// FuzzMistralFormat: any tekken.json-like input gives a format or an
// error, never a panic.
func FuzzMistralFormat(f *testing.F) {
	f.Add([]byte(`{"config":{"version":"v7","default_num_special_tokens":1000},"special_tokens":[{"rank":1,"token_str":"<s>"}]}`))
	f.Add([]byte(`{"config":{"version":"v3"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		mf, err := MistralFormatOf(data)
		if err == nil && (mf == nil || mf.Special == nil) {
			t.Fatal("no format and no error")
		}
	})
}
