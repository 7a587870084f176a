package records_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/testutil"
	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// Real probe output (embedded Qwen3, template applied and not, every
// target) conforms to schemas/probe.schema.json.
func TestProbeRecordMatchesSchema(t *testing.T) {
	for _, target := range cachebust.Targets() {
		for _, apply := range []bool{true, false} {
			rec, err := probe.Run(probe.Options{Source: testmodel.Source(t, ""), ApplyChatTemplate: apply, CacheBust: target, Now: time.Date(2025, 7, 10, 12, 0, 0, 0, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			testutil.ValidateSchema(t, "probe.schema.json", data)
		}
	}
}

// The schema is strict enough to catch what compose refuses.
func TestProbeSchemaRejects(t *testing.T) {
	rec, err := probe.Run(probe.Options{Source: testmodel.Source(t, ""), ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnPrefix})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(rec)
	for _, bad := range []struct{ from, to string }{
		{`"schema_version":1`, `"schema_version":2`},
		{`"kind":"islkit.probe"`, `"kind":"islkit.request"`},
		{`"cache_bust":"first_turn_prefix"`, `"cache_bust":"sideways"`},
		{`"marker_tokens":`, `"marker_tokens":-1,"x":`},
		{`"per_msg_wrap":5`, `"per_msg_wrap":-5`},
	} {
		doc := strings.Replace(string(good), bad.from, bad.to, 1)
		if doc == string(good) {
			t.Fatalf("%q not found in %s", bad.from, good)
		}
		if testutil.SchemaError(t, "probe.schema.json", []byte(doc)) == nil {
			t.Errorf("schema accepted %s → %s", bad.from, bad.to)
		}
	}
}
