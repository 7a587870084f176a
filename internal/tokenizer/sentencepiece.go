package tokenizer

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	json "github.com/goccy/go-json"
	"google.golang.org/protobuf/encoding/protowire"
)

// SentencePiece models (mistral-common's tokenizer.model.v1, v2, v3, v7:
// a serialized sentencepiece ModelProto) are read into the same BPE this
// package runs for tokenizer.json. sentencepiece's BPE
// (bpe_model.cc Model::Encode) starts from the characters of the
// normalized text (spaces as "▁", a "▁" put first with add_dummy_prefix),
// repeatedly joins the adjacent pair whose join is a piece of the highest
// score (leftmost on ties), and writes a symbol that is not a piece as its
// UTF-8 bytes' <0xXX> pieces (byte_fallback). That is a BPE whose merges
// are every split of every piece into two pieces, ranked by the joined
// piece's score with equal scores sharing a rank (this package's merge
// heap breaks rank ties leftmost, as sentencepiece's agenda does), after
// the normalizer Hugging Face's converter writes for these models
// (Prepend "▁", Replace " " → "▁").
//
// Only what mistral-common's files use is accepted: the BPE model type,
// the identity normalizer without extra-whitespace removal, whitespace as
// a prefix. Control, unknown and byte pieces are never parsed from text
// (mistral-common's SentencePieceTokenizer.encode never does); a text that
// spells a user-defined piece (mistral-common's [REFERENCE_DOC_n]) is
// encoded as ordinary text, where sentencepiece would match the piece:
// not reproduced.

// sentencepiece's piece types (sentencepiece_model.proto).
const (
	spNormal      = 1
	spUnknown     = 2
	spControl     = 3
	spUserDefined = 4
	spUnused      = 5
	spByte        = 6
)

// spPiece is one piece of a ModelProto.
type spPiece struct {
	piece string
	score float32
	typ   int
}

// spModel is what is read of a ModelProto.
type spModel struct {
	pieces                 []spPiece
	modelType              int // 2 = BPE
	byteFallback           bool
	treatWhitespaceSuffix  bool
	normalizerName         string
	charsmapLen, rulesLen  int
	addDummyPrefix         bool
	removeExtraWhitespaces bool
	escapeWhitespaces      bool
}

// maxSentencePieceFile bounds the file read: real models are under a
// megabyte (mistral-common's: about 0.5 MB).
const maxSentencePieceFile = 64 << 20

