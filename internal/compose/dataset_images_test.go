package compose

import (
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/wire"
	"github.com/islkit/islkit/internal/workload"
)

// imageDialogs is an OpenAI-messages dataset line whose first user message
// holds a 640×480 image, a text and a 224×224 image (in that order), and
// the same line without the image parts.
func imageDialogs(t *testing.T) (with, without string, urls [2]string) {
	t.Helper()
	urls = [2]string{syntheticImage("png", 640, 480, 1), syntheticImage("png", 224, 224, 2)}
	line := func(images bool) string {
		first := []map[string]any{{"type": "text", "text": "Describe this picture in a few words."}}
		if images {
			first = []map[string]any{
				{"type": "image_url", "image_url": map[string]any{"url": urls[0]}},
				first[0],
				{"type": "image_url", "image_url": urls[1]},
			}
		}
		b, err := json.Marshal(map[string]any{"messages": []map[string]any{
			{"role": "user", "content": first},
			{"role": "assistant", "content": "A black rectangle, and nothing in it."},
			{"role": "user", "content": "And the second one?"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	return line(true), line(false), urls
}

// TestDatasetImages: an OpenAI-messages dataset's image_url parts are
// kept as given (data URLs, in their places among the text parts, on the
// wire of every later request too) and counted: with the texts kept, each
// request counts exactly the tokens the images add by transformers'
// Qwen2.5-VL processor (640×480 → 391, 224×224 → 64; reference grid) and
// vLLM's string-format placeholders in front of the text (§1.2: each
// "<|vision_start|><|image_pad|><|vision_end|>" and "\n", the pad
// expanded to the image's tokens), (391 + 3) + (64 + 3) = 461 more than
// the same dialog without them; with --isl every request is exactly its target, images
// included. Without the images in the count the first would fail (a media
// part for a text-only model).
func TestDatasetImages(t *testing.T) {
	with, without, urls := imageDialogs(t)
	dialogs, skipped, _, err := workload.ReadDataset(strings.NewReader(with+"\n"+without+"\n"), "images.jsonl", "openai")
	if err != nil || len(skipped) != 0 || len(dialogs) != 2 {
		t.Fatalf("%d dialogs, skipped %v, %v", len(dialogs), skipped, err)
	}
	for _, target := range []cachebust.Target{cachebust.None, cachebust.FirstTurnSuffix, cachebust.FirstTurnPrefix} {
		p, m := visionModel(t, target)
		d, err := NewDataset(p, m, DatasetOptions{OSL: 20, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Workers: 1, Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		convs := runDataset(t, d, dialogs)
		if len(convs) != 2 {
			t.Fatalf("%s: %d conversations", target, len(convs))
		}
		for k := range convs[0].Turns {
			a, b := convs[0].Turns[k].WireISL, convs[1].Turns[k].WireISL
			if a == nil || b == nil || *a-*b != 461 {
				t.Errorf("%s turn %d: %v with the images, %v without; want 461 more", target, k, deref(a), deref(b))
			}
		}
		checkImagesOnWire(t, &convs[0], urls)

		d, err = NewDataset(p, m, DatasetOptions{OSL: 20, Seed: 1, BenchmarkID: testutil.SeedBenchmarkID(1), Workers: 1, Model: "m", ISL: 700})
		if err != nil {
			t.Fatal(err)
		}
		for _, conv := range runDataset(t, d, dialogs) {
			for _, turn := range conv.Turns {
				if turn.WireISL == nil || *turn.WireISL != turn.TargetISL || turn.Unreachable != nil {
					t.Errorf("%s %s turn %d: wire %v, target %d (%+v)", target, conv.ID, turn.Index, deref(turn.WireISL), turn.TargetISL, turn.Unreachable)
				}
			}
			if conv.ID == "conv-0" {
				checkImagesOnWire(t, &conv, urls)
			}
		}
	}
}

// checkImagesOnWire: every request of conv carries the first user
// message's parts as the dataset gave them: image, text, image.
func checkImagesOnWire(t *testing.T, conv *records.Conversation, urls [2]string) {
	t.Helper()
	for k := range conv.Turns {
		req, err := wire.Build(conv, k, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := req.Body()
		if err != nil {
			t.Fatal(err)
		}
		var b struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &b); err != nil {
			t.Fatal(err)
		}
		var parts []struct {
			Type     string `json:"type"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if err := json.Unmarshal(b.Messages[0].Content, &parts); err != nil || len(parts) != 3 ||
			parts[0].Type != "image_url" || parts[0].ImageURL.URL != urls[0] || parts[1].Type != "text" ||
			parts[2].Type != "image_url" || parts[2].ImageURL.URL != urls[1] {
			t.Errorf("%s request %d: first message %s", conv.ID, k, clipped(b.Messages[0].Content))
		}
	}
}

func clipped(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
