package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testutil"
)

// serverHeader is the first line of an expectations file
// (testdata/vllm/expectations.jsonl.gz, testdata/sglang/...): the server
// that counted (vllm when absent), its versions and the day its clock
// rendered (templates that print the date).
type serverHeader struct {
	Kind     string            `json:"kind"`
	Server   string            `json:"server"`
	Versions map[string]string `json:"versions"`
	Now      string            `json:"now"`
}

// serverCase is one body and what the real server's code made of it: its
// prompt token count (vLLM's usage.prompt_tokens, input_tokens for
// Responses), or its refusal (an HTTP status, or an error).
type serverCase struct {
	Model        string          `json:"model"`
	Source       string          `json:"source"`
	Case         string          `json:"case"`
	Body         json.RawMessage `json:"body"`
	Endpoint     string          `json:"endpoint"`
	PromptTokens *int            `json:"prompt_tokens"`
	Status       int             `json:"status"`
	Error        string          `json:"error"`
}

func (c serverCase) name() string { return c.Model + "/" + c.Source + "/" + c.Case }

func (c serverCase) serverSays() string {
	if c.PromptTokens != nil {
		return strconv.Itoa(*c.PromptTokens)
	}
	return fmt.Sprintf("refused (%d: %.120s)", c.Status, c.Error)
}

// TestVLLMExpectations asserts, offline, that `measure --server vllm
// --apply-chat-template` counts every body of
// testdata/vllm/expectations.jsonl.gz exactly as a real vLLM server did:
// the golden wire cases, the server-profile bodies, completions and
// Responses bodies, and composed synthetic, dataset, trace and
// prefix-group dry runs, on every reference model; and refuses (fails the
// line of, or names the template's error for) every body vLLM refused.
// scripts/vllm-cpu.sh writes the file (`make vllm-reference`) and runs
// this test on a fresh count with ISLKIT_VLLM_EXPECTATIONS naming it.
func TestVLLMExpectations(t *testing.T) {
	checkServerExpectations(t, "ISLKIT_VLLM_EXPECTATIONS", filepath.Join("testdata", "vllm"), "vllm",
		// Every reference model: deepseek_v3 joined once its tiny model
		// got the real model_type (scripts/vllm/tiny_model.py says why).
		"deepseek_v3", "gptoss", "llama3", "llama3_1", "mistral7b", "mistral7b-metaspace", "qwen3")
}

// knownDifferences is DIR/known-differences.json: the bodies where measure
// and the server disagree, each with why (a key of reasons). The test
// fails when one of them starts to agree, so the list stays true; shrink
// it as the counting code follows the server.
type knownDifferences struct {
	Reasons map[string]string `json:"reasons"`
	Cases   map[string]string `json:"cases"`
}

// checkServerExpectations measures every body of DIR/expectations.jsonl.gz
// (env names a file that replaces it) as `measure --server server` and
// compares with the server's own count; each of models must have bodies.
func checkServerExpectations(t *testing.T, env, dir, server string, models ...string) {
	if testing.Short() {
		t.Skip("builds the tools and measures about a thousand bodies")
	}
	dir = filepath.Join(testutil.RepoRoot(t), dir)
	path := os.Getenv(env)
	if path == "" {
		path = filepath.Join(dir, "expectations.jsonl.gz")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && server != "vllm" {
			t.Skipf("%s absent: scripts/%s-cpu.sh update writes it", path, server)
		}
	}
	var kd knownDifferences
	if data, err := os.ReadFile(filepath.Join(dir, "known-differences.json")); err == nil {
		if err := json.Unmarshal(data, &kd); err != nil {
			t.Fatalf("%s/known-differences.json: %v", dir, err)
		}
	}
	known := map[string]string{}
	for name, key := range kd.Cases {
		why, ok := kd.Reasons[key]
		if !ok {
			t.Fatalf("%s/known-differences.json: case %s names reason %q, which reasons lacks", dir, name, key)
		}
		known[name] = why
	}
	header, cases := readServerExpectations(t, path)
	if header.Server == "" {
		header.Server = "vllm"
	}
	if header.Server != server {
		t.Fatalf("%s: counted by %q, want %q", path, header.Server, server)
	}
	t.Logf("%s: %d bodies counted by %v", path, len(cases), header.Versions)
	bin := buildTools(t)
	byModel := map[string][]serverCase{}
	for _, c := range cases {
		byModel[c.Model] = append(byModel[c.Model], c)
	}
	for _, m := range models {
		if len(byModel[m]) == 0 {
			t.Errorf("%s: no body of %s, which %s must have counted", path, m, server)
		}
	}
	var order []string
	for _, c := range cases {
		if !slices.Contains(order, c.Model) {
			order = append(order, c.Model)
		}
	}
	seen := map[string]bool{}
	for _, model := range order {
		t.Run(model, func(t *testing.T) {
			got := measureAs(t, bin, server, model, header.Now, byModel[model])
			equal := 0
			for i, c := range byModel[model] {
				seen[c.name()] = true
				agrees := got[i] == c.serverSays() || (c.PromptTokens == nil && strings.HasPrefix(got[i], "refused"))
				why, isKnown := known[c.name()]
				switch {
				case agrees && isKnown:
					t.Errorf("%s: measure now agrees with %s (%s); remove it from the known differences (%s)", c.name(), server, got[i], why)
				case agrees:
					equal++
				case isKnown:
					t.Logf("%s: known difference: %s %s, measure %s: %s", c.name(), server, c.serverSays(), got[i], why)
				default:
					t.Errorf("%s: %s %s, measure %s\n  body %s", c.name(), server, c.serverSays(), got[i], c.Body)
				}
			}
			t.Logf("%s: %d of %d bodies equal", model, equal, len(byModel[model]))
		})
	}
	for name := range known {
		if !seen[name] {
			t.Errorf("the known differences name %s, which the expectations do not hold", name)
		}
	}
}

