package tokenizer

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/islkit/islkit/internal/testutil"
)

// spPieceBytes is a serialized ModelProto.SentencePiece.
func spPieceBytes(piece string, score float32, typ int) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, piece)
	b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, math.Float32bits(score))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(typ))
}

// tinySentencePiece is a BPE ModelProto: <unk>, <s>, </s>, the 256 byte
// pieces (ids 3..258), then "▁" 259, "a" 260, "b" 261, "▁a" 262 (score
// -1) and "ab" 263 (score abScore), byte_fallback on, the identity
// normalizer with add_dummy_prefix and no extra-whitespace removal.
func tinySentencePiece(abScore float32, modelType int) []byte {
	var m []byte
	add := func(p []byte) {
		m = protowire.AppendTag(m, 1, protowire.BytesType)
		m = protowire.AppendBytes(m, p)
	}
	add(spPieceBytes("<unk>", 0, spUnknown))
	add(spPieceBytes("<s>", 0, spControl))
	add(spPieceBytes("</s>", 0, spControl))
	for b := 0; b < 256; b++ {
		add(spPieceBytes(fmt.Sprintf("<0x%02X>", b), 0, spByte))
	}
	add(spPieceBytes("▁", -3, spNormal))
	add(spPieceBytes("a", -4, spNormal))
	add(spPieceBytes("b", -5, spNormal))
	add(spPieceBytes("▁a", -1, spNormal))
	add(spPieceBytes("ab", abScore, spNormal))
	var ts []byte
	ts = protowire.AppendTag(ts, 3, protowire.VarintType)
	ts = protowire.AppendVarint(ts, uint64(modelType))
	ts = protowire.AppendTag(ts, 35, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 1)
	m = protowire.AppendTag(m, 2, protowire.BytesType)
	m = protowire.AppendBytes(m, ts)
	var ns []byte
	ns = protowire.AppendTag(ns, 1, protowire.BytesType)
	ns = protowire.AppendString(ns, "identity")
	ns = protowire.AppendTag(ns, 4, protowire.VarintType)
	ns = protowire.AppendVarint(ns, 0)
	m = protowire.AppendTag(m, 3, protowire.BytesType)
	return protowire.AppendBytes(m, ns)
}

// TestSentencePieceRules: sentencepiece's BPE by hand. "ab a" is
// "▁ab▁a": with "ab" scored above "▁a", ab joins first, then the second
// ▁a ([259 263 262]); with equal scores the leftmost pair joins first
// ([262 261 262]); "c" is no piece: its byte ([259, 3+0x63]).
func TestSentencePieceRules(t *testing.T) {
	for _, c := range []struct {
		score float32
		text  string
		want  []int
	}{
		{-0.5, "ab a", []int{259, 263, 262}},
		{-1, "ab a", []int{262, 261, 262}},
		{-0.5, "c", []int{259, 3 + 0x63}},
		{-0.5, "", nil},
	} {
		tk, err := FromSentencePiece(tinySentencePiece(c.score, 2))
		if err != nil {
			t.Fatal(err)
		}
		if got := tk.Encode(c.text); !slices.Equal(got, c.want) {
			t.Errorf("ab score %v, %q: %v, want %v", c.score, c.text, got, c.want)
		}
	}
}

