package serverprofile

import (
	"strings"
	"testing"
	"time"

	"github.com/islkit/islkit/internal/extract"
)

// FuzzDeepSeekV32 feeds chat bodies to DeepSeek-V3.2's renderer (vLLM's
// and SGLang's variants): no
// panic, and the text is bounded by the body's size (the encoder's fixed
// texts, plus each value dumped at most a few times longer: Python
// spells 1e15 as 1000000000000000.0).
func FuzzDeepSeekV32(f *testing.F) {
	for _, b := range []string{
		`{"messages":[{"role":"user","content":"hi"}]}`,
		`{"messages":[{"role":"system","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},{"role":"user","content":"q"},{"role":"assistant","content":null,"reasoning":"r","tool_calls":[{"id":"1","function":{"name":"f","arguments":"{\"a\":1e15,\"b\":\"x\",\"a\":[{}]}"}}]},{"role":"tool","tool_call_id":"1","content":"x"}],"chat_template_kwargs":{"thinking":true}}`,
		`{"messages":[{"role":"developer","content":"d"},{"role":"user","content":"u"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object","properties":{"a":{"type":"number","default":1.5e300}}}}}],"chat_template_kwargs":{"enable_thinking":1}}`,
	} {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ex, err := extract.Body(body)
		if err != nil || ex.Body == nil {
			return
		}
		for _, v := range []dsVariant{dsVLLM, dsSGLang} {
			pr, err := renderDeepSeekV32(v, ex, false, nil)
			if err != nil {
				continue
			}
			if limit := 4096 + 24*len(body); len(pr.Text) > limit {
				t.Fatalf("%s: %d bytes rendered from a %d-byte body", v.server, len(pr.Text), len(body))
			}
		}
	})
}

// TestDeepSeekV32HostileNesting: arguments and tool schemas nested very
// deep render or fail in bounded time, never crash.
func TestDeepSeekV32HostileNesting(t *testing.T) {
	deep := strings.Repeat(`[`, 100000) + strings.Repeat(`]`, 100000)
	for _, body := range []string{
		`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":` + deep + `}}]}`,
		`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{\"a\":` + deep + `}"}}]}]}`,
	} {
		ex, err := extract.Body([]byte(body))
		if err != nil {
			continue // refused before rendering
		}
		start := time.Now()
		_, _ = renderDeepSeekV32(dsVLLM, ex, false, nil)
		_, _ = renderDeepSeekV32(dsSGLang, ex, false, nil)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%d-byte body: %v", len(body), d)
		}
	}
}
