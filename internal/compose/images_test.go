package compose

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
)

func decodeDataURL(t *testing.T, url string) []byte {
	t.Helper()
	_, payload, ok := strings.Cut(url, ";base64,")
	b, err := base64.StdEncoding.DecodeString(payload)
	if !ok || err != nil {
		t.Fatalf("not a base64 data URL: %.40s", url)
	}
	return b
}

// TestSyntheticImages: the generated PNGs and JPEGs decode with Go's own
// decoders (which share nothing with the hand-written PNG) to the size
// asked, their pixels are the seed's bytes then black, the same seed gives
// the same bytes and another seed other bytes, and they are small.
func TestSyntheticImages(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {640, 480}, {1, 300}, {300, 1}, {7, 3}, {4000, 3000}} {
		w, h := sz[0], sz[1]
		url := syntheticImage("png", w, h, 0x0102030405060708)
		if !strings.HasPrefix(url, "data:image/png;base64,") {
			t.Fatalf("%.30s", url)
		}
		b := decodeDataURL(t, url)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%dx%d: %v", w, h, err)
		}
		gray, ok := img.(*image.Gray)
		if !ok || img.Bounds() != image.Rect(0, 0, w, h) {
			t.Fatalf("%dx%d: decoded %T %v", w, h, img, img.Bounds())
		}
		want := make([]byte, w*h)
		copy(want[:w], []byte{8, 7, 6, 5, 4, 3, 2, 1})
		if !bytes.Equal(gray.Pix, want) {
			t.Errorf("%dx%d: pixels differ from the seed's bytes then black", w, h)
		}
		if limit := 200 + w*h/500; len(b) > limit {
			t.Errorf("%dx%d: %d bytes on the wire, want at most %d", w, h, len(b), limit)
		}
		if syntheticImage("png", w, h, 0x0102030405060708) != url || syntheticImage("png", w, h, 9) == url {
			t.Errorf("%dx%d: not determined by the seed", w, h)
		}
		if w*h > 1<<20 {
			continue
		}
		jb := decodeDataURL(t, syntheticImage("jpeg", w, h, 5))
		if cfg, err := jpeg.DecodeConfig(bytes.NewReader(jb)); err != nil || cfg.Width != w || cfg.Height != h {
			t.Errorf("%dx%d jpeg: %v %v", w, h, cfg, err)
		}
		if _, err := jpeg.Decode(bytes.NewReader(jb)); err != nil {
			t.Errorf("%dx%d jpeg: %v", w, h, err)
		}
	}
}

// visionModel is Qwen3 (the embedded model) with Qwen2.5-VL's image
// processing: the Qwen-VL families share Qwen3's vocabulary.
func visionModel(t *testing.T, target cachebust.Target) (*records.Probe, *Model) {
	t.Helper()
	p, m := realProbe(t, "", target)
	mv := *m
	mv.Vision = serverprofile.LoadVision(filepath.Join("..", "vision", "testdata", "configs", "qwen2_5_vl"), -1)
	return p, &mv
}

// TestImagesExact composes multi-turn conversations with 0–4 images per
// turn of drawn sizes for every cache-bust target: every request's count
// (images included) is its target, the images are those drawn (the first
// turn of each conversation has its own), and the conversation records
// validate. The counts themselves are checked against transformers and
// Python Jinja2 by TestImagesReference.
func TestImagesExact(t *testing.T) {
	for _, target := range cachebust.Targets() {
		p, m := visionModel(t, target)
		o := opts(1500)
		o.Conversations, o.Turns, o.Exact = 3, 3, true
		if target.IsSystem() {
			o.SharedSystemPromptLength = 40
		}
		o.Images = ImageOptions{PerTurn: 2, Stddev: 1.5, Width: 448, Height: 336, WidthStddev: 100, HeightStddev: 60, Format: "png"}
		c, err := New(p, m, "", o)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, line := range bytes.Split(bytes.TrimSpace(runAll(t, c)), []byte("\n")) {
			testutil.ValidateSchema(t, "conversation.schema.json", line)
			var conv records.Conversation
			if err := json.Unmarshal(line, &conv); err != nil {
				t.Fatal(err)
			}
			for _, turn := range conv.Turns {
				if turn.WireISL == nil || *turn.WireISL != turn.TargetISL {
					t.Errorf("%s %s turn %d: wire %v, target %d (unreachable %+v)", target, conv.ID, turn.Index, deref(turn.WireISL), turn.TargetISL, turn.Unreachable)
				}
				if len(turn.Images) > 4 {
					t.Errorf("%d images", len(turn.Images))
				}
				for _, im := range turn.Images {
					if seen[im.URL] {
						t.Errorf("%s: an image repeats", conv.ID)
					}
					seen[im.URL] = true
				}
			}
		}
		if len(seen) == 0 {
			t.Errorf("%s: no images", target)
		}
	}
}

// TestImagesRefused: images need a model that takes them and a
// multi-turn endpoint.
func TestImagesRefused(t *testing.T) {
	p, m := realProbe(t, "", cachebust.None)
	o := opts(500)
	o.Images = ImageOptions{PerTurn: 1, Width: 64, Height: 64, Format: "png"}
	if _, err := New(p, m, "", o); err == nil || !strings.Contains(err.Error(), "--processor") {
		t.Errorf("text-only model: %v", err)
	}
	o.Images.Format = "gif"
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--image-format") {
		t.Errorf("gif: %v", err)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
