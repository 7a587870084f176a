package tokenizer

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/tokenizer/regex"
)

// tekkenDoc writes a small tekken.json: the 256 bytes and extra tokens as
// ranks, under config (JSON members) and top-level extras.
func tekkenDoc(config string, extra []string, top string) []byte {
	var vocab []string
	for i, tok := range append(byteStrings(), extra...) {
		vocab = append(vocab, fmt.Sprintf(`{"rank":%d,"token_bytes":%q,"token_str":null}`, i, base64.StdEncoding.EncodeToString([]byte(tok))))
	}
	return []byte(`{"config":{` + config + `},"vocab":[` + strings.Join(vocab, ",") + `]` + top + `}`)
}

func byteStrings() []string {
	out := make([]string, 256)
	for b := range out {
		out[b] = string([]byte{byte(b)})
	}
	return out
}

const goodTekkenConfig = `"pattern":"\\p{L}+| ?\\p{L}+|\\s+|.","num_vocab_tokens":258,"default_vocab_size":261,"default_num_special_tokens":3,"version":"v3"`

// tiktokenDoc writes a tiktoken file with the 256 bytes and extra lines.
func tiktokenDoc(extra ...string) []byte {
	var b bytes.Buffer
	for i, tok := range byteStrings() {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte(tok)), i)
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	return b.Bytes()
}

