package send

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send/exact"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
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
