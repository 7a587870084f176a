package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestShardSimulation is a run across machines without a cluster (issue
// 26's acceptance): 4 send processes with JOB_COMPLETION_INDEX 0..3 (as
// the pods of deploy/kubernetes' Indexed Job: --shard env/4 --start-at)
// against the test server; their outputs, concatenated, hold exactly the
// requests of a single send's run over the same conversations (the same
// keys and payloads), and measure says the merge is complete and states
// the shards' start skew.
func TestShardSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs 6 processes")
	}
	bin := buildTools(t)
	srv := testserver.StartTest(t, testserver.Config{})
	dir := t.TempDir()
	convs := filepath.Join(dir, "convs.jsonl")
	compose := exec.Command("bash", "-c", `"$0/probe" --apply-chat-template --cache-bust first_turn_prefix --now 2025-07-10T12:00:00 \
	  | "$0/compose" --isl 120 --osl 6 --conversations 10 --turns 3 --seed 1 --model m > "$1"`, bin, convs)
	if out, err := compose.CombinedOutput(); err != nil {
		t.Fatalf("probe | compose: %v\n%s", err, out)
	}
	single := filepath.Join(dir, "single.jsonl")
	out, err := exec.Command(filepath.Join(bin, "send"), "--url", srv.URL(), "--concurrency", "2", convs).Output()
	if err != nil {
		t.Fatalf("single send: %v", err)
	}
	if err := os.WriteFile(single, out, 0o644); err != nil {
		t.Fatal(err)
	}

	// The shards, started together as the Job's pods are, all waiting
	// for one time a little ahead.
	const shards = 4
	startAt := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
	cmds := make([]*exec.Cmd, shards)
	outs := make([]string, shards)
	errs := make([]bytes.Buffer, shards)
	for i := range cmds {
		outs[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i))
		f, err := os.Create(outs[i])
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmds[i] = exec.Command(filepath.Join(bin, "send"), "--url", srv.URL(), "--concurrency", "2", "--shard", fmt.Sprintf("env/%d", shards), "--start-at", startAt, convs)
		cmds[i].Env = append(os.Environ(), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
		cmds[i].Stdout, cmds[i].Stderr = f, &errs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	var merged []byte
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, errs[i].String())
		}
		data, err := os.ReadFile(outs[i])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, []byte(`{"kind":"islkit.run",`)) || !bytes.Contains(data[:bytes.IndexByte(data, '\n')], []byte(fmt.Sprintf(`"shard":"%d/%d"`, i, shards))) {
			t.Fatalf("shard %d's output does not begin with its run record", i)
		}
		merged = append(merged, data...)
	}
	mergedPath := filepath.Join(dir, "merged.jsonl")
	if err := os.WriteFile(mergedPath, merged, 0o644); err != nil {
		t.Fatal(err)
	}

	// The same requests: keys and payloads.
	requestSet := func(path string) []string {
		var set []string
		for _, line := range withoutRunRecord(testutil.ReadJSONL[json.RawMessage](t, path)) {
			var r struct {
				ID      string          `json:"conversation_id"`
				Index   int             `json:"conversation_index"`
				Pass    int             `json:"pass"`
				Turn    int             `json:"turn"`
				Payload json.RawMessage `json:"payload"`
				Result  struct {
					OK bool `json:"ok"`
				} `json:"result"`
			}
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			if !r.Result.OK {
				t.Fatalf("%s: a request failed: %s", path, line)
			}
			set = append(set, fmt.Sprintf("%s/%d/%d/%d %s", r.ID, r.Index, r.Pass, r.Turn, r.Payload))
		}
		slices.Sort(set)
		return set
	}
	one, many := requestSet(single), requestSet(mergedPath)
	if len(one) != 30 || !slices.Equal(one, many) {
		t.Errorf("the single run's %d requests and the merged shards' %d differ", len(one), len(many))
		for i := range min(len(one), len(many)) {
			if one[i] != many[i] {
				t.Errorf("first difference:\n single %.300s\n shards %.300s", one[i], many[i])
				break
			}
		}
	}

	// measure merges them: every shard once, complete, the skew stated.
	sum := filepath.Join(dir, "summary.json")
	m := exec.Command(filepath.Join(bin, "measure"), "--summary-json", sum, "--summary", mergedPath)
	var mout, merr bytes.Buffer
	m.Stdout, m.Stderr = &mout, &merr
	if err := m.Run(); err != nil {
		t.Fatalf("measure: %v\n%s", err, merr.String())
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	testutil.ValidateSchema(t, "summary.schema.json", data)
	var s struct {
		DuplicatesDropped int `json:"duplicates_dropped"`
		Shards            *struct {
			N           int      `json:"n"`
			Requests    int      `json:"requests"`
			Complete    *bool    `json:"complete"`
			StartAt     string   `json:"start_at"`
			StartSkewMs *float64 `json:"start_skew_ms"`
			Shards      []struct {
				Shard    string   `json:"shard"`
				Requests int      `json:"requests"`
				LateMs   *float64 `json:"late_ms"`
				Client   *struct {
					Saturated bool `json:"saturated"`
				} `json:"client"`
			} `json:"shards"`
		} `json:"shards"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	sh := s.Shards
	if sh == nil || sh.N != shards || len(sh.Shards) != shards || sh.Requests != 30 || sh.Complete == nil || !*sh.Complete ||
		sh.StartAt != startAt || sh.StartSkewMs == nil || s.DuplicatesDropped != 0 {
		t.Fatalf("shards section: %s", data)
	}
	for i, st := range sh.Shards {
		// Conversations i, i+4, i+8 of 10, three turns each.
		want := 3 * len(slices.DeleteFunc([]int{i, i + 4, i + 8}, func(c int) bool { return c >= 10 }))
		if st.Shard != fmt.Sprintf("%d/%d", i, shards) || st.Requests != want || st.LateMs == nil || *st.LateMs < 0 || st.Client == nil {
			t.Errorf("shard %d: %+v, want %d requests, not before --start-at, a client verdict", i, st, want)
		}
	}
	// The text summary goes to stderr, the records to stdout.
	if !strings.Contains(merr.String(), "shards: 4 of 4, 30 requests, complete") || !strings.Contains(merr.String(), "start skew: first requests within") {
		t.Errorf("measure's summary does not state the merge:\n%s", merr.String())
	}
	if n := bytes.Count(mout.Bytes(), []byte("\n")); n != 30+shards {
		t.Errorf("measure wrote %d lines, want every record read (30 requests, %d run records)", n, shards)
	}
	t.Logf("start skew %.1f ms", *sh.StartSkewMs)
}