// TestTekkenBadInput: every malformed, enormous or hostile tekken.json is
// refused with the field named, quickly.
func TestTekkenBadInput(t *testing.T) {
	good := tekkenDoc(goodTekkenConfig, []string{"ab", "abc"}, "")
	if tk, err := FromTekken(good); err != nil {
		t.Fatalf("the good file: %v", err)
	} else if got := tk.Encode("abc ab"); fmt.Sprint(got) != "[260 35 259]" {
		t.Fatalf("the good file encodes %v", got) // ranks 257, 32, 256 + 3
	}
	swap := func(old, new string) []byte { return bytes.Replace(good, []byte(old), []byte(new), 1) }
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"not json", []byte(`{"config": `), "not a valid tekken.json"},
		{"no config", []byte(`{"vocab": []}`), "config: missing"},
		{"a tokenizer.json", []byte(`{"model": {"type": "BPE"}}`), "config: missing"},
		{"version", swap(`"version":"v3"`, `"version":"v99"`), "config.version"},
		{"no vocab size", swap(`"default_vocab_size":261,`, ``), "config.default_vocab_size: missing"},
		{"vocab size past the vocab", swap(`"default_vocab_size":261`, `"default_vocab_size":262`), "config.default_vocab_size"},
		{"vocab size below the specials", swap(`"default_vocab_size":261`, `"default_vocab_size":2`), "config.default_vocab_size"},
		{"enormous special count", swap(`"default_num_special_tokens":3`, `"default_num_special_tokens":1000000000000`), "config.default_num_special_tokens"},
		{"negative special count", swap(`"default_num_special_tokens":3`, `"default_num_special_tokens":-1`), "config.default_num_special_tokens"},
		{"specials far past the vocab", swap(`"default_vocab_size":261,"default_num_special_tokens":3`, `"default_vocab_size":1000258,"default_num_special_tokens":1000000`), "ids: the largest"},
		{"rank out of order", swap(`"rank":5,`, `"rank":6,`), "vocab[5].rank"},
		{"bad base64", swap(`"token_bytes":"AQ=="`, `"token_bytes":"!!"`), "vocab[1].token_bytes"},
		{"first ranks not the bytes", swap(`"token_bytes":"AQ=="`, `"token_bytes":"Ag=="`), "vocab[1].token_bytes"},
		{"token twice", tekkenDoc(goodTekkenConfig, []string{"ab", "ab"}, ""), "vocab: token"},
		{"enormous token", tekkenDoc(goodTekkenConfig, []string{"ab", strings.Repeat("x", 5000)}, ""), "vocab[257].token_bytes"},
		{"empty pattern", swap(`"pattern":"\\p{L}+| ?\\p{L}+|\\s+|."`, `"pattern":""`), "config.pattern"},
		{"bad pattern", swap(`"pattern":"\\p{L}+| ?\\p{L}+|\\s+|."`, `"pattern":"(a"`), "config.pattern"},
		{"unreproduced pattern", swap(`"pattern":"\\p{L}+| ?\\p{L}+|\\s+|."`, `"pattern":"\\p{Han}+|."`), "config.pattern"},
		{"special twice", tekkenDoc(goodTekkenConfig, []string{"ab", "abc"}, `,"special_tokens":[{"rank":0,"token_str":"<s>","is_control":true},{"rank":1,"token_str":"<s>","is_control":true}]`), "special_tokens[1].token_str"},
		{"too many specials", tekkenDoc(goodTekkenConfig, []string{"ab", "abc"}, `,"special_tokens":[{"rank":0,"token_str":"a"},{"rank":1,"token_str":"b"},{"rank":2,"token_str":"c"},{"rank":3,"token_str":"d"}]`), "special_tokens: 4"},
		{"v13 without specials", swap(`"version":"v3"`, `"version":"v13"`), "special_tokens: missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := FromTekken(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %q", err, c.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestTiktokenBadInput: every malformed, enormous or hostile tiktoken file
// is refused with the line and field named, quickly.
func TestTiktokenBadInput(t *testing.T) {
	cfg := TiktokenConfig{Pattern: `\p{L}+| ?\p{L}+|\s+|.`, Special: map[string]int{"<|x|>": 300}}
	ab := base64.StdEncoding.EncodeToString([]byte("ab"))
	if tk, err := FromTiktoken(tiktokenDoc(ab+" 256"), cfg); err != nil {
		t.Fatalf("the good file: %v", err)
	} else if got := tk.Encode("ab b<|x|>"); fmt.Sprint(got) != "[256 32 98 300]" {
		t.Fatalf("the good file encodes %v", got)
	}
	cases := []struct {
		name string
		data []byte
		cfg  TiktokenConfig
		want string
	}{
		{"empty", nil, cfg, "no tokens"},
		{"three fields", tiktokenDoc(ab + " 256 7"), cfg, "line 257: 3 fields"},
		{"one field", tiktokenDoc(ab), cfg, "line 257: 1 fields"},
		{"bad base64", tiktokenDoc("!!! 256"), cfg, "line 257: token"},
		{"rank not a number", tiktokenDoc(ab + " x"), cfg, "line 257: rank"},
		{"negative rank", tiktokenDoc(ab + " -1"), cfg, "line 257: rank"},
		{"enormous rank", tiktokenDoc(ab + " 99999999999999999999"), cfg, "line 257: rank"},
		{"sparse ranks", tiktokenDoc(ab + " 16000000"), cfg, "ranks: the largest"},
		{"rank twice", tiktokenDoc(ab + " 255"), cfg, "id 255 is given twice"},
		{"token twice", tiktokenDoc(ab+" 256", ab+" 257"), cfg, "has ids 256 and 257"},
		{"enormous token", tiktokenDoc(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 5000)) + " 256"), cfg, "line 257: token"},
		{"a byte missing", bytes.Replace(tiktokenDoc(ab+" 256"), []byte("AA== 0\n"), nil, 1), cfg, "byte 0x00 is not a token"},
		{"no pattern", tiktokenDoc(ab + " 256"), TiktokenConfig{}, "pattern: empty"},
		{"bad special", tiktokenDoc(ab + " 256"), TiktokenConfig{Pattern: cfg.Pattern, Special: map[string]int{"": 300}}, "special token"},
		{"a tokenizer.json", []byte(`{"model": {"type": "BPE", "vocab": {}}}`), cfg, "line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := FromTiktoken(c.data, c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %q", err, c.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestRanksSplitWorkBounded: tokens long enough that finding their splits
// would take minutes are refused before the work.
func TestRanksSplitWorkBounded(t *testing.T) {
	var lines []string
	for i := 0; i < 3000; i++ {
		tok := fmt.Sprintf("%04d", i) + strings.Repeat("y", 1000)
		lines = append(lines, base64.StdEncoding.EncodeToString([]byte(tok))+fmt.Sprintf(" %d", 256+i))
	}
	start := time.Now()
	_, err := FromTiktoken(tiktokenDoc(lines...), TiktokenConfig{Pattern: "."})
	if err == nil || !strings.Contains(err.Error(), "tokens too long in all") {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// FuzzFromTekken and FuzzFromTiktoken feed rank files, which come from
// model repos anyone can publish: a file is refused or gives a tokenizer
// that encodes without panicking (a hostile pattern's regex timeout
// aside), with Count agreeing with Encode.
func FuzzFromTekken(f *testing.F) {
	f.Add(tekkenDoc(goodTekkenConfig, []string{"ab", "abc"}, ""), "abc ab é")
	f.Add([]byte(`{"config":{"pattern":".","default_vocab_size":1,"default_num_special_tokens":0,"version":"v7"},"vocab":[{"rank":0,"token_bytes":"AA==","token_str":null}]}`), "x")
	fuzzRanks(f, func(data []byte) (*Tokenizer, error) { return FromTekken(data) })
}

func FuzzFromTiktoken(f *testing.F) {
	f.Add(tiktokenDoc(base64.StdEncoding.EncodeToString([]byte("ab"))+" 256"), "abc ab<|x|> é")
	f.Add([]byte("YQ== 0\n"), "a")
	cfg := TiktokenConfig{Pattern: `\p{L}+| ?\p{L}+|\s+|.`, Special: map[string]int{"<|x|>": 300}}
	fuzzRanks(f, func(data []byte) (*Tokenizer, error) { return FromTiktoken(data, cfg) })
}

func fuzzRanks(f *testing.F, load func([]byte) (*Tokenizer, error)) {
	defer func(d time.Duration) { regex.MatchTimeout = d }(regex.MatchTimeout)
	regex.MatchTimeout = 100 * time.Millisecond
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tk, err := load(data)
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
		tk.Decode(ids, false)
	})
}
