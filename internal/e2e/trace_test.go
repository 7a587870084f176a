package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/testserver"
	"github.com/islkit/islkit/internal/testutil"
)

// TestTraceReplayPrefixCache replays the hand-written trace against the
// test server with its prefix cache on (blocks of 16, as compose names
// them by default): the cached tokens the server reports equal send's
// expected_cached_tokens on every request, and the shared chains do hit.
func TestTraceReplayPrefixCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	trace := filepath.Join(testutil.RepoRoot(t), "internal", "compose", "testdata", "trace.jsonl")
	srv := testserver.StartTest(t, testserver.Config{PrefixCacheBlock: 16})
	for _, sendArgs := range []string{"--dry-run", "--url " + srv.URL() + " --concurrency 1"} {
		cmd := exec.Command("bash", "-c", `set -eo pipefail; b=$0
"$b/probe" --apply-chat-template --cache-bust first_turn_suffix --now 2025-07-10T12:00:00 \
  | "$b/compose" --trace "$1" --block-size 128 --model m | "$b/send" $2`, bin, trace, sendArgs)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", sendArgs, err)
		}
		lines := withoutRunRecord(strings.Split(strings.TrimSpace(string(out)), "\n"))
		if len(lines) != 13 {
			t.Fatalf("%s: %d records, want 13", sendArgs, len(lines))
		}
		expected := 0
		for i, line := range lines {
			var rec struct {
				Expected *int `json:"expected_cached_tokens"`
				Result   *struct {
					Usage *struct {
						Cached *int `json:"cached_tokens"`
					} `json:"usage"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			testutil.ValidateSchema(t, "request.schema.json", []byte(line))
			if rec.Expected == nil {
				t.Fatalf("%s: record %d has no expected_cached_tokens", sendArgs, i)
			}
			expected += *rec.Expected
			if rec.Result == nil {
				continue
			}
			if rec.Result.Usage == nil || rec.Result.Usage.Cached == nil || *rec.Result.Usage.Cached != *rec.Expected {
				t.Errorf("record %d: server cached %v, expected %d", i, rec.Result.Usage, *rec.Expected)
			}
		}
		// Rows 2, 3, 4, 6, 10, 12 and 8, 13 reuse 1 to 4 blocks of 128
		// tokens of earlier rows: well over a thousand cached tokens.
		if expected < 1000 {
			t.Errorf("%s: %d tokens expected cached in all, want over 1000", sendArgs, expected)
		}
		// measure's summary says the same.
		summaryPath := filepath.Join(t.TempDir(), "summary.json")
		m := exec.Command(filepath.Join(bin, "measure"), "--apply-chat-template", "--now", "2025-07-10T12:00:00", "--summary-json", summaryPath)
		m.Stdin = strings.NewReader(string(out))
		if err := m.Run(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(summaryPath)
		if err != nil {
			t.Fatal(err)
		}
		testutil.ValidateSchema(t, "summary.schema.json", data)
		var sum struct {
			PrefixCache struct {
				Requests int `json:"requests"`
				Compared int `json:"compared"`
				Expected int `json:"expected_cached_tokens"`
				Server   int `json:"server_cached_tokens"`
				Differ   int `json:"requests_differ"`
			} `json:"prefix_cache"`
		}
		if err := json.Unmarshal(data, &sum); err != nil {
			t.Fatal(err)
		}
		p := sum.PrefixCache
		wantCompared, wantServer := 13, expected
		if sendArgs == "--dry-run" {
			wantCompared, wantServer = 0, 0
		}
		if p.Requests != 13 || p.Compared != wantCompared || p.Expected != expected || p.Server != wantServer || p.Differ != 0 {
			t.Errorf("%s: summary prefix_cache %+v, want 13 requests, %d compared, %d expected and %d server tokens, none differ", sendArgs, p, wantCompared, expected, wantServer)
		}
	}
}

// TestPrefixGroupsReplayPrefixCache: with --prefix-groups 3
// --prefix-length 256, every conversation after the first of its group
// finds its group's 256 tokens cached, and the server agrees with send's
// expectation on every request.
func TestPrefixGroupsReplayPrefixCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the whole pipeline")
	}
	bin := buildTools(t)
	srv := testserver.StartTest(t, testserver.Config{PrefixCacheBlock: 16})
	cmd := exec.Command("bash", "-c", `set -eo pipefail; b=$0
"$b/probe" --apply-chat-template --cache-bust first_turn_suffix --now 2025-07-10T12:00:00 \
  | "$b/compose" --isl 600 --osl 8 --conversations 9 --prefix-groups 3 --prefix-length 256 --cache-block-size 16 --model m \
  | "$b/send" --url "$1" --concurrency 1`, bin, srv.URL())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := withoutRunRecord(strings.Split(strings.TrimSpace(string(out)), "\n"))
	if len(lines) != 9 {
		t.Fatalf("%d records, want 9", len(lines))
	}
	for i, line := range lines {
		var rec struct {
			Index    int  `json:"conversation_index"`
			Expected *int `json:"expected_cached_tokens"`
			Result   struct {
				Usage struct {
					Cached *int `json:"cached_tokens"`
				} `json:"usage"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Expected == nil || rec.Result.Usage.Cached == nil || *rec.Expected != *rec.Result.Usage.Cached {
			t.Errorf("record %d: expected %v, server %v", i, rec.Expected, rec.Result.Usage.Cached)
			continue
		}
		if want := 256; rec.Index >= 3 && *rec.Expected < want {
			t.Errorf("conversation %d: %d cached, want its group's %d", rec.Index, *rec.Expected, want)
		}
	}
}
