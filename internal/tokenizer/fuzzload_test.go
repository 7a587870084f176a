package tokenizer

import (
	"errors"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/tokenizer/regex"
)

// loadSeeds are small tokenizer.json files covering each model type and
// the pipeline components FromJSON builds.
var loadSeeds = []string{
	`{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,"model":` + wordLevelABC + `,"post_processor":null,"decoder":null}`,
	`{"version":"1.0","added_tokens":[{"id":15,"content":"[X]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],` +
		`"normalizer":{"type":"Sequence","normalizers":[{"type":"NFC"},{"type":"Lowercase"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},` +
		`"pre_tokenizer":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true},"model":` + wordLevelABC +
		`,"post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"[X]","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{"[X]":{"id":"[X]","ids":[15],"tokens":["[X]"]}}},` +
		`"decoder":{"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true}}`,
	`{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},` +
		`"model":{"type":"BPE","unk_token":null,"fuse_unk":false,"byte_fallback":false,"vocab":{"a":0,"b":1,"ab":2,"Ġ":3,"Ġa":4},"merges":["a b","Ġ a"]},` +
		`"post_processor":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},"decoder":{"type":"ByteLevel"}}`,
	`{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":"\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"},"behavior":"Isolated","invert":false},{"type":"Digits","individual_digits":true}]},` +
		`"model":{"type":"BPE","unk_token":"<unk>","fuse_unk":true,"byte_fallback":true,"vocab":{"<unk>":0,"<0xC3>":1,"<0xA9>":2,"a":3,"b":4,"ab":5},"merges":[["a","b"]]},"post_processor":null,"decoder":{"type":"Sequence","decoders":[{"type":"ByteFallback"},{"type":"Fuse"}]}}`,
	`{"version":"1.0","added_tokens":[],"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},"pre_tokenizer":{"type":"Whitespace"},` +
		`"model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{"[UNK]":0,"un":1,"##aff":2,"##able":3,"aff":4}},"post_processor":null,"decoder":{"type":"WordPiece","prefix":"##","cleanup":true}}`,
	`{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,"model":{"type":"Unigram","unk_id":0,"byte_fallback":true,"vocab":[["<unk>",0],["a",-1],["b",-1],["<0x78>",-5]]},"post_processor":null,"decoder":null}`,
	`{"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"Split","pattern":{"Regex":"(a+)+b"},"behavior":"Isolated","invert":false},"model":` + wordLevelABC + `,"post_processor":null,"decoder":null}`,
	`{"model":null}`, `{}`, `[]`, `{"model":{"type":"BPE","vocab":{"a":0},"merges":["a a"]}}`,
}

// FuzzFromJSON feeds tokenizer.json files, which come from model repos
// anyone can publish: FromJSON either refuses a file or returns a tokenizer
// that encodes without panicking (a regex timeout aside, which is how a
// hostile Split pattern ends), with Count agreeing with Encode.
func FuzzFromJSON(f *testing.F) {
	for _, s := range loadSeeds {
		f.Add([]byte(s), "ab abc A1 12! [X] é")
	}
	defer func(d time.Duration) { regex.MatchTimeout = d }(regex.MatchTimeout)
	regex.MatchTimeout = 100 * time.Millisecond
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tk, err := FromJSON(data)
		if err != nil {
			return
		}
		defer func() {
			if p := recover(); p != nil {
				var te *regex.TimeoutError
				if err, ok := p.(error); !ok || !errors.As(err, &te) {
					panic(p)
				}
			}
		}()
		ids := tk.Encode(text)
		if n := tk.Count(text); n != len(ids) {
			t.Fatalf("Count %d, len(Encode) %d", n, len(ids))
		}
		tk.EncodeWithSpecialTokens(text)
		tk.Decode(ids, false)
		tk.Decode(ids, true)
	})
}
