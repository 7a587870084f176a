package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// tiktoken vocabularies (OpenAI's *.tiktoken files, Kimi's tiktoken.model,
// Mistral's tekken.json) are ranked byte strings: a text is split by a
// regex, each piece that is a token is that token, and any other piece is
// merged from its bytes by repeatedly joining the adjacent pair whose join
// has the lowest rank (leftmost on ties). That is a byte-level BPE whose
// merges are every split of every token into two tokens, ranked by the
// joined token, with ignore_merges — the form Hugging Face's converters
// give these vocabularies in tokenizer.json (gpt-oss, Llama 3), which this
// package already encodes exactly; so a rank file is built into that form.

// Limits on rank files, far above any real vocabulary; a file past them
// is refused before it costs memory.
const (
	maxRankTokens   = 1 << 22
	maxRankTokenLen = 1 << 10
	// maxSplitWork bounds Σ len(token)², the bytes hashed finding every
	// token's splits (real vocabularies: about 10⁷).
	maxSplitWork  = 1 << 31
	maxRank       = 1 << 24
	maxPatternLen = 1 << 14
	maxSpecials   = 1 << 20
)

// rankToken is one token of a rank file: its bytes and its id.
type rankToken struct {
	bytes string
	id    int
}

// fromRanks builds the tokenizer of a rank vocabulary: tokens (ids are the
// ranks plus any offset), the split pattern, and the special tokens matched
// in text (none for mistral-common, which never parses them from text).
func fromRanks(tokens []rankToken, pattern string, specials []AddedToken) (*Tokenizer, *fileJSON, error) {
	if pattern == "" {
		return nil, nil, errors.New("pattern: empty")
	}
	if len(pattern) > maxPatternLen {
		return nil, nil, fmt.Errorf("pattern: %d bytes, more than %d", len(pattern), maxPatternLen)
	}
	byBytes := make(map[string]int, len(tokens))
	top := -1
	for _, t := range tokens {
		if prev, dup := byBytes[t.bytes]; dup {
			return nil, nil, fmt.Errorf("token %q has ids %d and %d", t.bytes, prev, t.id)
		}
		byBytes[t.bytes] = t.id
		top = max(top, t.id)
	}
	if top >= 2*len(tokens)+256 {
		// Ids are laid out densely (as every real vocabulary's are).
		return nil, nil, fmt.Errorf("ids: the largest, %d, is far past the %d tokens", top, len(tokens))
	}
	for b := 0; b < 256; b++ {
		if _, ok := byBytes[string([]byte{byte(b)})]; !ok {
			// tiktoken starts every piece from its single bytes.
			return nil, nil, fmt.Errorf("the single byte 0x%02X is not a token", b)
		}
	}
	byID, known := make([]string, top+1), make([]bool, top+1)
	vocab := make(map[string]int, len(tokens))
	for _, t := range tokens {
		if known[t.id] {
			return nil, nil, fmt.Errorf("id %d is given twice", t.id)
		}
		tok := byteLevelMap(t.bytes)
		byID[t.id], known[t.id] = tok, true
		vocab[tok] = t.id
	}
	n, work := 0, 0
	for _, t := range tokens {
		n += max(len(t.bytes)-1, 0)
		work += len(t.bytes) * len(t.bytes)
	}
	if work > maxSplitWork {
		return nil, nil, fmt.Errorf("tokens too long in all: Σ length² is %d, more than %d", work, maxSplitWork)
	}
	mt := newMergeTable(n)
	for _, t := range tokens {
		for k := 1; k < len(t.bytes); k++ {
			a, okA := byBytes[t.bytes[:k]]
			b, okB := byBytes[t.bytes[k:]]
			if okA && okB {
				mt.put(pairKey(a, b), mergeValue{rank: int32(t.id), newID: int32(t.id)})
			}
		}
	}
	pre, err := json.Marshal(map[string]any{
		"type": "Sequence",
		"pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": pattern}, "behavior": "Isolated", "invert": false},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		},
	})
	if err != nil {
		return nil, nil, err
	}
	opts := bpeOptions{Type: "BPE", IgnoreMerges: true}
	modelJSON, _ := json.Marshal(opts)
	f := fileJSON{
		Version:      "1.0",
		AddedTokens:  specials,
		PreTokenizer: pre,
		Model:        modelJSON,
		Decoder:      json.RawMessage(`{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}`),
	}
	data, err := json.Marshal(f)
	if err != nil {
		return nil, nil, err
	}
	build := func(json.RawMessage) (model, error) {
		m, err := newBPEWith(opts, vocab, nil, byID, known)
		if err != nil {
			return nil, err
		}
		m.merges = mt
		return m, nil
	}
	tk, f2, err := fromJSON(data, build)
	if err != nil {
		// The pattern is the one part of a rank file fromJSON checks.
		return nil, nil, fmt.Errorf("pattern: %w", err)
	}
	return tk, f2, nil
}

