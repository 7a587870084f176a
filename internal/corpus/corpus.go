// Package corpus provides the text compose cuts synthetic prompts from:
// by default Moby Dick (embedded, see NOTICE.md), or any UTF-8 file given
// with --corpus. As in AIPerf's corpus (aiperf-behaviour.md §5.2) lines are
// trimmed, empty ones dropped and the rest joined with one space; the
// result is cut into pieces that are tokenized on their own, in parallel
// (Pieces, TokenizePieces).
package corpus

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/islkit/islkit/internal/cli"
)

//go:embed mobydick.txt.gz
var mobyDickGz []byte

// Default returns the embedded Moby Dick text.
func Default() (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(mobyDickGz))
	if err != nil {
		return "", fmt.Errorf("embedded corpus: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return "", fmt.Errorf("embedded corpus: %w", err)
	}
	return string(b), nil
}

// Load reads a corpus file; "" means the embedded default. The file must
// be UTF-8 and hold some text.
func Load(path string) (string, error) {
	if path == "" {
		return Default()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", cli.Usagef("--corpus: %w", err) // a bad flag value: exit 2
	}
	if !utf8.Valid(b) {
		return "", cli.Usagef("--corpus %s: not UTF-8 text", path)
	}
	if len(Pieces(string(b))) == 0 {
		return "", cli.Usagef("--corpus %s: no text (only empty lines)", path)
	}
	return string(b), nil
}

// Encoder encodes text without special tokens; it must be safe for
// concurrent use (internal/tokenizer's Tokenizer is).
type Encoder interface {
	Encode(text string) []int
}

// PieceBytes is the size Pieces aims for.
const PieceBytes = 256

// Pieces joins the corpus's trimmed, non-empty lines with one space and
// cuts the result into pieces of about PieceBytes bytes, each cut just
// before a space, so every piece but the first starts with " ". Cutting
// where a byte-level pre-tokenizer cuts anyway lets each piece be encoded
// on its own (in parallel) and keeps its text: a prompt is then whole
// pieces plus two short decodes, not a decode of every token.
func Pieces(text string) []string {
	// A byte order mark opening the file is not text (U+FEFF would end up
	// inside a prompt).
	text = strings.TrimPrefix(text, "\ufeff")
	var lines []string
	for line := range strings.Lines(text) {
		if line = strings.TrimSpace(line); line != "" {
			lines = append(lines, line)
		}
	}
	s := strings.Join(lines, " ")
	var pieces []string
	for pos := 0; pos < len(s); {
		end := pos + PieceBytes
		if end >= len(s) {
			end = len(s)
		} else if i := strings.IndexByte(s[end:], ' '); i < 0 {
			end = len(s)
		} else {
			end += i
		}
		pieces = append(pieces, s[pos:end])
		pos = end
	}
	return pieces
}

// TokenizePieces encodes every piece with up to workers goroutines.
func TokenizePieces(pieces []string, enc Encoder, workers int) [][]int {
	out := make([][]int, len(pieces))
	workers = max(1, min(workers, len(pieces)))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(pieces); i += workers {
				out[i] = enc.Encode(pieces[i])
			}
		})
	}
	wg.Wait()
	return out
}
