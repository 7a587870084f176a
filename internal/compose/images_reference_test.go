package compose

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/wire"
)

var imageBodies = flag.String("image-bodies", "", "write TestImagesReference's request bodies to this file for scripts/vision/check-compose-images-reference.sh, and check nothing")

// imageRefRow is one line of testdata/images-reference.jsonl.gz, written
// by scripts/vision/check-compose-images-reference.sh --update: a request
// of TestImagesReference's conversations counted by
// scripts/vision/compose_images_ref.py (the images decoded by Pillow and
// sized by transformers' Qwen2VLImageProcessor, the messages made as vLLM
// makes them for a string-content template, rendered by transformers'
// apply_chat_template (Python Jinja2), the placeholders expanded as
// Qwen2_5_VLProcessor does, encoded by the Rust tokenizers).
type imageRefRow struct {
	Case       string `json:"case"`
	BodySHA256 string `json:"body_sha256"`
	RefTokens  int    `json:"ref_tokens"`
	Images     int    `json:"images"`
}

// TestImagesReference composes multi-turn conversations with 1–4 images
// per turn (PNG for chat, JPEG for Responses, sizes drawn around 448×336)
// on Qwen2.5-VL's processing with Qwen3's vocabulary, for every cache-bust
// target and both endpoints, and requires every request body to be the one
// the reference counted (same SHA-256) and its count, compose's and the
// reference's, to be the turn's target.
func TestImagesReference(t *testing.T) {
	if testing.Short() && *imageBodies == "" {
		t.Skip("composes 60 requests with images")
	}
	want := map[string]imageRefRow{}
	if *imageBodies == "" {
		for _, r := range testutil.ReadJSONL[imageRefRow](t, filepath.Join("testdata", "images-reference.jsonl.gz")) {
			want[r.Case] = r
		}
	}
	var out *bufio.Writer
	if *imageBodies != "" {
		f, err := os.Create(*imageBodies)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out = bufio.NewWriter(f)
		defer out.Flush()
	}
	vis := serverprofile.LoadVision(filepath.Join("..", "vision", "testdata", "configs", "qwen2_5_vl"), -1)
	src := testmodel.Source(t, "")
	checked, images := 0, 0
	for _, ep := range []endpoint.Kind{endpoint.Chat, endpoint.Responses} {
		for _, target := range cachebust.Targets() {
			p, err := probe.Run(probe.Options{Source: src, ApplyChatTemplate: true, CacheBust: target, Now: pinned, Endpoint: ep})
			if err != nil {
				t.Fatal(err)
			}
			m, err := modelFor(p, src, "", "")
			if err != nil {
				t.Fatal(err)
			}
			m.Vision = vis
			o := opts(1200)
			o.Conversations, o.Turns, o.Exact, o.Endpoint, o.Seed = 2, 3, true, ep, 11
			if target.IsSystem() {
				o.SharedSystemPromptLength = 30
			}
			format := map[endpoint.Kind]string{endpoint.Chat: "png", endpoint.Responses: "jpeg"}[ep]
			o.Images = ImageOptions{PerTurn: 2, Stddev: 1.2, Width: 448, Height: 336, WidthStddev: 120, HeightStddev: 80, Format: format}
			c, err := New(p, m, "", o)
			if err != nil {
				t.Fatal(err)
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
					sum := sha256.Sum256(body)
					name := fmt.Sprintf("%s/%s/conv%d/turn%d", ep, target, i, k)
					n := totalImages(conv, k)
					images += n
					if out != nil {
						line, _ := json.Marshal(map[string]any{"case": name, "endpoint": string(ep), "body_sha256": hex.EncodeToString(sum[:]), "images": n, "body": json.RawMessage(body)})
						out.Write(append(line, '\n'))
						continue
					}
					r, ok := want[name]
					switch {
					case !ok:
						t.Errorf("%s: not in the reference", name)
					case r.BodySHA256 != hex.EncodeToString(sum[:]) || r.Images != n:
						t.Errorf("%s: the body differs from the one the reference counted", name)
					case turn.Unreachable != nil:
						t.Errorf("%s: unreachable %+v", name, turn.Unreachable)
					case turn.WireISL == nil || *turn.WireISL != r.RefTokens || r.RefTokens != turn.TargetISL:
						t.Errorf("%s: compose %v, reference %d, target %d", name, deref(turn.WireISL), r.RefTokens, turn.TargetISL)
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

// totalImages counts the images of turn k's request (its history's too).
func totalImages(conv *records.Conversation, k int) int {
	n := 0
	for i := 0; i <= k; i++ {
		n += len(conv.Turns[i].Images)
	}
	return n
}