// TestSentencePieceBad: a malformed or unsupported model fails naming the
// field, whatever its bytes.
func TestSentencePieceBad(t *testing.T) {
	good := tinySentencePiece(-0.5, 2)
	dup := slices.Clone(good)
	dup = protowire.AppendTag(dup, 1, protowire.BytesType)
	dup = protowire.AppendBytes(dup, spPieceBytes("ab", -9, spNormal))
	var noBytes []byte
	noBytes = protowire.AppendTag(noBytes, 1, protowire.BytesType)
	noBytes = protowire.AppendBytes(noBytes, spPieceBytes("<unk>", 0, spUnknown))
	ts := protowire.AppendVarint(protowire.AppendTag(nil, 35, protowire.VarintType), 1)
	ts = protowire.AppendVarint(protowire.AppendTag(ts, 3, protowire.VarintType), 2)
	noBytes = protowire.AppendBytes(protowire.AppendTag(noBytes, 2, protowire.BytesType), ts)
	ns := protowire.AppendVarint(protowire.AppendTag(nil, 4, protowire.VarintType), 0)
	noBytes = protowire.AppendBytes(protowire.AppendTag(noBytes, 3, protowire.BytesType), ns)
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"unigram":       {tinySentencePiece(-0.5, 1), "trainer_spec.model_type"},
		"duplicate":     {dup, "pieces[264]"},
		"truncated":     {good[:len(good)-3], "field 3"},
		"not protobuf":  {[]byte("{\"vocab\": []}"), "wire type"},
		"huge length":   {[]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, "field 1"},
		"no byte piece": {noBytes, "<0x00>"},
		"empty":         {nil, "trainer_spec.model_type"},
		"group":         {[]byte{0x0b, 0x0c}, "wire type"},
	} {
		_, err := FromSentencePiece(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
}

// FuzzSentencePiece: any bytes load or fail, without a panic, in bounded
// time and memory (the limits of parsePiece and fromSentencePiece).
func FuzzSentencePiece(f *testing.F) {
	f.Add(tinySentencePiece(-0.5, 2))
	f.Add(tinySentencePiece(-1, 1))
	f.Add([]byte{0x0a, 0x03, 0x0a, 0x01, 0x61})
	f.Fuzz(func(t *testing.T, data []byte) {
		tk, err := FromSentencePiece(data)
		if err != nil {
			return
		}
		tk.Encode("ab a c ▁")
	})
}

// TestSentencePieceV1IsMistral7B: mistral-common's tokenizer.model.v1 is
// the vocabulary of the mistral7b conformance tokenizer.json (Hugging
// Face's conversion of it): both encode every golden text alike, but
// those that spell <s>, </s> or <unk>, which tokenizer.json parses as
// special tokens and sentencepiece (as mistral-common) reads as text.
func TestSentencePieceV1IsMistral7B(t *testing.T) {
	sp, err := FromSentencePiece(rankFile(t, "sp_v1"))
	if err != nil {
		t.Fatal(err)
	}
	hf, err := LoadFile(filepath.Join(testutil.RefDir(t), "models", "mistral7b", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	texts := testutil.ReadJSONL[goldenLine](t, filepath.Join(testutil.RefDir(t), "golden", "tokens", "qwen3.jsonl"))
	same, special := 0, 0
	for _, l := range texts {
		a, b := sp.Encode(l.Text), hf.Encode(l.Text)
		switch {
		case slices.Equal(a, b):
			same++
		case strings.Contains(l.Text, "<s>") || strings.Contains(l.Text, "</s>") || strings.Contains(l.Text, "<unk>"):
			special++
		default:
			t.Errorf("%q: sentencepiece v1 %v, tokenizer.json %v", truncate(l.Text), a, b)
		}
	}
	if special == 0 || same < 2400 {
		t.Errorf("%d alike, %d differing by special tokens", same, special)
	}
}

// TestEncodeOrdinary: no added token is matched in the text. gpt-oss's
// "a <|end|> b <|start|>x" is the ids openai_harmony (0.0.8) encodes for
// that message text (scripts/renderers/harmony-ref.py), where Encode reads
// the special tokens.
func TestEncodeOrdinary(t *testing.T) {
	tk, err := LoadFile(filepath.Join(testutil.RefDir(t), "models", "gptoss", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := "a <|end|> b <|start|>x"
	want := []int{64, 464, 91, 419, 91, 29, 287, 464, 91, 5236, 91, 29, 87}
	if got := tk.EncodeOrdinary(text); !slices.Equal(got, want) {
		t.Errorf("EncodeOrdinary: %v, want %v", got, want)
	}
	if n := tk.CountOrdinaryBytes([]byte(text)); n != len(want) {
		t.Errorf("CountOrdinaryBytes: %d, want %d", n, len(want))
	}
	if got := tk.Encode(text); slices.Contains(got, 464) || !slices.Contains(got, 200007) {
		t.Errorf("Encode: %v, want <|end|> read as its token", got)
	}
	long := strings.Repeat(text+" more words here ", 2000) // past the chunking threshold
	if got, n := tk.EncodeOrdinary(long), tk.CountOrdinaryBytes([]byte(long)); len(got) != n || slices.Contains(got, 200007) {
		t.Errorf("long text: %d ids, count %d, special read: %v", len(got), n, slices.Contains(got, 200007))
	}
}
