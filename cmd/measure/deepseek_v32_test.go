package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// TestMeasureDeepSeekV32: measure --server vllm counts every body of the
// DeepSeek-V3.2 corpus as DeepSeek's encoder and the Python tokenizers
// package do (internal/serverprofile/testdata/deepseek-v32-expect.jsonl.gz,
// written by scripts/renderers/deepseek-v32-ref.py), the renderer chosen
// by the folder's config.json model_type, and says so in isl.renderer; a
// body the encoder raises on is an isl.error, still written back.
func TestMeasureDeepSeekV32(t *testing.T) {
	measureDeepSeekV32(t, "vllm", "deepseek-v32-expect.jsonl.gz", 0)
}

// TestMeasureDeepSeekV32SGLang: measure --server sglang counts every body
// of the SGLang DeepSeek-V3.2 corpus as SGLang 0.5.23's own serving code
// does (deepseek-v32-sglang-expect.jsonl.gz, written by
// scripts/renderers/deepseek-v32-sglang-ref.py), with SGLang's variant of
// the encoder chosen by the model type; the one body islkit refuses by
// name (continue_final_message) is an isl.error, written back.
func TestMeasureDeepSeekV32SGLang(t *testing.T) {
	measureDeepSeekV32(t, "sglang", "deepseek-v32-sglang-expect.jsonl.gz", 1)
}

// measureDeepSeekV32 runs measure --server server over file's bodies and
// checks each count; refused is how many bodies the reference renders
// that islkit refuses by name.
func measureDeepSeekV32(t *testing.T, server, file string, refused int) {
	_, cases := rendererExpectations(t, file)
	var in strings.Builder
	var want []int // -1: the encoder raises
	for _, c := range cases {
		in.Write(c.Body)
		in.WriteByte('\n')
		if c.Error != "" {
			c.Count = -1
		}
		want = append(want, c.Count)
	}
	code, out, errs := runCLI(in.String(), "--tokenizer", testutil.DeepSeekV32Model(t), "--server", server,
		"--apply-chat-template", "--workers", "1")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d records out, %d in", len(lines), len(want))
	}
	notCounted := 0
	for i, l := range lines {
		var r struct {
			ISL struct {
				Templated *int   `json:"templated"`
				Renderer  string `json:"renderer"`
				Error     string `json:"error"`
			} `json:"isl"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if i < 5 {
			testutil.ValidateSchema(t, "measurement.schema.json", []byte(l))
		}
		if want[i] < 0 {
			if r.ISL.Templated != nil {
				t.Errorf("body %d: templated %d, the encoder raises", i+1, *r.ISL.Templated)
			}
			continue
		}
		if r.ISL.Templated == nil && r.ISL.Error != "" && notCounted < refused {
			notCounted++
			continue
		}
		if r.ISL.Templated == nil || *r.ISL.Templated != want[i] || r.ISL.Renderer != "deepseek_v32" {
			t.Errorf("body %d: templated %v renderer %q error %q, %s %d", i+1, r.ISL.Templated, r.ISL.Renderer, r.ISL.Error, server, want[i])
		}
	}
	if notCounted != refused {
		t.Errorf("%d bodies refused by name, want %d", notCounted, refused)
	}
}
