package send

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/corpus"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/workload"
)

// qwenVLProcessor is Qwen2.5-VL's image processing; the Qwen-VL families
// share the embedded Qwen3's vocabulary.
var qwenVLProcessor = filepath.Join("..", "vision", "testdata", "configs", "qwen2_5_vl")

// TestExactLiveImages: conversations composed with --live and 1–4 images
// per user turn (compose --images, the processor given apart from the
// tokenizer, as --processor), sent with --exact to a server that counts
// images as vLLM does and whose replies stop at random lengths: send
// finds the processor through the conversations' pin, and every request
// of every turn counts exactly its target_isl by the server's own usage,
// for every cache-bust target. Without the images in send's count, the
// first request already fails (a media part for a text-only model).
func TestExactLiveImages(t *testing.T) {
	srv := testserver.StartTest(t, testserver.Config{Model: testmodel.Source(t, ""), Vision: serverprofile.LoadVision(qwenVLProcessor, 16),
		Now: pinnedNow, RandomStop: true, Seed: 11})
	counts := map[int]int{}
	resized := 0
	for _, target := range cachebust.Targets() {
		t.Run(target.String(), func(t *testing.T) {
			p, m := probeModel(t, "", endpoint.Chat, target)
			mv := *m
			mv.Vision = serverprofile.LoadVision(qwenVLProcessor, 16)
			o := compose.Options{ISL: 1500, OSL: 24, Conversations: 3, Turns: 3, Seed: 9, Model: "m", Endpoint: endpoint.Chat,
				Exact: true, Live: true, Workers: 1, ISLSet: true, OSLSet: true, TurnsSet: true,
				BenchmarkID: testutil.SeedBenchmarkID(9),
				Images:      compose.ImageOptions{PerTurn: 2, Stddev: 1.3, Width: 448, Height: 336, WidthStddev: 100, HeightStddev: 60, Format: "png"}}
			if target.IsSystem() {
				o.SharedSystemPromptLength = 40
			}
			c, err := compose.New(p, &mv, "", o)
			if err != nil {
				t.Fatal(err)
			}
			convs := composedRecords(t, c.Run)
			f, err := exact.ComposedFor(convs)
			if err != nil {
				t.Fatal(err)
			}
			if f.Processor != qwenVLProcessor {
				t.Fatalf("composed_for.processor %q, want %q", f.Processor, qwenVLProcessor)
			}
			for i := range convs {
				for _, turn := range convs[i].Turns {
					counts[len(turn.Images)]++
				}
			}
			em, err := exact.LoadModel(*f, model.Options{}, "")
			if err != nil {
				t.Fatal(err)
			}
			z := exact.NewSizer(em, serverprofile.VLLM)
			var out bytes.Buffer
			sum, err := Run(context.Background(), &out, convs, newBuilder(t, PayloadOptions{Stream: true}),
				Config{URL: srv.URL(), Endpoint: endpoint.Chat, Timeout: time.Minute, Concurrency: 2}, Wiring{Sizer: z})
			if err != nil || sum.Failed != 0 {
				t.Fatalf("%+v %v\n%s", sum, err, out.String())
			}
			for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
				testutil.ValidateSchema(t, "request.schema.json", l)
			}
			recs := liveRecords(t, &out)
			if len(recs) != 9 {
				t.Fatalf("%d records, want 9", len(recs))
			}
			checkExact(t, endpoint.Chat, recs)
			for i := range recs {
				if recs[i].ResizedFrom != nil {
					resized++
				}
			}
		})
	}
	if counts[1] == 0 || counts[2] == 0 || counts[3] == 0 || counts[4] == 0 {
		t.Errorf("turns by their number of images: %v; want turns of 1, 2, 3 and 4", counts)
	}
	if resized == 0 {
		t.Errorf("no request was resized: the replies should have needed it")
	}
}

// TestExactProcessorMissing: a processor folder the conversations name
// but that is not here is a usage error, not images left uncounted.
func TestExactProcessorMissing(t *testing.T) {
	pin := records.ModelPin{Processor: filepath.Join(t.TempDir(), "gone")}
	if _, err := exact.Vision(testmodel.Source(t, ""), pin, ""); !cli.IsUsage(err) {
		t.Fatalf("got %v, want a usage error", err)
	}
}

