package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

type got struct {
	num  int
	data string
}

func readAll(t *testing.T, r *Reader) ([]got, error) {
	t.Helper()
	var out []got
	for {
		l, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, got{l.Num, string(l.Data)})
	}
}

func TestReaderLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []got
	}{
		{"empty", "", nil},
		{"lf", "{\"a\":1}\n{\"b\":2}\n", []got{{1, `{"a":1}`}, {2, `{"b":2}`}}},
		{"no final newline", "{\"a\":1}\n{\"b\":2}", []got{{1, `{"a":1}`}, {2, `{"b":2}`}}},
		{"crlf", "{\"a\":1}\r\n{\"b\":2}\r\n", []got{{1, `{"a":1}`}, {2, `{"b":2}`}}},
		{"crlf no final newline", "{\"a\":1}\r\n{\"b\":2}\r", []got{{1, `{"a":1}`}, {2, `{"b":2}`}}},
		{"blank lines keep numbering", "\n{\"a\":1}\n  \t\r\n\r\n{\"b\":2}\n\n", []got{{2, `{"a":1}`}, {5, `{"b":2}`}}},
		// U+2028/U+2029 are legal, unescaped, inside JSON strings; they must
		// not split a record.
		{"unicode line separators", "{\"t\":\"a\u2028b\u2029c\u0085d\"}\n", []got{{1, "{\"t\":\"a\u2028b\u2029c\u0085d\"}"}}},
		{"lone cr inside line", "{\"t\":\"a\rb\"}\n", []got{{1, "{\"t\":\"a\rb\"}"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// OneByteReader forces every line to be assembled from pieces.
			for _, src := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				lines, err := readAll(t, NewReader(src, "in.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				if len(lines) != len(tt.want) {
					t.Fatalf("got %v, want %v", lines, tt.want)
				}
				for i := range lines {
					if lines[i] != tt.want[i] {
						t.Errorf("line %d: got %+v, want %+v", i, lines[i], tt.want[i])
					}
				}
			}
		})
	}
}

