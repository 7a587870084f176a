package vision

import (
	"encoding/json"
	"testing"
)

// FuzzExpand: any size and any mm_processor_kwargs object, on every
// family, returns an expansion or an error quickly: no panic, no division
// by zero, and a bounded number of pieces.
func FuzzExpand(f *testing.F) {
	names := []string{"qwen2_5_vl", "qwen3_vl", "gemma3", "pixtral", "mistral3", "internvl3", "llava_onevision", "idefics3", "smolvlm", "mistral_small_3_1_tekken", "pixtral_12b_tekken", "llama4"}
	procs := make([]Processor, len(names))
	for i, n := range names {
		p, err := Load("testdata/configs/" + n)
		if err != nil {
			f.Fatal(err)
		}
		procs[i] = p
	}
	f.Add(uint8(0), 1280, 720, `{}`)
	f.Add(uint8(2), 1800, 600, `{"do_pan_and_scan": true, "pan_and_scan_max_num_crops": 0}`)
	f.Add(uint8(5), 65535, 1, `{"max_patches": 64, "min_patches": 70}`)
	f.Add(uint8(0), 3, 3, `{"size": {"shortest_edge": 1, "longest_edge": 1}}`)
	f.Add(uint8(7), 100, 65535, `{"max_image_size": {"longest_edge": 1}}`)
	f.Fuzz(func(t *testing.T, which uint8, w, h int, kw string) {
		var m map[string]any
		if json.Unmarshal([]byte(kw), &m) != nil {
			m = nil
		}
		p := procs[int(which)%len(procs)]
		e, err := p.Expand(w, h, Overrides{Kwargs: m})
		if err != nil {
			return
		}
		if len(e.Pieces) > 2000 || e.Special < 1 || e.Tiles < 1 {
			t.Fatalf("%s %d×%d %s: %d pieces, %d special, %d tiles", p.Family(), w, h, kw, len(e.Pieces), e.Special, e.Tiles)
		}
	})
}
