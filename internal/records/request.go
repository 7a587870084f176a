package records

import (
	"encoding/json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
)

// Request is one line of send's output and measure's input: one chat
// request, planned (send --dry-run) or sent (live), with what came back.
// Live mode writes exactly one Request per request issued, success or not.
type Request struct {
	Kind          string `json:"kind"`           // KindRequest
	SchemaVersion int    `json:"schema_version"` // SchemaVersion
	BenchmarkID   string `json:"benchmark_id"`
	// Endpoint is the endpoint the payload is for (the conversation's);
	// absent in records written before the field existed: chat.
	Endpoint endpoint.Kind `json:"endpoint,omitempty"`
	// Server is the server profile the request was sized for (the
	// conversation's server, compose --server); absent: vllm, or not
	// known (a record not written by send).
	Server string `json:"server,omitempty"`
	// ConversationID and ConversationIndex identify the source
	// conversation (Conversation.ID / Index); Turn is the turn index.
	ConversationID    string `json:"conversation_id"`
	ConversationIndex int    `json:"conversation_index"`
	Turn              int    `json:"turn"`
	// Pass is the recycle pass (0 = first pass over the dataset); it is in
	// the marker digest, so each pass busts the cache anew.
	Pass int `json:"pass"`
	// TargetISL is compose's target wire ISL for the turn; ExpectedISL is
	// compose's exact-mode count of the dry-run request (Turn.WireISL),
	// absent when compose did not run in exact mode, and in live mode
	// after turn 0 (real replies change the history it was computed over)
	// and on recycle passes after the first that carry a marker (their
	// marker is not the one compose counted): there it is unknown, as send
	// without --exact has no model to count the request with.
	//
	// send --exact counts every live request as its server profile renders
	// it and sets ExpectedISL to that count: target_isl, unless
	// Unreachable says why not.
	TargetISL   int  `json:"target_isl"`
	ExpectedISL *int `json:"expected_isl,omitempty"`
	// ResizedFrom and ResizedTo are the bare tokens of the turn's user
	// text before and after send --exact resized it to meet TargetISL
	// against the real replies of the history; absent when the text went
	// out as compose wrote it.
	ResizedFrom *int `json:"resized_from,omitempty"`
	ResizedTo   *int `json:"resized_to,omitempty"`
	// Unreachable is set by send --exact when the target cannot be met:
	// the history (replies longer than budgeted) alone exceeds it, and
	// the request went out with the smallest text; or no text counts
	// exactly the target (then MinISL is the count of the closest text
	// found, usually below it: Short negative).
	Unreachable *Unreachable `json:"unreachable,omitempty"`
	// ExpectedCachedTokens is what a server with an unbounded prefix cache
	// (blocks of the conversation's cache_block_size, vLLM's hashing) would
	// find cached for this request, given the requests send issued before
	// it: set when compose named the request's cache blocks, absent in live
	// mode for later turns and recycle passes (their history or marker is
	// not the one compose named).
	ExpectedCachedTokens *int `json:"expected_cached_tokens,omitempty"`
	MaxTokens            int  `json:"max_tokens"`
	// OutputLength says how the body asks the server for max_tokens
	// output tokens (send --exact-osl); absent when the request sets no
	// max_tokens, and in records written before the field existed.
	OutputLength *OutputLength `json:"output_length,omitempty"`
	// Marker is the cache-bust marker text as injected ("" for none),
	// CacheBust the target and Landing where it landed.
	Marker    string            `json:"marker"`
	CacheBust cachebust.Target  `json:"cache_bust"`
	Landing   cachebust.Landing `json:"marker_landing"`
	// DryRun is true for records of send --dry-run (no Result).
	DryRun bool `json:"dry_run"`
	// SyntheticHistory is true when a live request's history used compose's
	// synthetic reply because an earlier turn of the session failed.
	SyntheticHistory bool `json:"synthetic_history,omitempty"`
	// Warmup marks the first --warmup requests of a live run, sent before
	// the measured ones; measure leaves them out of its summary.
	Warmup bool `json:"warmup,omitempty"`
	// Stage is the load level the request was sent at in a staged run
	// (send --stages); absent in a run of one load level.
	Stage *Stage `json:"stage,omitempty"`
	// ComposedFor is the model the request's conversation was composed
	// for (its composed_for), so that measure can warn when it counts
	// with another; absent for conversations that do not say.
	ComposedFor *ModelPin `json:"composed_for,omitempty"`
	// Chained is set on a turn sent with send --responses-chain after an
	// answer it names: its payload carries only the new turn and
	// previous_response_id, and the server prefills the conversation it
	// reconstructs, Reconstructed (the whole conversation's body), which
	// is what measure counts.
	Chained *Chain `json:"chained,omitempty"`
	// Payload is the exact request body, byte for byte as sent (or as a
	// live run would send it); omitted in live mode with --no-payload.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Result is what happened to a live request.
	Result *Result `json:"result,omitempty"`
}