// tekkenJSON is what mistral-common reads of a tekken.json.
type tekkenJSON struct {
	Config *struct {
		Pattern                 string `json:"pattern"`
		NumVocabTokens          *int   `json:"num_vocab_tokens"`
		DefaultVocabSize        *int   `json:"default_vocab_size"`
		DefaultNumSpecialTokens *int   `json:"default_num_special_tokens"`
		Version                 string `json:"version"`
	} `json:"config"`
	Vocab []struct {
		Rank       int     `json:"rank"`
		TokenBytes string  `json:"token_bytes"`
		TokenStr   *string `json:"token_str"`
	} `json:"vocab"`
	SpecialTokens []struct {
		Rank      int    `json:"rank"`
		TokenStr  string `json:"token_str"`
		IsControl bool   `json:"is_control"`
	} `json:"special_tokens"`
}

// tekkenVersions are the versions mistral-common knows (TokenizerVersion).
var tekkenVersions = []string{"v1", "v2", "v3", "v7", "v11", "v13", "v15"}

// FromTekken builds the tokenizer of a Mistral tekken.json as
// mistral-common's Tekkenizer.encode(text, bos=False, eos=False) encodes:
// the first default_vocab_size − default_num_special_tokens ranks, each
// id shifted by default_num_special_tokens (the special tokens take the
// ids below), special tokens never parsed from text.
func FromTekken(data []byte) (*Tokenizer, error) {
	t, _, err := fromTekken(data)
	return t, err
}

func fromTekken(data []byte) (*Tokenizer, *fileJSON, error) {
	var f tekkenJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("not a valid tekken.json: %w", err)
	}
	c := f.Config
	switch {
	case c == nil:
		return nil, nil, errors.New("config: missing (is this a tekken.json?)")
	case !slices.Contains(tekkenVersions, c.Version):
		return nil, nil, fmt.Errorf("config.version: %q is none of mistral-common's %v", c.Version, tekkenVersions)
	case c.DefaultVocabSize == nil:
		return nil, nil, errors.New("config.default_vocab_size: missing")
	case c.DefaultNumSpecialTokens == nil:
		return nil, nil, errors.New("config.default_num_special_tokens: missing")
	}
	numSpecial, vocabSize := *c.DefaultNumSpecialTokens, *c.DefaultVocabSize
	if numSpecial < 0 || numSpecial > maxSpecials {
		return nil, nil, fmt.Errorf("config.default_num_special_tokens: %d is not between 0 and %d", numSpecial, maxSpecials)
	}
	if len(f.Vocab) > maxRankTokens {
		return nil, nil, fmt.Errorf("vocab: %d tokens, more than %d", len(f.Vocab), maxRankTokens)
	}
	inner := vocabSize - numSpecial
	if vocabSize < numSpecial || inner > len(f.Vocab) {
		return nil, nil, fmt.Errorf("config.default_vocab_size: %d is not between default_num_special_tokens (%d) and that plus the %d vocab tokens", vocabSize, numSpecial, len(f.Vocab))
	}
	// Special tokens only need checking as mistral-common checks them: none
	// is ever parsed from text, and ids below numSpecial are theirs.
	if f.SpecialTokens == nil && c.Version != "v1" && c.Version != "v2" && c.Version != "v3" && c.Version != "v7" {
		return nil, nil, fmt.Errorf("special_tokens: missing, which mistral-common refuses for version %s", c.Version)
	}
	if len(f.SpecialTokens) > numSpecial {
		return nil, nil, fmt.Errorf("special_tokens: %d of them, more than default_num_special_tokens (%d)", len(f.SpecialTokens), numSpecial)
	}
	seen := make(map[string]bool, len(f.SpecialTokens))
	for i, s := range f.SpecialTokens {
		if seen[s.TokenStr] {
			return nil, nil, fmt.Errorf("special_tokens[%d].token_str: %q is given twice", i, s.TokenStr)
		}
		seen[s.TokenStr] = true
	}
	tokens := make([]rankToken, inner)
	for i, v := range f.Vocab[:inner] {
		if v.Rank != i {
			return nil, nil, fmt.Errorf("vocab[%d].rank: %d, want %d", i, v.Rank, i)
		}
		if base64.StdEncoding.DecodedLen(len(v.TokenBytes)) > maxRankTokenLen+3 {
			return nil, nil, fmt.Errorf("vocab[%d].token_bytes: %d characters, more than a token has", i, len(v.TokenBytes))
		}
		b, err := base64.StdEncoding.DecodeString(v.TokenBytes)
		if err != nil {
			return nil, nil, fmt.Errorf("vocab[%d].token_bytes: %w", i, err)
		}
		if i < 256 && !bytes.Equal(b, []byte{byte(i)}) {
			return nil, nil, fmt.Errorf("vocab[%d].token_bytes: %q, but the first 256 ranks are the bytes in order", i, b)
		}
		tokens[i] = rankToken{bytes: string(b), id: i + numSpecial}
	}
	t, fj, err := fromRanks(tokens, c.Pattern, nil)
	if err != nil {
		field := "vocab: "
		if strings.HasPrefix(err.Error(), "pattern:") {
			field = "config."
		}
		return nil, nil, fmt.Errorf("%s%w", field, err)
	}
	return t, fj, nil
}

