package records_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
	"github.com/islkit/islkit/internal/workload"
)

var model *compose.Model

func composeLines(t *testing.T, target cachebust.Target, exact bool, system int) [][]byte {
	t.Helper()
	p, err := probe.Run(probe.Options{Source: testmodel.Source(t, ""), ApplyChatTemplate: true, CacheBust: target, Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if model == nil { // one model for all cases: the corpus is tokenized once
		if model, err = compose.LoadModel(p, "", "", ""); err != nil {
			t.Fatal(err)
		}
	}
	m := model
	c, err := compose.New(p, m, "", compose.Options{ISL: 120, OSL: 20, Conversations: 2, Turns: 2, Seed: 3,
		SharedSystemPromptLength: system, Exact: exact, Workers: 1, ISLSet: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := c.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	return bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
}

// Real compose output conforms to schemas/conversation.schema.json, in
// both modes, with and without a shared system prompt.
func TestConversationRecordMatchesSchema(t *testing.T) {
	for _, target := range []cachebust.Target{cachebust.None, cachebust.SystemSuffix, cachebust.FirstTurnPrefix} {
		for _, exact := range []bool{true, false} {
			for _, system := range []int{0, 40} {
				for _, line := range composeLines(t, target, exact, system) {
					testutil.ValidateSchema(t, "conversation.schema.json", line)
				}
			}
		}
	}
}

func TestConversationSchemaRejects(t *testing.T) {
	good := string(composeLines(t, cachebust.FirstTurnPrefix, true, 0)[0])
	for _, bad := range []struct{ from, to string }{
		{`"marker_landing":"first_user_turn/prefix"`, `"marker_landing":"none"`},
		{`"schema_version":1`, `"schema_version":7`},
		{`"wire_isl":`, `"wire_islx":`},
		{`"target_isl":`, `"target_isl":-3,"y":`},
	} {
		doc := strings.Replace(good, bad.from, bad.to, 1)
		if doc == good {
			t.Fatalf("%q not in %s", bad.from, good)
		}
		if testutil.SchemaError(t, "conversation.schema.json", []byte(doc)) == nil {
			t.Errorf("schema accepted %s → %s", bad.from, bad.to)
		}
	}
}

// compose --trace output conforms too, with and without timestamps, and
// with a row marked unreachable.
func TestTraceConversationMatchesSchema(t *testing.T) {
	p, err := probe.Run(probe.Options{Source: testmodel.Source(t, ""), ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnSuffix, Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if model == nil {
		if model, err = compose.LoadModel(p, "", "", ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, trace := range []string{
		`{"timestamp": 0, "input_length": 70, "output_length": 5, "hash_ids": [1, 2]}` + "\n" + `{"timestamp": 2.5, "input_length": 3, "output_length": 5, "hash_ids": [1]}`,
		`{"input_length": 40, "output_length": 5, "hash_ids": [1]}`,
	} {
		rows, _, err := workload.ReadMooncake(strings.NewReader(trace), "t", 64)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := compose.NewTracer(p, model, "", compose.TraceOptions{BlockSize: 64, CacheBlockSize: 16, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w := jsonl.NewWriter(&buf)
		if err := tr.Run(context.Background(), w, rows); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
			testutil.ValidateSchema(t, "conversation.schema.json", line)
		}
	}
}
