package workload

import (
	"strings"
	"testing"
)

func TestReadMooncake(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 600, "output_length": 20, "hash_ids": [1, 2]}

{"timestamp": 27482, "input_length": 512, "output_length": 5, "hash_ids": [1], "extra": "kept out"}
{"timestamp": 27482, "input_length": 1025, "output_length": 5, "hash_ids": [1, 2]}
`
	rows, skipped, err := ReadMooncake(strings.NewReader(in), "t.jsonl", 512)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Line != 1 || rows[1].Line != 3 || *rows[1].Timestamp != 27482 ||
		rows[0].InputLength != 600 || rows[0].OutputLength != 20 || len(rows[0].HashIDs) != 2 || rows[1].HashIDs[0] != 1 {
		t.Errorf("rows = %+v", rows)
	}
	// 1025 tokens are 3 blocks of 512, not 2.
	if len(skipped) != 1 || skipped[0].Line != 4 || !strings.Contains(skipped[0].Reason, "needs 3 blocks of 512 tokens but hash_ids has 2") {
		t.Errorf("skipped = %+v", skipped)
	}
	rows, skipped, err = ReadMooncake(strings.NewReader(`{"input_length": 1, "output_length": 1, "hash_ids": [7]}`), "t", 16)
	if err != nil || len(skipped) != 0 || rows[0].Timestamp != nil {
		t.Errorf("no timestamps: %+v %v %v", rows, skipped, err)
	}
}

func TestReadMooncakeErrors(t *testing.T) {
	ok := `{"timestamp": 5, "input_length": 10, "output_length": 1, "hash_ids": [1]}` + "\n"
	for _, tt := range []struct{ in, want string }{
		{`{"timestamp": 1, "output_length": 1, "hash_ids": [1]}`, `t:1: field "input_length": missing`},
		{`{"timestamp": 1, "input_length": 3, "hash_ids": [1]}`, `t:1: field "output_length": missing`},
		{`{"timestamp": 1, "input_length": 3, "output_length": 1}`, `t:1: field "hash_ids": missing`},
		{`{"timestamp": 1, "input_length": 3, "output_length": 1, "hash_ids": null}`, `t:1: field "hash_ids": missing`},
		{`{"timestamp": 1, "input_length": -3, "output_length": 1, "hash_ids": [1]}`, `t:1: field "input_length": -3: want 1..`},
		{`{"timestamp": 1, "input_length": 0, "output_length": 1, "hash_ids": [1]}`, `t:1: field "input_length": 0: want 1..`},
		{`{"timestamp": 1, "input_length": 3, "output_length": -1, "hash_ids": [1]}`, `t:1: field "output_length": -1: want 1..`},
		{`{"timestamp": -1, "input_length": 3, "output_length": 1, "hash_ids": [1]}`, `t:1: field "timestamp": -1: want milliseconds`},
		{`{"timestamp": 1, "input_length": 3, "output_length": 1, "hash_ids": 5}`, `t:1: field "hash_ids"`},
		{`{"timestamp": 1, "input_length": 3, "output_length": 1, "hash_ids": ["a"]}`, `t:1: field "hash_ids`},
		{`{"timestamp": 1, "input_length": 3.5, "output_length": 1, "hash_ids": [1]}`, `t:1: field "input_length"`},
		{`{"timestamp": "x", "input_length": 3, "output_length": 1, "hash_ids": [1]}`, `t:1: field "timestamp"`},
		{ok + `{"timestamp": 4, "input_length": 3, "output_length": 1, "hash_ids": [1]}`, `t:2: field "timestamp": 4 is before the previous row's 5`},
		{ok + `{"input_length": 3, "output_length": 1, "hash_ids": [1]}`, `t:2: field "timestamp": present on some rows only`},
		{`{"input_length": 3, "output_length": 1, "hash_ids": [1]}` + "\n" + ok, `t:2: field "timestamp": present on some rows only`},
		{`{"timestamp": 1, "input_length": 3`, `t:1: invalid JSON`},
		{"[1, 2]", `t:1:`},
		{"", `t: no rows`},
	} {
		_, _, err := ReadMooncake(strings.NewReader(tt.in), "t", 16)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s\n  error %v, want prefix %q", tt.in, err, tt.want)
		}
	}
	if _, _, err := ReadMooncake(strings.NewReader(ok), "t", 0); err == nil {
		t.Error("block size 0 accepted")
	}
}

// Any input gives rows or an error, and every row it keeps is well formed.
func FuzzReadMooncake(f *testing.F) {
	f.Add(`{"timestamp": 0, "input_length": 600, "output_length": 20, "hash_ids": [1, 2]}`, 512)
	f.Add(`{"input_length": 1, "output_length": 1, "hash_ids": []}`, 16)
	f.Fuzz(func(t *testing.T, in string, block int) {
		block = 1 + int(uint(block)%1024)
		rows, _, err := ReadMooncake(strings.NewReader(in), "f", block)
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.InputLength < 1 || r.OutputLength < 1 || (r.InputLength+block-1)/block != len(r.HashIDs) {
				t.Fatalf("bad row kept: %+v", r)
			}
		}
	})
}