// TiktokenConfig is what a tiktoken rank file leaves to the code that
// loads it: the split pattern and the special tokens (matched in text, as
// tiktoken's encode(text, allowed_special="all") and a Hugging Face
// tokenizer class over tiktoken match them).
type TiktokenConfig struct {
	Pattern string         `json:"pattern"`
	Special map[string]int `json:"special_tokens"`
}

// The split patterns of tiktoken's public encodings (tiktoken_ext/
// openai_public.py). cl100k_base's class (?i:[sdmt]) is written as the
// alternation it equals; its possessive quantifiers are still refused by
// the regex engine, by name. (Kimi's pattern is read from its own
// tokenization_kimi.py by modelsrc.)
const (
	cl100kPattern = `'(?i:s|d|m|t|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
	o200kPattern  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// TiktokenPreset returns the configuration of a named tiktoken encoding:
// "cl100k_base" and "o200k_base", tiktoken's, with their special tokens.
func TiktokenPreset(name string) (TiktokenConfig, bool) {
	switch name {
	case "cl100k_base":
		return TiktokenConfig{Pattern: cl100kPattern, Special: map[string]int{
			"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276,
		}}, true
	case "o200k_base":
		return TiktokenConfig{Pattern: o200kPattern, Special: map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018}}, true
	}
	return TiktokenConfig{}, false
}

// FromTiktoken builds the tokenizer of a tiktoken rank file ("base64 rank"
// per line, as tiktoken's load_tiktoken_bpe reads it) under cfg.
func FromTiktoken(data []byte, cfg TiktokenConfig) (*Tokenizer, error) {
	t, _, err := fromTiktoken(data, cfg)
	return t, err
}

func fromTiktoken(data []byte, cfg TiktokenConfig) (*Tokenizer, *fileJSON, error) {
	var tokens []rankToken
	for lineNo, rest := 1, data; len(rest) > 0; lineNo++ {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			continue // load_tiktoken_bpe skips empty lines
		}
		if len(fields) != 2 {
			return nil, nil, fmt.Errorf("line %d: %d fields, want \"base64-token rank\"", lineNo, len(fields))
		}
		if len(tokens) >= maxRankTokens {
			return nil, nil, fmt.Errorf("line %d: more than %d tokens", lineNo, maxRankTokens)
		}
		if base64.StdEncoding.DecodedLen(len(fields[0])) > maxRankTokenLen+3 {
			return nil, nil, fmt.Errorf("line %d: token: %d characters, more than a token has", lineNo, len(fields[0]))
		}
		tok, err := base64.StdEncoding.DecodeString(string(fields[0]))
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: token: %w", lineNo, err)
		}
		rank, err := strconv.Atoi(string(fields[1]))
		if err != nil || rank < 0 || rank > maxRank {
			return nil, nil, fmt.Errorf("line %d: rank: %q is not a number from 0 to %d", lineNo, fields[1], maxRank)
		}
		tokens = append(tokens, rankToken{bytes: string(tok), id: rank})
	}
	if len(tokens) == 0 {
		return nil, nil, errors.New("no tokens (is this a tiktoken file?)")
	}
	if len(cfg.Special) > maxSpecials {
		return nil, nil, fmt.Errorf("special tokens: %d, more than %d", len(cfg.Special), maxSpecials)
	}
	top := 0
	for _, t := range tokens {
		top = max(top, t.id)
	}
	if top >= 2*len(tokens)+256 {
		return nil, nil, fmt.Errorf("ranks: the largest, %d, is far past the %d tokens", top, len(tokens))
	}
	specials := make([]AddedToken, 0, len(cfg.Special))
	for content, id := range cfg.Special {
		if id < 0 || id > maxRank || content == "" || !utf8.ValidString(content) {
			return nil, nil, fmt.Errorf("special token %q: id %d or content is not valid", content, id)
		}
		specials = append(specials, AddedToken{ID: id, Content: content, Special: true})
	}
	slices.SortFunc(specials, func(a, b AddedToken) int { return a.ID - b.ID })
	return fromRanks(tokens, cfg.Pattern, specials)
}

// LoadTekken is FromTekken through the cache; sum is data's SHA-256.
func (c *Cache) LoadTekken(data []byte, sum [32]byte) (*Tokenizer, error) {
	return c.load(keyed(sum, "tekken"), func() (*Tokenizer, *fileJSON, error) { return fromTekken(data) })
}

// LoadTiktoken is FromTiktoken through the cache; sum is data's SHA-256.
// The configuration is part of the key.
func (c *Cache) LoadTiktoken(data []byte, sum [32]byte, cfg TiktokenConfig) (*Tokenizer, error) {
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return c.load(keyed(sum, "tiktoken\x00"+string(js)), func() (*Tokenizer, *fileJSON, error) { return fromTiktoken(data, cfg) })
}

// keyed derives the cache key of a model file read a given way.
func keyed(sum [32]byte, how string) [32]byte {
	return sha256.Sum256(append(sum[:], how...))
}
