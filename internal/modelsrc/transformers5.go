package modelsrc

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	json "github.com/goccy/go-json"
)

// Transformers5Issue names the transformers bug the vllm profile follows
// (Source.AsTransformers5): transformers 5 rebuilds a Llama-class
// tokenizer's pipeline instead of reading tokenizer.json's.
const Transformers5Issue = "huggingface/transformers#45488"

// Transformers5Llama is the records.ModelPin.TokenizerBuild of a tokenizer
// rebuilt as transformers 5 builds a LlamaTokenizer(Fast).
const Transformers5Llama = "transformers5-llama"

// modelsWithIncorrectHubTokenizerClass is transformers 5.19's
// MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS (models/auto/tokenization_auto.py):
// for these config.json model_types transformers keeps tokenizer.json as
// it is whatever class tokenizer_config.json names.
var modelsWithIncorrectHubTokenizerClass = map[string]bool{
	"arctic": true, "chameleon": true, "chatlm": true, "deepseek_v2": true, "deepseek_v3": true,
	"deepseek_v32": true, "deepseek_v4": true, "deepseek_vl": true, "deepseek_vl_hybrid": true,
	"deepseek_vl_v2": true, "deepseek_ocr": true, "deepseek_ocr2": true, "ernie4_5": true,
	"ernie4_5_moe": true, "fuyu": true, "h2ovl_chat": true, "hyperclovax": true, "hyperclovax_vlm": true,
	"hyperclovax_vision_v2": true, "internlm2": true, "jamba": true, "janus": true, "llava": true,
	"llava_next": true, "minicpm3": true, "minicpmv": true, "minimax_m2": true, "modernbert": true,
	"modernbert-decoder": true, "molmo": true, "molmo2": true, "nemotron": true, "nvfp4": true,
	"opencua": true, "openvla": true, "paddleocr_vl": true, "phi3": true, "phi3_v": true, "phimoe": true,
	"qwen2": true, "qwen3_5": true, "qwen3_5_moe": true, "qwen3_5_moe_text": true, "qwen4_exp": true,
	"step3p5": true, "step3_vl": true, "vipllava": true, "cohere_asr": true, "camembertv2-base": true,
	"smolvlm": true,
}

// modelIDsToTokenizersBackend is transformers 5.19's
// MODEL_IDS_TO_TOKENIZERS_BACKEND: Hub ids (lowercased, fnmatch) whose
// tokenizer.json is kept as it is.
var modelIDsToTokenizersBackend = []string{
	"deepseek-ai/deepseek-r1-distill-llama-*", "deepseek-ai/deepseek-coder-*", "allenai/dolma2-tokenizer",
	"google/umt5-small", "naver-clova-ix/donut-*", "salesforce/blip2-opt-*", "salesforce/blip2-flan-t5-*",
	"salesforce/instructblip-flan-t5-*", "stepfun-ai/step-3.7-*",
}

// transformers5Rebuilds says whether transformers 5 (5.16 to 5.19, the
// ones vLLM 0.32 allows) builds this model's tokenizer as
// LlamaTokenizer(Fast), not from tokenizer.json: tokenizer_config.json
// names that class, no auto_map names remote code, config.json's
// model_type is not one transformers knows to be wrong about, and the Hub
// id is not one it keeps. A folder without tokenizer_config.json is read
// as it is.
func (s *Source) transformers5Rebuilds() (bool, error) {
	raw, err := fs.ReadFile(s.FS, "tokenizer_config.json")
	if err != nil {
		return false, nil
	}
	var tc struct {
		TokenizerClass string          `json:"tokenizer_class"`
		AutoMap        json.RawMessage `json:"auto_map"`
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return false, fmt.Errorf("%s: %w", s.fileName("tokenizer_config.json"), err)
	}
	if tc.TokenizerClass != "LlamaTokenizer" && tc.TokenizerClass != "LlamaTokenizerFast" {
		return false, nil
	}
	if len(tc.AutoMap) > 0 && string(tc.AutoMap) != "null" {
		return false, nil
	}
	if cfg, err := fs.ReadFile(s.FS, "config.json"); err == nil {
		var c struct {
			ModelType string `json:"model_type"`
		}
		if err := json.Unmarshal(cfg, &c); err != nil {
			return false, fmt.Errorf("%s: %w", s.fileName("config.json"), err)
		}
		if modelsWithIncorrectHubTokenizerClass[c.ModelType] {
			return false, nil
		}
	}
	id, _, _ := strings.Cut(strings.ToLower(s.Name), "@")
	for _, p := range modelIDsToTokenizersBackend {
		if ok, _ := path.Match(p, id); ok {
			return false, nil
		}
	}
	return true, nil
}