// readServerExpectations reads the header and the cases of a (gzipped)
// expectations file.
func readServerExpectations(t *testing.T, path string) (serverHeader, []serverCase) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	var header serverHeader
	var cases []serverCase
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			if err := json.Unmarshal(sc.Bytes(), &header); err != nil || !strings.HasSuffix(header.Kind, "-expectations") || header.Now == "" {
				t.Fatalf("%s:1: want the islkit.*-expectations header with \"now\" (%v)", path, err)
			}
			continue
		}
		var c serverCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
		if c.Model == "" || len(c.Body) == 0 || (c.PromptTokens == nil && c.Status == 0) {
			t.Fatalf("%s:%d: want model, body and prompt_tokens or status", path, n)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return header, cases
}

// servedConfig is the config.json beside the tokenizer the server was
// given where the reference folder has none: the tiny DeepSeek-V3's
// tokenizer folder (scripts/vllm/tiny_model.py) has the real model's
// model_type, which transformers 5 keeps the tokenizer.json of
// (huggingface/transformers#45488; modelsrc.AsTransformers5).
var servedConfig = map[string]string{"deepseek_v3": `{"model_type": "deepseek_v3"}`}

// servedTokenizer is the reference model's folder as the server got it.
func servedTokenizer(t *testing.T, model string) string {
	dir := testutil.RefModel(t, model)
	cfg, ok := servedConfig[model]
	if !ok {
		return dir
	}
	out := filepath.Join(t.TempDir(), model)
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "config.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

var failedLine = regexp.MustCompile(`(?m)^measure: [^\n]*bodies\.jsonl:(\d+): (.*)$`)

// measureAs runs the built measure on the model's bodies, one a line,
// with the reference model, the server's profile and its day, and
// says for each body what measure made of it: its templated count, or
// "refused: reason" for a line measure failed or whose template raised.
func measureAs(t *testing.T, bin, server, model, now string, cases []serverCase) []string {
	t.Helper()
	bodies := filepath.Join(t.TempDir(), "bodies.jsonl")
	var in bytes.Buffer
	for _, c := range cases {
		in.Write(c.Body)
		in.WriteByte('\n')
	}
	if err := os.WriteFile(bodies, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "measure"), "--tokenizer", servedTokenizer(t, model),
		"--apply-chat-template", "--server", server, "--now", now, bodies)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	refused := map[int]string{}
	for _, m := range failedLine.FindAllStringSubmatch(stderr.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		refused[n] = m[2]
	}
	// measure prints the first 20 failed lines and counts the rest: more
	// would leave bodies unnamed.
	if len(refused) >= 20 {
		t.Fatalf("measure failed %d or more lines; split the run:\n%s", len(refused), stderr.String())
	}
	outs := bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n"))
	if len(outs) == 1 && len(outs[0]) == 0 {
		outs = nil
	}
	// measure writes every record back in its place, a refused one with
	// isl.error (and names its line on stderr).
	if len(outs) != len(cases) {
		t.Fatalf("measure wrote %d records of %d (failed %d lines):\n%s", len(outs), len(cases), len(refused), stderr.String())
	}
	got := make([]string, len(cases))
	for i, k := 0, 0; i < len(cases); i++ {
		if why, ok := refused[i+1]; ok {
			got[i] = "refused: " + why
			k++
			continue
		}
		var rec struct {
			ISL struct {
				Counted       string          `json:"counted"`
				Templated     *int            `json:"templated"`
				TemplateError json.RawMessage `json:"template_error"`
			} `json:"isl"`
		}
		if err := json.Unmarshal(outs[k], &rec); err != nil {
			t.Fatalf("measure's record %d: %v", k+1, err)
		}
		k++
		// A template that raises is a refusal at the server (vLLM answers
		// 400 with the template's error); measure counts the line bare and
		// names the error.
		if len(rec.ISL.TemplateError) > 0 {
			got[i] = "refused: template error " + string(rec.ISL.TemplateError)
			continue
		}
		if rec.ISL.Counted != "templated" || rec.ISL.Templated == nil {
			got[i] = fmt.Sprintf("not templated (%s)", outs[k-1])
			continue
		}
		got[i] = strconv.Itoa(*rec.ISL.Templated)
	}
	return got
}

// TestSGLangExpectations asserts, offline, that `measure --server sglang
// --apply-chat-template` counts every chat body of
// testdata/sglang/expectations.jsonl.gz as SGLang's own chat handler did
// (scripts/sglang-cpu.sh; ISLKIT_SGLANG_EXPECTATIONS names a fresh count).
func TestSGLangExpectations(t *testing.T) {
	checkServerExpectations(t, "ISLKIT_SGLANG_EXPECTATIONS", filepath.Join("testdata", "sglang"), "sglang")
}
