package exact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
)

// TestServerFor: send --exact counts as the conversations were sized
// (absent: vllm, as in records written before compose --server), unless
// --server says otherwise, and refuses a profile the conversations were
// not sized for, or a mix.
func TestServerFor(t *testing.T) {
	convs := func(servers ...string) []records.Conversation {
		out := make([]records.Conversation, len(servers))
		for i, s := range servers {
			out[i] = records.Conversation{ID: fmt.Sprint("c", i), Server: s}
		}
		return out
	}
	for _, c := range []struct {
		servers []string
		want    string
		got     serverprofile.Profile
		err     string
	}{
		{[]string{"", ""}, "", serverprofile.VLLM, ""},
		{[]string{"sglang", "sglang"}, "", serverprofile.SGLang, ""},
		{[]string{"sglang"}, "sglang", serverprofile.SGLang, ""},
		{[]string{"", "vllm"}, "vllm", serverprofile.VLLM, ""},
		{[]string{"aiperf"}, "vllm", "", "conversation c0 was composed for --server aiperf (its targets are aiperf's counts), not vllm"},
		{[]string{""}, "sglang", "", "conversation c0 was composed for --server vllm"},
		{[]string{"vllm", "transformers"}, "", "", "conversation c1 was composed for --server transformers but an earlier one for vllm"},
	} {
		got, err := ServerFor(convs(c.servers...), c.want)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v --server %q: %v, want an error with %q", c.servers, c.want, err, c.err)
			}
			continue
		}
		if err != nil || got != c.got {
			t.Errorf("%v --server %q: %q, %v; want %q", c.servers, c.want, got, err, c.got)
		}
	}
}
