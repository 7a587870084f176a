package send

import (
	"math"
	"strconv"

	"github.com/islkit/islkit/internal/records"
)

// appendRecord writes a live record as the jsonl writer's encoder does
// (goccy/go-json without HTML escaping: TestAppendRecord, FuzzAppendRecord
// compare them), field by field: the reflective encoder was the largest
// part of send's own CPU per non-streamed request (make bench-send). false
// for the rare shapes it leaves to the encoder (a payload, an unreachable
// target).
func appendRecord(b []byte, r *records.Request) ([]byte, bool) {
	if len(r.Payload) > 0 || r.Unreachable != nil {
		return b, false
	}
	b = append(b, `{"kind":`...)
	b = appendJSONString(b, r.Kind, false)
	b = append(b, `,"schema_version":`...)
	b = strconv.AppendInt(b, int64(r.SchemaVersion), 10)
	b = append(b, `,"benchmark_id":`...)
	b = appendJSONString(b, r.BenchmarkID, false)
	if r.Endpoint != "" {
		b = append(b, `,"endpoint":`...)
		b = appendJSONString(b, string(r.Endpoint), false)
	}
	b = append(b, `,"conversation_id":`...)
	b = appendJSONString(b, r.ConversationID, false)
	b = appendInt(b, `,"conversation_index":`, r.ConversationIndex)
	b = appendInt(b, `,"turn":`, r.Turn)
	b = appendInt(b, `,"pass":`, r.Pass)
	b = appendInt(b, `,"target_isl":`, r.TargetISL)
	b = appendIntPtr(b, `,"expected_isl":`, r.ExpectedISL)
	b = appendIntPtr(b, `,"resized_from":`, r.ResizedFrom)
	b = appendIntPtr(b, `,"resized_to":`, r.ResizedTo)
	b = appendIntPtr(b, `,"expected_cached_tokens":`, r.ExpectedCachedTokens)
	b = appendInt(b, `,"max_tokens":`, r.MaxTokens)
	b = append(b, `,"marker":`...)
	b = appendJSONString(b, r.Marker, false)
	b = append(b, `,"cache_bust":`...)
	b = appendJSONString(b, string(r.CacheBust), false)
	b = append(b, `,"marker_landing":`...)
	b = appendJSONString(b, r.Landing.String(), false)
	b = append(b, `,"dry_run":`...)
	b = strconv.AppendBool(b, r.DryRun)
	if r.SyntheticHistory {
		b = append(b, `,"synthetic_history":true`...)
	}
	if r.Warmup {
		b = append(b, `,"warmup":true`...)
	}
	if res := r.Result; res != nil {
		var ok bool
		if b, ok = appendResult(append(b, `,"result":`...), res); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

func appendResult(b []byte, r *records.Result) ([]byte, bool) {
	b = append(b, `{"start_ns":`...)
	b = strconv.AppendInt(b, r.StartNs, 10)
	b = appendInt64Ptr(b, `,"scheduled_ns":`, r.ScheduledNs)
	b = appendInt64Ptr(b, `,"schedule_lag_ns":`, r.ScheduleLagNs)
	if r.ClientCPU != nil {
		f := *r.ClientCPU
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return b, false // the encoder's error
		}
		b = appendFloat(append(b, `,"client_cpu":`...), f)
	}
	b = append(b, `,"latency_ns":`...)
	b = strconv.AppendInt(b, r.LatencyNs, 10)
	b = appendInt64Ptr(b, `,"ttft_ns":`, r.TTFTNs)
	if len(r.ITLNs) > 0 {
		b = append(b, `,"itl_ns":[`...)
		for i, v := range r.ITLNs {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, v, 10)
		}
		b = append(b, ']')
	}
	b = appendInt(b, `,"status":`, r.Status)
	b = append(b, `,"ok":`...)
	b = strconv.AppendBool(b, r.OK)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, r.Stream)
	if r.Chunks != 0 {
		b = appendInt(b, `,"chunks":`, r.Chunks)
	}
	b = appendNonEmpty(b, `,"finish_reason":`, r.FinishReason)
	b = appendNonEmpty(b, `,"output_text":`, r.OutputText)
	b = appendNonEmpty(b, `,"reasoning_text":`, r.Reasoning)
	if r.Retried {
		b = append(b, `,"retried":true`...)
	}
	if u := r.Usage; u != nil {
		b = append(b, `,"usage":{`...)
		if u.PromptTokens != nil {
			b = strconv.AppendInt(append(b, `"prompt_tokens":`...), int64(*u.PromptTokens), 10)
			b = append(b, ',')
		}
		b = appendInt(b, `"completion_tokens":`, u.CompletionTokens)
		b = appendInt(b, `,"total_tokens":`, u.TotalTokens)
		b = appendIntPtr(b, `,"reasoning_tokens":`, u.ReasoningTokens)
		b = appendIntPtr(b, `,"cached_tokens":`, u.CachedTokens)
		b = append(b, '}')
	}
	if e := r.Error; e != nil {
		b = append(b, `,"error":{"kind":`...)
		b = appendJSONString(b, e.Kind, false)
		b = append(b, `,"message":`...)
		b = appendJSONString(b, e.Message, false)
		b = appendNonEmpty(b, `,"body":`, e.Body)
		b = appendNonEmpty(b, `,"code":`, e.Code)
		b = appendNonEmpty(b, `,"type":`, e.Type)
		b = append(b, '}')
	}
	return append(b, '}'), true
}

func appendInt(b []byte, key string, v int) []byte {
	return strconv.AppendInt(append(b, key...), int64(v), 10)
}

func appendIntPtr(b []byte, key string, v *int) []byte {
	if v == nil {
		return b
	}
	return appendInt(b, key, *v)
}

func appendInt64Ptr(b []byte, key string, v *int64) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendInt(append(b, key...), *v, 10)
}

func appendNonEmpty(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return appendJSONString(append(b, key...), s, false)
}

// appendFloat writes f as encoding/json does (ES6 number formatting).
func appendFloat(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