// parseSentencePiece reads a serialized ModelProto. Errors name the field.
func parseSentencePiece(data []byte) (*spModel, error) {
	if len(data) > maxSentencePieceFile {
		return nil, fmt.Errorf("%d bytes, more than a SentencePiece model's %d", len(data), maxSentencePieceFile)
	}
	m := &spModel{modelType: 1, addDummyPrefix: true, removeExtraWhitespaces: true, escapeWhitespaces: true}
	err := protoFields(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			if len(m.pieces) >= maxRankTokens {
				return fmt.Errorf("pieces: more than %d", maxRankTokens)
			}
			p, err := parsePiece(v)
			if err != nil {
				return fmt.Errorf("pieces[%d]: %w", len(m.pieces), err)
			}
			m.pieces = append(m.pieces, p)
		case num == 2 && typ == protowire.BytesType:
			return protoFields(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if typ != protowire.VarintType {
					return nil
				}
				switch num {
				case 3:
					m.modelType = int(int32(x))
				case 24:
					m.treatWhitespaceSuffix = x != 0
				case 35:
					m.byteFallback = x != 0
				}
				return nil
			})
		case num == 3 && typ == protowire.BytesType:
			return protoFields(v, func(num protowire.Number, typ protowire.Type, b []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.BytesType:
					m.normalizerName = string(b)
				case num == 2 && typ == protowire.BytesType:
					m.charsmapLen = len(b)
				case num == 6 && typ == protowire.BytesType:
					m.rulesLen = len(b)
				case num == 3 && typ == protowire.VarintType:
					m.addDummyPrefix = x != 0
				case num == 4 && typ == protowire.VarintType:
					m.removeExtraWhitespaces = x != 0
				case num == 5 && typ == protowire.VarintType:
					m.escapeWhitespaces = x != 0
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func parsePiece(data []byte) (spPiece, error) {
	p := spPiece{typ: spNormal}
	var hasPiece bool
	err := protoFields(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			p.piece, hasPiece = string(v), true
		case num == 2 && typ == protowire.Fixed32Type:
			p.score = math.Float32frombits(uint32(x))
		case num == 3 && typ == protowire.VarintType:
			p.typ = int(int32(x))
		}
		return nil
	})
	switch {
	case err != nil:
		return p, err
	case !hasPiece || p.piece == "":
		return p, errors.New("piece: missing or empty")
	case len(p.piece) > maxRankTokenLen:
		return p, fmt.Errorf("piece: %d bytes, more than %d", len(p.piece), maxRankTokenLen)
	case !utf8.ValidString(p.piece):
		return p, fmt.Errorf("piece %q: not UTF-8", p.piece)
	case p.typ < spNormal || p.typ > spByte:
		return p, fmt.Errorf("type: %d is not a piece type", p.typ)
	case math.IsNaN(float64(p.score)):
		return p, errors.New("score: NaN")
	}
	return p, nil
}

// protoFields calls f for each field of a protobuf message: its number,
// wire type, and its bytes (length-delimited) or value (varint, fixed).
// Groups are refused; unknown fields are passed to f like the rest.
func protoFields(data []byte, f func(num protowire.Number, typ protowire.Type, b []byte, x uint64) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return fmt.Errorf("not a protobuf message: %w", protowire.ParseError(n))
		}
		data = data[n:]
		var b []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(data)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(data)
			x = uint64(v)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(data)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(data)
		default:
			return fmt.Errorf("field %d: wire type %d is not read", num, typ)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		data = data[n:]
		if err := f(num, typ, b, x); err != nil {
			return err
		}
	}
	return nil
}

// FromSentencePiece builds the tokenizer of a SentencePiece BPE model (a
// tokenizer.model.v* of mistral-common) as sentencepiece encodes text:
// SentencePieceProcessor.encode(text), no special token parsed.
func FromSentencePiece(data []byte) (*Tokenizer, error) {
	t, _, err := fromSentencePiece(data)
	return t, err
}