// Stage is one load level of a staged run (send --stages): its place in
// the run and either the concurrency or the request rate it held.
type Stage struct {
	Index       int     `json:"index"`
	Concurrency int     `json:"concurrency,omitempty"`
	Rate        float64 `json:"rate,omitempty"`
}

// Chain is how a chained Responses turn was sent.
type Chain struct {
	PreviousResponseID string          `json:"previous_response_id"`
	Reconstructed      json.RawMessage `json:"reconstructed,omitempty"`
}

// OutputLength modes.
const (
	// OutputExact: send wrote the server's parameters for exactly
	// max_tokens output tokens (ignore_eos with min_tokens, or n_predict).
	OutputExact = "exact"
	// OutputUser: --extra-body set some of those parameters; send kept
	// them as given and wrote only the others (Params).
	OutputUser = "user"
	// OutputBestEffort: nothing asks for an exact length: the server
	// cannot be told (a hosted API, a counting rule rather than a
	// server), or --exact-osl=false. The model stops when it likes.
	OutputBestEffort = "best_effort"
)

// OutputLength is how a request's body asks for its output length.
type OutputLength struct {
	Mode string `json:"mode"`
	// Server is the server whose parameter names were used (send
	// --server, else the conversation's).
	Server string `json:"server"`
	// Params are the body members send wrote; UserSet the ones
	// --extra-body set, which send left as they were.
	Params  []string `json:"params,omitempty"`
	UserSet []string `json:"user_set,omitempty"`
}