func (s *Source) fileName(name string) string {
	if s.Dir == "" {
		return s.Name + "/" + name
	}
	return s.Dir + "/" + name
}

// transformers5Llama rewrites tokenizer.json as transformers 5's
// LlamaTokenizer builds it (models/llama/tokenization_llama.py): the
// vocabulary and merges of its BPE model in a new BPE (fuse_unk,
// byte_fallback, no unk_token), no normalizer, a Metaspace pre-tokenizer
// (prepend_scheme from add_prefix_space and legacy, as
// _get_prepend_scheme), and its decoder; added tokens and the post-processor
// stay the file's. ok is false for a tokenizer.json whose model is not BPE.
func transformers5Llama(tokenizerJSON, tokenizerConfig []byte) (out []byte, ok bool, err error) {
	var file map[string]json.RawMessage
	if err := json.Unmarshal(tokenizerJSON, &file); err != nil {
		return nil, false, err
	}
	var model struct {
		Type   string          `json:"type"`
		Vocab  json.RawMessage `json:"vocab"`
		Merges json.RawMessage `json:"merges"`
	}
	if err := json.Unmarshal(file["model"], &model); err != nil {
		return nil, false, fmt.Errorf("model: %w", err)
	}
	if model.Type != "BPE" {
		return nil, false, nil
	}
	var tc struct {
		AddPrefixSpace *bool `json:"add_prefix_space"`
		Legacy         *bool `json:"legacy"`
	}
	if len(tokenizerConfig) > 0 {
		if err := json.Unmarshal(tokenizerConfig, &tc); err != nil {
			return nil, false, fmt.Errorf("tokenizer_config.json: %w", err)
		}
	}
	addPrefixSpace := tc.AddPrefixSpace == nil || *tc.AddPrefixSpace
	prepend := "never"
	if addPrefixSpace {
		prepend = "first" // LlamaTokenizer's legacy defaults to False
		if tc.Legacy != nil && *tc.Legacy {
			prepend = "always"
		}
	}
	merges := model.Merges
	if len(merges) == 0 {
		merges = json.RawMessage("[]")
	}
	newModel, err := json.Marshal(map[string]any{
		"type": "BPE", "dropout": nil, "unk_token": nil, "continuing_subword_prefix": nil,
		"end_of_word_suffix": nil, "fuse_unk": true, "byte_fallback": true, "ignore_merges": false,
		"vocab": model.Vocab, "merges": merges,
	})
	if err != nil {
		return nil, false, err
	}
	decoders := []any{
		map[string]any{"type": "Replace", "pattern": map[string]string{"String": "▁"}, "content": " "},
		map[string]any{"type": "ByteFallback"},
		map[string]any{"type": "Fuse"},
	}
	if addPrefixSpace {
		decoders = append(decoders, map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0})
	}
	set := func(key string, v any) error {
		b, err := json.Marshal(v)
		file[key] = b
		return err
	}
	file["model"] = newModel
	if err := set("normalizer", nil); err != nil {
		return nil, false, err
	}
	if err := set("pre_tokenizer", map[string]any{"type": "Metaspace", "replacement": "▁", "prepend_scheme": prepend, "split": false}); err != nil {
		return nil, false, err
	}
	if err := set("decoder", map[string]any{"type": "Sequence", "decoders": decoders}); err != nil {
		return nil, false, err
	}
	out, err = json.Marshal(file)
	return out, true, err
}
