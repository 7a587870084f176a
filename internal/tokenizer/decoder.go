package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"
)

// decoder rewrites the list of token strings on the way back to text; the
// final text is the concatenation of what the chain returns.
type decoder interface {
	decodeChain(tokens []string) []string
}

func buildDecoder(raw json.RawMessage) (decoder, error) {
	if isNull(raw) {
		return nil, nil
	}
	kind, err := typeOf(raw)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "Sequence":
		var v struct {
			Decoders []json.RawMessage `json:"decoders"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Sequence: %w", err)
		}
		var seq sequenceDecoder
		for i, r := range v.Decoders {
			d, err := buildDecoder(r)
			if err != nil {
				return nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			if d != nil {
				seq = append(seq, d)
			}
		}
		return seq, nil
	case "ByteLevel":
		return byteLevelDecoder{}, nil
	case "Metaspace":
		var v struct {
			Replacement    string `json:"replacement"`
			AddPrefixSpace *bool  `json:"add_prefix_space"`
			PrependScheme  string `json:"prepend_scheme"`
			Split          *bool  `json:"split"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Metaspace: %w", err)
		}
		m, err := newMetaspace(v.Replacement, v.AddPrefixSpace, v.PrependScheme, v.Split)
		if err != nil {
			return nil, err
		}
		return metaspaceDecoder{m}, nil
	case "ByteFallback":
		return byteFallbackDecoder{}, nil
	case "Fuse":
		return fuseDecoder{}, nil
	case "Replace":
		var v struct {
			Pattern patternJSON `json:"pattern"`
			Content string      `json:"content"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Replace: %w", err)
		}
		p, err := buildPattern(v.Pattern)
		if err != nil {
			return nil, fmt.Errorf("Replace: %w", err)
		}
		return replaceDecoder{replaceNormalizer{pattern: p, content: v.Content}}, nil
	case "Strip":
		var v struct {
			Content string `json:"content"`
			Start   int    `json:"start"`
			Stop    int    `json:"stop"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Strip: %w", err)
		}
		c, n := utf8.DecodeRuneInString(v.Content)
		if n == 0 || n != len(v.Content) {
			return nil, fmt.Errorf("Strip: content %q is not one character", v.Content)
		}
		return stripDecoder{content: c, start: v.Start, stop: v.Stop}, nil
	case "WordPiece":
		v := struct {
			Prefix  string `json:"prefix"`
			Cleanup bool   `json:"cleanup"`
		}{Prefix: "##", Cleanup: true}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("WordPiece: %w", err)
		}
		return wordPieceDecoder{prefix: v.Prefix, cleanup: v.Cleanup}, nil
	case "BPEDecoder":
		v := struct {
			Suffix string `json:"suffix"`
		}{Suffix: "</w>"}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("BPEDecoder: %w", err)
		}
		return bpeDecoder{suffix: v.Suffix}, nil
	default:
		return nil, fmt.Errorf("unsupported decoder type %q", kind)
	}
}

type sequenceDecoder []decoder

func (seq sequenceDecoder) decodeChain(tokens []string) []string {
	for _, d := range seq {
		tokens = d.decodeChain(tokens)
	}
	return tokens
}

type byteLevelDecoder struct{}

func (byteLevelDecoder) decodeChain(tokens []string) []string {
	var buf []byte
	for _, t := range tokens {
		buf = appendByteLevelUnmap(buf, t)
	}
	return []string{validUTF8Lossy(buf)}
}

type metaspaceDecoder struct{ m *metaspace }

func (d metaspaceDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		var b strings.Builder
		for _, r := range t {
			if string(r) == d.m.replacement {
				if i == 0 && d.m.scheme != "never" {
					continue
				}
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
		}
		out[i] = b.String()
	}
	return out
}

type byteFallbackDecoder struct{}

func (byteFallbackDecoder) decodeChain(tokens []string) []string {
	var out []string
	var pending []byte
	flush := func() {
		if len(pending) == 0 {
			return
		}
		if utf8.Valid(pending) {
			out = append(out, string(pending))
		} else {
			for range pending {
				out = append(out, "\uFFFD")
			}
		}
		pending = pending[:0]
	}
	for _, t := range tokens {
		if len(t) == 6 && strings.HasPrefix(t, "<0x") && t[5] == '>' {
			if b, err := strconv.ParseUint(t[3:5], 16, 8); err == nil {
				pending = append(pending, byte(b))
				continue
			}
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

type fuseDecoder struct{}

func (fuseDecoder) decodeChain(tokens []string) []string {
	return []string{strings.Join(tokens, "")}
}

type replaceDecoder struct{ r replaceNormalizer }

func (d replaceDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		out[i], _ = d.r.normalize(t, false)
	}
	return out
}

type stripDecoder struct {
	content     rune
	start, stop int
}

func (d stripDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		chars := []rune(t)
		startCut := 0
		for j := 0; j < d.start && j < len(chars); j++ {
			if chars[j] != d.content {
				break
			}
			startCut = j + 1
		}
		stopCut := len(chars)
		for j := 0; j < d.stop && j < len(chars); j++ {
			k := len(chars) - j - 1
			if chars[k] != d.content {
				break
			}
			stopCut = k
		}
		if stopCut < startCut {
			stopCut = startCut
		}
		out[i] = string(chars[startCut:stopCut])
	}
	return out
}

type wordPieceDecoder struct {
	prefix  string
	cleanup bool
}

func wordPieceCleanup(s string) string {
	// Sequential, not strings.Replacer: each rule sees the previous ones' output.
	for _, p := range [][2]string{{" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}} {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}

func (d wordPieceDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		if i != 0 {
			if rest, ok := strings.CutPrefix(t, d.prefix); ok {
				t = rest
			} else {
				t = " " + t
			}
		}
		if d.cleanup {
			t = wordPieceCleanup(t)
		}
		out[i] = t
	}
	return out
}

type bpeDecoder struct{ suffix string }

func (d bpeDecoder) decodeChain(tokens []string) []string {
	out := make([]string, len(tokens))
	for i, t := range tokens {
		rep := " "
		if i == len(tokens)-1 {
			rep = ""
		}
		out[i] = strings.ReplaceAll(t, d.suffix, rep)
	}
	return out
}
