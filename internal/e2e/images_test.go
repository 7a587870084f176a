package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestImagesPipeline: compose --images | send | measure on a Qwen2.5-VL
// model folder (Qwen3's tokenizer, Qwen2.5-VL's processor configuration),
// chat and Responses: send's dry run carries every composed image as a
// data URL, and against the test server (counting images as vLLM does)
// every request's usage is measure's count, and a first request's its
// target_isl.
func TestImagesPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	dir := t.TempDir()
	for _, n := range []string{"tokenizer.json", "tokenizer_config.json"} {
		copyFile(t, filepath.Join(testutil.RefModel(t, "qwen3"), n), filepath.Join(dir, n))
	}
	for _, n := range []string{"config.json", "preprocessor_config.json"} {
		copyFile(t, filepath.Join("..", "vision", "testdata", "configs", "qwen2_5_vl", n), filepath.Join(dir, n))
	}
	src, err := modelsrc.Resolve(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := testserver.StartTest(t, testserver.Config{Model: src, Vision: serverprofile.LoadVision(dir, 4), RandomStop: true, Seed: 3})
	for _, ep := range []string{"chat", "responses"} {
		t.Run(ep, func(t *testing.T) {
			out := t.TempDir()
			script := `set -eo pipefail
"$0/probe" --tokenizer "$1" --apply-chat-template --endpoint $2 --cache-bust first_turn_prefix --now 2025-07-10T12:00:00 \
  | "$0/compose" --tokenizer "$1" --isl 1200 --osl 30 --turns 2 --conversations 3 --seed 4 --model m \
      --images 2 --images-stddev 1 --image-size 400x300 --image-format jpeg --limit-mm-per-prompt image=4 > "$3/convs.jsonl"
"$0/send" --dry-run < "$3/convs.jsonl" > "$3/dry.jsonl"
"$0/send" --url "$4" --concurrency 2 < "$3/convs.jsonl" | "$0/measure" --tokenizer "$1" --apply-chat-template > "$3/measured.jsonl"`
			cmd := exec.Command("bash", "-c", script, bin, dir, ep, out, srv.URL())
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("pipeline: %v\n%s", err, stderr.String())
			}
			convs := readFile(t, filepath.Join(out, "convs.jsonl"))
			dry := readFile(t, filepath.Join(out, "dry.jsonl"))
			images := 0
			for _, line := range testutil.ReadJSONL[struct {
				Turns []struct {
					Images []struct{ URL string } `json:"images"`
				} `json:"turns"`
			}](t, filepath.Join(out, "convs.jsonl")) {
				for _, turn := range line.Turns {
					for _, im := range turn.Images {
						images++
						if !strings.Contains(dry, `"`+im.URL+`"`) {
							t.Fatalf("an image of the conversations is not in the dry run")
						}
					}
				}
			}
			if images == 0 || !strings.Contains(convs, "data:image/jpeg;base64,") {
				t.Fatalf("no images composed")
			}
			lines := withoutRunRecord(testutil.ReadJSONL[json.RawMessage](t, filepath.Join(out, "measured.jsonl")))
			if len(lines) != 6 {
				t.Fatalf("%d records", len(lines))
			}
			for _, line := range lines {
				testutil.ValidateSchema(t, "measurement.schema.json", line)
				var r struct {
					Turn   int `json:"turn"`
					Target int `json:"target_isl"`
					ISL    struct {
						Templated *int `json:"templated"`
						Server    *int `json:"server"`
					} `json:"isl"`
				}
				if err := json.Unmarshal(line, &r); err != nil {
					t.Fatal(err)
				}
				// Later turns carry the server's replies (shorter than
				// max_tokens: -random-stop), so only first turns are at
				// their target without send --exact.
				if r.ISL.Server == nil || r.ISL.Templated == nil || *r.ISL.Server != *r.ISL.Templated || r.Turn == 0 && *r.ISL.Server != r.Target {
					t.Errorf("turn %d, target %d: server %s, templated %s", r.Turn, r.Target, ptr(r.ISL.Server), ptr(r.ISL.Templated))
				}
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	if err := os.WriteFile(to, []byte(readFile(t, from)), 0o644); err != nil {
		t.Fatal(err)
	}
}
