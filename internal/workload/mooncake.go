// Package workload reads the workloads compose replays instead of
// synthetic conversations: Mooncake traces (one request per line, with its
// arrival time, lengths and the hash ids of its prompt blocks).
package workload

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/islkit/islkit/internal/jsonl"
)

// DefaultBlockSize is the Mooncake trace's block: each hash id stands for
// 512 prompt tokens.
const DefaultBlockSize = 512

// TraceRow is one request of a Mooncake trace
// (`{"timestamp", "input_length", "output_length", "hash_ids"}`).
type TraceRow struct {
	// Line is the row's 1-based line in its file.
	Line int
	// Timestamp is the arrival time in milliseconds (Mooncake's unit);
	// nil when the trace has none.
	Timestamp *float64
	// InputLength is the prompt's token count as the serving system saw
	// it; OutputLength the reply's.
	InputLength, OutputLength int
	// HashIDs names block k (tokens [k·B, (k+1)·B)) of the prompt; equal
	// leading ids mean a shared prefix.
	HashIDs []int64
}

// Skipped is a well-formed row that cannot be replayed as written.
type Skipped struct {
	Line int
	// InArray: Line is the row's record in the JSON array the file is.
	InArray bool
	Reason  string
}

// Where names the row in file (Where).
func (s Skipped) Where(file string) string { return Where(file, s.Line, s.InArray) }

type rawRow struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int64   `json:"input_length"`
	OutputLength *int64   `json:"output_length"`
	HashIDs      *[]int64 `json:"hash_ids"`
}

// ReadMooncake reads a whole trace. A malformed row (a missing field, a
// length below 1, hash_ids not a list of integers, a timestamp before the
// previous row's, timestamps on some rows only) is an error naming the
// file, line and field, and nothing is returned. A row whose input_length
// does not fit its hash_ids (ceil(input_length/blockSize) != len(hash_ids))
// is returned in skipped, not changed.
func ReadMooncake(r io.Reader, name string, blockSize int) (rows []TraceRow, skipped []Skipped, err error) {
	if blockSize < 1 {
		return nil, nil, fmt.Errorf("block size %d: want at least 1 token", blockSize)
	}
	jr := jsonl.NewReader(r, name)
	var prev *float64
	first := true
	for {
		line, err := jr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		if err := line.CheckUTF8(); err != nil {
			return nil, nil, err
		}
		var raw rawRow
		if err := line.Decode(&raw); err != nil {
			return nil, nil, err
		}
		row, err := checkRow(line, &raw)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case !first && (prev == nil) != (row.Timestamp == nil):
			return nil, nil, line.FieldErrorf("timestamp", "present on some rows only: give every row a timestamp or none")
		case prev != nil && *row.Timestamp < *prev:
			return nil, nil, line.FieldErrorf("timestamp", "%v is before the previous row's %v: a trace is in arrival order", *row.Timestamp, *prev)
		}
		first, prev = false, row.Timestamp
		if want := (row.InputLength + blockSize - 1) / blockSize; want != len(row.HashIDs) {
			skipped = append(skipped, Skipped{Line: line.Num, Reason: fmt.Sprintf(
				"input_length %d needs %d blocks of %d tokens but hash_ids has %d: skipped (is --block-size right?)",
				row.InputLength, want, blockSize, len(row.HashIDs))})
			continue
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 && len(skipped) == 0 {
		return nil, nil, fmt.Errorf("%s: no rows", name)
	}
	return rows, skipped, nil
}

// maxLength bounds lengths so that block arithmetic cannot overflow; no
// model takes a prompt of a billion tokens.
const maxLength = 1 << 30

func checkRow(line jsonl.Line, raw *rawRow) (TraceRow, error) {
	row := TraceRow{Line: line.Num}
	switch {
	case raw.InputLength == nil:
		return row, line.FieldErrorf("input_length", "missing")
	case raw.OutputLength == nil:
		return row, line.FieldErrorf("output_length", "missing")
	case raw.HashIDs == nil:
		return row, line.FieldErrorf("hash_ids", "missing (a list of block hash ids)")
	case *raw.InputLength < 1 || *raw.InputLength > maxLength:
		return row, line.FieldErrorf("input_length", "%d: want 1..%d tokens", *raw.InputLength, maxLength)
	case *raw.OutputLength < 1 || *raw.OutputLength > maxLength:
		return row, line.FieldErrorf("output_length", "%d: want 1..%d tokens", *raw.OutputLength, maxLength)
	case raw.Timestamp != nil && (math.IsNaN(*raw.Timestamp) || math.IsInf(*raw.Timestamp, 0) || *raw.Timestamp < 0):
		return row, line.FieldErrorf("timestamp", "%v: want milliseconds >= 0", *raw.Timestamp)
	}
	row.Timestamp = raw.Timestamp
	row.InputLength, row.OutputLength = int(*raw.InputLength), int(*raw.OutputLength)
	row.HashIDs = *raw.HashIDs
	return row, nil
}