// Result is the outcome of one live request. Times are nanoseconds.
type Result struct {
	// StartNs is the Unix time the request was issued.
	StartNs int64 `json:"start_ns"`
	// ScheduledNs is the Unix time the request was due: its trace row's
	// time (--schedule timestamps, first turns), its --rate slot, or else
	// when its worker was ready to send it (the previous request's end,
	// or the worker's --ramp-up start). ScheduleLagNs is StartNs −
	// ScheduledNs, how late it went out: send's own delay, and the wait
	// for a free worker when --concurrency holds back a --rate, or for
	// the warmup to end (that wait is QueueNs). send writes both on
	// every live record.
	ScheduledNs   *int64 `json:"scheduled_ns,omitempty"`
	ScheduleLagNs *int64 `json:"schedule_lag_ns,omitempty"`
	// SizingNs is the part of ScheduleLagNs that send --exact spent making
	// the request exact (rendering, counting and resizing it, and building
	// its body) before it went out; absent without --exact. It is not in
	// LatencyNs.
	SizingNs *int64 `json:"sizing_ns,omitempty"`
	// QueueNs is the part of ScheduleLagNs the request waited, due, for a
	// constraint of the schedule itself: a free worker (--concurrency
	// holding back a --rate or a trace's times) or the end of the
	// --warmup requests. Not the client falling behind; absent when the
	// request did not wait so.
	QueueNs *int64 `json:"queue_ns,omitempty"`
	// ClientCPU is send's own CPU use (the whole process, getrusage) over
	// the last window of at least 100 ms before the record was written, as
	// a fraction of the cores it may use (GOMAXPROCS; 1 = all busy);
	// absent before the first window ends.
	ClientCPU *float64 `json:"client_cpu,omitempty"`
	// LatencyNs is the end-to-end latency: request issued to last byte
	// (or to the failure).
	LatencyNs int64 `json:"latency_ns"`
	// TTFTNs is the time to the first chunk carrying output (content or
	// reasoning); absent when none arrived, and for a non-streamed
	// response, whose output comes with the whole body (LatencyNs).
	TTFTNs *int64 `json:"ttft_ns,omitempty"`
	// ITLNs are the gaps between successive output-carrying chunks.
	ITLNs []int64 `json:"itl_ns,omitempty"`
	// Status is the HTTP status, 0 when no response arrived.
	Status int  `json:"status"`
	OK     bool `json:"ok"`
	// Stream tells whether the response was parsed as SSE.
	Stream       bool   `json:"stream"`
	Chunks       int    `json:"chunks,omitempty"`
	FinishReason string `json:"finish_reason,omitempty"`
	OutputText   string `json:"output_text,omitempty"`
	Reasoning    string `json:"reasoning_text,omitempty"`
	// Retried is set when the request failed before any byte of it was
	// written (the server had reset the connection) and was sent again,
	// once, on a fresh connection; the timings are the second attempt's.
	// A request of which any byte was written is never sent again: its
	// failure is ErrReset.
	Retried bool `json:"retried,omitempty"`
	// ResponseID is a Responses answer's id, which a later turn sent with
	// send --responses-chain names as its previous_response_id; absent
	// for the other endpoints.
	ResponseID string `json:"response_id,omitempty"`
	// Note says what was unusual about a request that succeeded
	// nonetheless: a stream that ended without data: [DONE] after its
	// finish_reason and usage (send's NoteNoDone); absent otherwise.
	Note string `json:"note,omitempty"`
	// Usage is the server's last non-empty usage object, when reported.
	Usage *Usage        `json:"usage,omitempty"`
	Error *RequestError `json:"error,omitempty"`
}

// Usage is the token accounting the server reported.
type Usage struct {
	// PromptTokens is nil when the server's usage did not carry it: no
	// server count, rather than a count of 0.
	PromptTokens     *int `json:"prompt_tokens,omitempty"`
	CompletionTokens int  `json:"completion_tokens"`
	// TotalTokens is nil when the server's usage did not carry it
	// (records written before it was optional carry 0 then).
	TotalTokens     *int `json:"total_tokens,omitempty"`
	ReasoningTokens *int `json:"reasoning_tokens,omitempty"`
	CachedTokens    *int `json:"cached_tokens,omitempty"`
}

// Counts reports whether u counts anything. A stream may carry usage in
// several chunks: AIPerf, send and measure take the last one that counts,
// whole.
func (u *Usage) Counts() bool {
	return u != nil && (u.PromptTokens != nil && *u.PromptTokens != 0 || u.CompletionTokens != 0 || u.TotalTokens != nil && *u.TotalTokens != 0)
}

// Error kinds of a failed request.
const (
	ErrHTTP4xx     = "http_4xx"     // a 4xx status other than 429
	ErrRateLimited = "rate_limited" // 429
	ErrHTTP5xx     = "http_5xx"
	ErrConnection  = "connection" // refused, or reset before the request was written
	// ErrReset is a connection reset or closed by the server after the
	// request (whole or in part) was written, before any response byte:
	// the server may have processed it, so it is not sent again.
	ErrReset     = "reset"
	ErrTimeout   = "timeout"   // --timeout elapsed (stalls end here)
	ErrTruncated = "truncated" // the body or SSE stream ended early
	ErrProtocol  = "protocol"  // a response send could not parse
	ErrCancelled = "cancelled" // the run was interrupted past its grace period
	// ErrServer is an error the server reported inside a 200 response
	// (`data: {"error": ...}` mid-stream, or an error object as the body).
	ErrServer = "server_error"
)

// RequestError says why a request failed.
type RequestError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Body is the start of the response body, for HTTP errors.
	Body string `json:"body,omitempty"`
	// Code and Type are the server's error object's "code" (a number
	// written as text, or the server's string) and "type", when it sent one.
	Code string `json:"code,omitempty"`
	Type string `json:"type,omitempty"`
}