// pngDataURL is a w×h PNG (image/png's header) as a data URL.
func pngDataURL(t *testing.T, w, h int, seed byte) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	img.Pix[0] = seed
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestExactLiveDatasetImages: an OpenAI-messages dataset whose user
// messages carry 1–3 image_url parts (before, between and after their
// texts), composed with --live (texts kept, or resized to --isl 60 beyond
// the images) and sent with --exact to a server that counts images as
// vLLM does and stops its replies at random lengths: every request counts
// exactly its target by the server's usage, for every cache-bust target.
func TestExactLiveDatasetImages(t *testing.T) {
	text, err := corpus.Default()
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(text)
	at := 2000
	take := func(k int) string {
		s := strings.Join(words[at:at+k], " ")
		at += k
		return s
	}
	var lines []string
	for i := range 3 {
		var msgs []map[string]any
		for k := range 3 {
			img := func(j int) map[string]any {
				return map[string]any{"type": "image_url", "image_url": map[string]any{"url": pngDataURL(t, 200+40*j+10*k, 150+30*i, byte(i*9+k*3+j))}}
			}
			parts := []map[string]any{img(0), {"type": "text", "text": take(10 + 5*k)}}
			if (i+k)%2 == 1 {
				parts = append(parts, img(1), map[string]any{"type": "text", "text": take(6)})
			}
			if k == 2 {
				parts = append(parts, img(2))
			}
			msgs = append(msgs, map[string]any{"role": "user", "content": parts}, map[string]any{"role": "assistant", "content": take(10 + i + k)})
		}
		b, err := json.Marshal(map[string]any{"messages": msgs})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	dialogs, skipped, _, err := workload.ReadDataset(strings.NewReader(strings.Join(lines, "\n")), "images.jsonl", "openai")
	if err != nil || len(skipped) != 0 || len(dialogs) != 3 {
		t.Fatalf("%d dialogs, skipped %v, %v", len(dialogs), skipped, err)
	}
	srv := testserver.StartTest(t, testserver.Config{Model: testmodel.Source(t, ""), Vision: serverprofile.LoadVision(qwenVLProcessor, -1),
		Now: pinnedNow, RandomStop: true, Seed: 11})
	for _, isl := range []int{60, 0} {
		for _, target := range cachebust.Targets() {
			t.Run(fmt.Sprintf("isl=%d/%s", isl, target), func(t *testing.T) {
				p, m := probeModel(t, "", endpoint.Chat, target)
				mv := *m
				mv.Vision = serverprofile.LoadVision(qwenVLProcessor, -1)
				d, err := compose.NewDataset(p, &mv, compose.DatasetOptions{OSL: 16, Seed: 3, BenchmarkID: testutil.SeedBenchmarkID(3), Model: "m", Workers: 1, ISL: isl, Live: true})
				if err != nil {
					t.Fatal(err)
				}
				convs := composedRecords(t, func(ctx context.Context, w *jsonl.Writer) error { return d.Run(ctx, w, dialogs) })
				if len(convs) != 3 {
					t.Fatalf("%d conversations (skipped %v)", len(convs), d.Skipped())
				}
				f, err := exact.ComposedFor(convs)
				if err != nil {
					t.Fatal(err)
				}
				em, err := exact.LoadModel(*f, model.Options{}, "")
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				sum, err := Run(context.Background(), &out, convs, newBuilder(t, PayloadOptions{Stream: true}),
					Config{URL: srv.URL(), Endpoint: endpoint.Chat, Timeout: time.Minute, Concurrency: 2}, Wiring{Sizer: exact.NewSizer(em, serverprofile.VLLM)})
				if err != nil || sum.Failed != 0 {
					t.Fatalf("%+v %v", sum, err)
				}
				recs := liveRecords(t, &out)
				if len(recs) != 9 {
					t.Fatalf("%d records, want 9", len(recs))
				}
				checkExact(t, endpoint.Chat, recs)
			})
		}
	}
}
