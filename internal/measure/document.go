package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	json "github.com/goccy/go-json"
)

// maxDocument bounds a whole-file JSON document (AIPerf's inputs.json).
const maxDocument = 1 << 30

// ReadInput returns a reader of JSONL lines for r. JSONL passes through
// untouched; a file that is one multi-line JSON value (AIPerf writes
// inputs.json pretty-printed) is compacted into a single line so it can be
// measured like any record. Input that is neither (JSONL whose first line
// is broken) is read as JSONL, so each bad line is reported on its own.
func ReadInput(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if bom, _ := br.Peek(3); string(bom) == "\ufeff" {
		br.Discard(3) // a byte order mark starts no record (Python's utf-8-sig)
	}
	head := firstLine(br)
	i := 0
	for i < len(head) && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n') {
		i++
	}
	if i == len(head) || (head[i] != '{' && head[i] != '[') {
		return br, nil
	}
	// One value per line is JSONL; a first line that is not a complete
	// value means a document spread over lines.
	if nl := bytes.IndexByte(head[i:], '\n'); nl < 0 || json.Valid(bytes.TrimSpace(head[i:i+nl])) {
		return br, nil
	}
	data, err := io.ReadAll(io.LimitReader(br, maxDocument+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDocument {
		return nil, fmt.Errorf("JSON document larger than %d bytes", maxDocument)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, data); err != nil {
		return bytes.NewReader(data), nil
	}
	if bytes.HasPrefix(buf.Bytes(), []byte("[")) {
		return nil, fmt.Errorf("a JSON array is not a record: AIPerf's inputs.json is an object {\"data\": [...]}")
	}
	buf.WriteByte('\n')
	return &buf, nil
}

// firstLine peeks at br until it holds the first line that is not blank
// (up to its newline), 64 KiB or the end of the input, and returns what it
// holds. It reads no further than that: a live `send | measure` must be
// told apart from a document on its first record, not after 64 KiB.
func firstLine(br *bufio.Reader) []byte {
	for {
		n := br.Buffered()
		head, _ := br.Peek(n)
		start := bytes.IndexFunc(head, func(r rune) bool { return r != ' ' && r != '\t' && r != '\r' && r != '\n' })
		if start >= 0 && bytes.IndexByte(head[start:], '\n') >= 0 || n >= br.Size() {
			return head
		}
		// Peek(n+1) reads once more (one Read of the underlying reader):
		// what has arrived is enough, nothing waits for the buffer to fill.
		if _, err := br.Peek(n + 1); err != nil {
			head, _ = br.Peek(br.Buffered())
			return head
		}
	}
}