func fromSentencePiece(data []byte) (*Tokenizer, *fileJSON, error) {
	m, err := parseSentencePiece(data)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case m.modelType != 2:
		return nil, nil, fmt.Errorf("trainer_spec.model_type: %d is not BPE (2); only BPE models are read", m.modelType)
	case m.treatWhitespaceSuffix:
		return nil, nil, errors.New("trainer_spec.treat_whitespace_as_suffix: not read (whitespace as a suffix)")
	case m.normalizerName != "identity" && m.normalizerName != "" || m.charsmapLen > 0 || m.rulesLen > 0:
		return nil, nil, fmt.Errorf("normalizer_spec.name: %q with a character map; only the identity normalizer is read", m.normalizerName)
	case m.removeExtraWhitespaces:
		return nil, nil, errors.New("normalizer_spec.remove_extra_whitespaces: true is not read")
	case !m.escapeWhitespaces:
		return nil, nil, errors.New("normalizer_spec.escape_whitespaces: false is not read")
	case len(m.pieces) == 0:
		return nil, nil, errors.New("pieces: none")
	}
	vocab := make(map[string]int, len(m.pieces))
	byID, known := make([]string, len(m.pieces)), make([]bool, len(m.pieces))
	unk := ""
	work := 0
	for i, p := range m.pieces {
		if prev, dup := vocab[p.piece]; dup {
			return nil, nil, fmt.Errorf("pieces[%d]: %q is also pieces[%d]", i, p.piece, prev)
		}
		vocab[p.piece], byID[i], known[i] = i, p.piece, true
		if p.typ == spUnknown {
			if unk != "" {
				return nil, nil, fmt.Errorf("pieces[%d]: a second unknown piece", i)
			}
			unk = p.piece
		}
		work += len(p.piece) * len(p.piece)
	}
	if unk == "" {
		return nil, nil, errors.New("pieces: no unknown piece")
	}
	if work > maxSplitWork {
		return nil, nil, fmt.Errorf("pieces too long in all: Σ length² is %d, more than %d", work, maxSplitWork)
	}
	if m.byteFallback {
		for b := 0; b < 256; b++ {
			id, ok := vocab[fmt.Sprintf("<0x%02X>", b)]
			if !ok || m.pieces[id].typ != spByte {
				return nil, nil, fmt.Errorf("pieces: byte_fallback without the byte piece <0x%02X>", b)
			}
		}
	}
	// The pieces a merge may make or join: sentencepiece's pieces_
	// (normal, user-defined, unused); control, unknown and byte pieces
	// are reserved ids no merge reaches.
	mergeable := func(id int) bool {
		t := m.pieces[id].typ
		return t == spNormal || t == spUserDefined || t == spUnused
	}
	// Ranks: scores from the highest down, equal scores one rank.
	scores := make([]float32, 0, len(m.pieces))
	for i, p := range m.pieces {
		if mergeable(i) {
			scores = append(scores, p.score)
		}
	}
	slices.Sort(scores)
	scores = slices.Compact(scores)
	rankOf := func(s float32) int32 {
		i, _ := slices.BinarySearch(scores, s)
		return int32(len(scores) - 1 - i)
	}
	n := 0
	for _, p := range m.pieces {
		n += max(utf8.RuneCountInString(p.piece)-1, 0)
	}
	mt := newMergeTable(n)
	for id, p := range m.pieces {
		if !mergeable(id) {
			continue
		}
		for k := range p.piece {
			if k == 0 {
				continue
			}
			a, okA := vocab[p.piece[:k]]
			b, okB := vocab[p.piece[k:]]
			if okA && okB && mergeable(a) && mergeable(b) {
				mt.put(pairKey(a, b), mergeValue{rank: rankOf(p.score), newID: int32(id)})
			}
		}
	}
	norm := []any{map[string]any{"type": "Replace", "pattern": map[string]string{"String": " "}, "content": "▁"}}
	if m.addDummyPrefix {
		norm = append([]any{map[string]any{"type": "Prepend", "prepend": "▁"}}, norm...)
	}
	normJSON, err := json.Marshal(map[string]any{"type": "Sequence", "normalizers": norm})
	if err != nil {
		return nil, nil, err
	}
	opts := bpeOptions{Type: "BPE", UnkToken: &unk, FuseUnk: true, ByteFallback: m.byteFallback}
	modelJSON, _ := json.Marshal(opts)
	f := fileJSON{
		Version:    "1.0",
		Normalizer: normJSON,
		Model:      modelJSON,
		Decoder: json.RawMessage(`{"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},` +
			`{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]}`),
	}
	js, err := json.Marshal(f)
	if err != nil {
		return nil, nil, err
	}
	build := func(json.RawMessage) (model, error) {
		b, err := newBPEWith(opts, vocab, nil, byID, known)
		if err != nil {
			return nil, err
		}
		b.merges = mt
		return b, nil
	}
	return fromJSON(js, build)
}

// LoadSentencePiece is FromSentencePiece through the cache; sum is data's
// SHA-256.
func (c *Cache) LoadSentencePiece(data []byte, sum [32]byte) (*Tokenizer, error) {
	return c.load(keyed(sum, "sentencepiece"), func() (*Tokenizer, *fileJSON, error) { return fromSentencePiece(data) })
}

// SentencePieceSpecials are a SentencePiece model's control and unknown
// pieces by name (mistral-common's special tokens: <s>, [INST], ...), for
// a renderer that places them by id.
func SentencePieceSpecials(data []byte) (map[string]int, error) {
	m, err := parseSentencePiece(data)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for i, p := range m.pieces {
		if p.typ == spControl || p.typ == spUnknown {
			out[p.piece] = i
		}
	}
	return out, nil
}