func TestReaderLongLineBeyondScannerLimit(t *testing.T) {
	// bufio.Scanner's default limit is 64 KiB; a 1 MiB record must pass.
	big := `{"t":"` + strings.Repeat("x", 1<<20) + `"}`
	lines, err := readAll(t, NewReader(strings.NewReader(big+"\n{}\n"), "in.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0].data != big || lines[1] != (got{2, "{}"}) {
		t.Fatalf("got %d lines", len(lines))
	}
}

func TestReaderMaxLineSize(t *testing.T) {
	const max = 10
	tests := []struct {
		name    string
		in      string
		want    []got
		errLine int // 0: no error
	}{
		{"exactly max", "0123456789\n", []got{{1, "0123456789"}}, 0},
		{"exactly max crlf", "0123456789\r\n", []got{{1, "0123456789"}}, 0},
		{"exactly max no newline", "0123456789", []got{{1, "0123456789"}}, 0},
		{"one over", "ok\n01234567890\n", []got{{1, "ok"}}, 2},
		{"one over no newline", "ok\n\n01234567890", []got{{1, "ok"}}, 3},
		{"far over", "ok\n" + strings.Repeat("y", 200000) + "\nnever\n", []got{{1, "ok"}}, 2},
	}
	for _, tt := range tests {
		// Buffer 16 makes long lines hit the early give-up while reading.
		for _, bufSize := range []int{readBufferSize, 16} {
			t.Run(tt.name+"/buf"+strconv.Itoa(bufSize), func(t *testing.T) {
				r := newReaderSize(strings.NewReader(tt.in), "big.jsonl", bufSize)
				r.SetMaxLineSize(max)
				lines, err := readAll(t, r)
				if len(lines) != len(tt.want) {
					t.Fatalf("lines %v, want %v", lines, tt.want)
				}
				if tt.errLine == 0 {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				if !errors.Is(err, ErrLineTooLong) {
					t.Fatalf("err = %v, want ErrLineTooLong", err)
				}
				want := "big.jsonl:" + strconv.Itoa(tt.errLine) + ": line too long: more than 10 bytes (the maximum line size)"
				if err.Error() != want {
					t.Errorf("err = %q\nwant  %q", err, want)
				}
				// The error is sticky: reading does not resume mid-line.
				if _, err2 := r.Next(); err2 != err {
					t.Errorf("second Next = %v, want the same error", err2)
				}
			})
		}
	}
}

func TestReaderDefaultMax(t *testing.T) {
	r := NewReader(strings.NewReader(""), "x")
	if r.maxSize != 256<<20 || DefaultMaxLineSize != 268435456 {
		t.Fatalf("default max = %d", r.maxSize)
	}
	r.SetMaxLineSize(0)
	if r.maxSize != DefaultMaxLineSize {
		t.Fatalf("SetMaxLineSize(0) = %d", r.maxSize)
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := NewReader(io.MultiReader(strings.NewReader("{}\n{\"a\""), iotest.ErrReader(boom)), "in.jsonl")
	lines, err := readAll(t, r)
	if len(lines) != 1 || !errors.Is(err, boom) {
		t.Fatalf("lines %v err %v", lines, err)
	}
	if want := "in.jsonl:2: read: disk on fire"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestCheckUTF8(t *testing.T) {
	ok := Line{File: "a.jsonl", Num: 7, Data: []byte("{\"t\":\"h\u00e9llo \u2028 \U0001F600\"}")}
	if err := ok.CheckUTF8(); err != nil {
		t.Fatal(err)
	}
	// "{"t":"h" is 7 bytes, then a lone 0xE9 (Latin-1 é).
	bad := Line{File: "a.jsonl", Num: 7, Data: []byte("{\"t\":\"h\xe9llo\"}")}
	err := bad.CheckUTF8()
	if want := "a.jsonl:7: invalid UTF-8 at byte offset 7 (byte 0xe9)"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	// Truncated 4-byte sequence at the very end.
	trunc := Line{File: "a.jsonl", Num: 1, Data: []byte("ab\xf0\x9f\x98")}
	if err := trunc.CheckUTF8(); err == nil || !strings.Contains(err.Error(), "byte offset 2 ") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzReader: any input reads without panic, and the yielded lines are
// exactly the input's '\n'-separated lines minus one trailing '\r',
// skipping blank ones, with their physical numbers.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"", "\n", "{}\n", "a\r\nb", "\r\n\r\n", "x\u2028y\n", "\xff\xfe\n\n\t \n"} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		// A 16-byte buffer (bufio's minimum) makes most lines span reads.
		r := newReaderSize(bytes.NewReader(in), "fuzz", 16)
		limit := int(max)
		if limit > 0 {
			r.SetMaxLineSize(limit)
		}
		var want []got
		if len(in) > 0 {
			parts := bytes.Split(in, []byte{'\n'})
			if in[len(in)-1] == '\n' {
				parts = parts[:len(parts)-1]
			}
			for i, p := range parts {
				p = bytes.TrimSuffix(p, []byte{'\r'})
				if isBlank(p) && (limit == 0 || len(p) <= limit) {
					continue
				}
				want = append(want, got{i + 1, string(p)})
			}
		}
		for i := 0; ; i++ {
			l, err := r.Next()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("stopped after %d lines, want %d", i, len(want))
				}
				return
			}
			if i >= len(want) {
				t.Fatalf("extra line %d: %q (err %v)", l.Num, l.Data, err)
			}
			if err != nil {
				if limit > 0 && len(want[i].data) > limit && errors.Is(err, ErrLineTooLong) {
					return // correct refusal of an oversized line
				}
				t.Fatalf("line %d: %v", want[i].num, err)
			}
			if limit > 0 && len(l.Data) > limit {
				t.Fatalf("line %d longer than limit %d", l.Num, limit)
			}
			if l.Num != want[i].num || string(l.Data) != want[i].data {
				t.Fatalf("got %d:%q, want %d:%q", l.Num, l.Data, want[i].num, want[i].data)
			}
		}
	})
}

func TestSkipLongLinesReportsOnceAndGoesOn(t *testing.T) {
	in := "{\"a\":1}\n" + strings.Repeat("x", 5000) + "\n{\"b\":2}\n" + strings.Repeat("y", 5000)
	r := NewReader(strings.NewReader(in), "f")
	r.SetMaxLineSize(100)
	r.SetSkipLongLines(true)
	var got []string
	for {
		line, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if !errors.Is(err, ErrLineTooLong) {
				t.Fatalf("unexpected error %v", err)
			}
			got = append(got, fmt.Sprintf("error at %d", line.Num))
			continue
		}
		got = append(got, fmt.Sprintf("%d:%s", line.Num, line.Data))
	}
	want := []string{`1:{"a":1}`, "error at 2", `3:{"b":2}`, "error at 4"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
