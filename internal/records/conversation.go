package records

import (
	"encoding/json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/endpoint"
)

// Conversation is one line of compose's output and send's input: a
// synthetic multi-turn conversation whose turns are sized so that each
// request reaches its target ISL on the wire.
type Conversation struct {
	Kind          string `json:"kind"`           // KindConversation
	SchemaVersion int    `json:"schema_version"` // SchemaVersion
	// ID is the conversation id; it is also the marker digest's trace id.
	ID string `json:"id"`
	// Index is the conversation's position in the dataset (0-based); it is
	// the marker digest's trajectory index.
	Index       int    `json:"index"`
	BenchmarkID string `json:"benchmark_id"`
	// Endpoint is the endpoint the conversation was sized for (compose
	// --endpoint); send builds that endpoint's bodies. Absent in records
	// written before the field existed: chat.
	Endpoint endpoint.Kind `json:"endpoint,omitempty"`
	// Server is the server profile the turns were sized for (compose
	// --server: vllm, sglang, transformers, aiperf), whose count of each
	// request is its wire ISL. Absent in records written before the field
	// existed: vllm.
	Server string `json:"server,omitempty"`
	// CacheBust is the marker target and Landing where it lands (the
	// routing table's answer for this conversation).
	CacheBust cachebust.Target  `json:"cache_bust"`
	Landing   cachebust.Landing `json:"marker_landing"`
	// SystemPrompt is the shared system prompt, when there is one.
	SystemPrompt *SystemPrompt `json:"system_prompt,omitempty"`
	Turns        []Turn        `json:"turns"`
	// Exact tells whether turns were sized against the rendered request
	// (compose --exact) or with the probe's average constants.
	Exact bool `json:"exact"`
	// Model is the name send puts in the payload's "model" field unless
	// send overrides it.
	Model string `json:"model,omitempty"`
	// Trace is set when the conversation replays a row of a trace
	// (compose --trace): one turn, target_isl the row's input_length.
	Trace *TraceRef `json:"trace,omitempty"`
	// PrefixGroup is the conversation's shared-prefix group (compose
	// --prefix-groups): its first request opens with the group's
	// --prefix-length wire tokens.
	PrefixGroup *int `json:"prefix_group,omitempty"`
	// CacheBlockSize is the prefix-cache block the turns' CacheBlocks are
	// cut in (compose --cache-block-size); 0 when they carry none.
	CacheBlockSize int `json:"cache_block_size,omitempty"`
	// ComposedFor pins the model the turns were sized with (tokenizer
	// and chat template SHA-256, source, clock): send copies it into every
	// request record, so measure can say when it counts with another
	// model, and send --exact refuses another model (its counts would be
	// another model's). Written by every compose run; records from before
	// carry it only when composed with --live.
	ComposedFor *ModelPin `json:"composed_for,omitempty"`
	// Tools is the dataset dialog's "tools" (compose --dataset, OpenAI
	// messages), sent with every request as given.
	Tools json.RawMessage `json:"tools,omitempty"`
}

// Message is a dataset message replayed as the dataset gave it (compose
// --dataset, OpenAI messages): its content a string (Content), text parts
// (Parts) or null (neither), and its name, tool calls, tool call id and
// reasoning (the dataset's reasoning_content or reasoning).
type Message struct {
	Role    string   `json:"role"`
	Content *string  `json:"content,omitempty"`
	Parts   []string `json:"parts,omitempty"`
	// Images are a user message's image parts (an OpenAI-messages
	// dataset's image_url parts, kept as given), each at its index in the
	// content list; Parts are the text parts in order around them.
	Images           []PartImage     `json:"images,omitempty"`
	Name             string          `json:"name,omitempty"`
	ToolCalls        json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
}

// TraceRef is where a conversation came from in a Mooncake trace and how
// its prompt maps onto the trace's blocks.
type TraceRef struct {
	// Line is the row's line in the trace file.
	Line int `json:"line"`
	// TimestampMs is the row's arrival time in milliseconds, when the trace
	// has one (send --schedule timestamps replays it).
	TimestampMs *float64 `json:"timestamp_ms,omitempty"`
	HashIDs     []int64  `json:"hash_ids"`
	// BlockSize is the tokens per hash id (compose --block-size).
	BlockSize int `json:"block_size"`
	// FullBlocks is how many leading blocks are entirely the content of
	// their hash-id chain: wire tokens [0, FullBlocks·BlockSize) are the
	// same token ids in every request whose hash_ids start the same way.
	// The blocks after them hold this request's own tail (the last,
	// partial block, with the template's end and the marker).
	FullBlocks int `json:"full_blocks"`
}

// SystemPrompt is the shared system prompt of a conversation.
type SystemPrompt struct {
	Text string `json:"text"`
	// Parts, when set, are the text parts the system message carries on
	// the wire (a dataset's list content); Text is then their
	// concatenation.
	Parts []string `json:"parts,omitempty"`
	// RequestedTokens is the user's --shared-system-prompt-length;
	// BareTokens is the text's own count, which is smaller by the marker
	// cost when the marker lands here.
	RequestedTokens int `json:"requested_tokens"`
	BareTokens      int `json:"bare_tokens"`
}

// Turn is one user turn and the synthetic assistant reply that follows it
// in the history of later requests.
type Turn struct {
	Index int `json:"index"`
	// TargetISL is the wire ISL this turn's request should have.
	TargetISL int `json:"target_isl"`
	// Text is the user message content, without any marker.
	Text       string `json:"text"`
	BareTokens int    `json:"bare_tokens"`
	MaxTokens  int    `json:"max_tokens"`
	// Assistant is the synthetic reply (MaxTokens tokens) used as history
	// by later turns in a dry run.
	Assistant string `json:"assistant"`
	// WireISL is the exact templated count of this turn's request, marker
	// included, as send will build it in a dry run (exact mode only).
	WireISL *int `json:"wire_isl,omitempty"`
	// Unreachable is set when the target is below what the template and
	// marker alone cost: MinISL is the smallest reachable wire ISL.
	Unreachable *Unreachable `json:"unreachable,omitempty"`
	// CacheBlocks names the full prefix-cache blocks of this turn's
	// dry-run request (prefixcache.Chain over its wire tokens, blocks of
	// the conversation's CacheBlockSize), so send can predict a server's
	// cached tokens without a tokenizer.
	CacheBlocks string `json:"cache_blocks,omitempty"`
	// User is the user message when the dataset gave more than a string
	// (text parts, a name): Text is then its last text part, the one
	// --isl resizes, and the message goes on the wire with its shape.
	User *Message `json:"user,omitempty"`
	// History is what follows the user message in the dataset up to the
	// next one, when it is more than one assistant text: assistant tool
	// calls, tool results, names, reasoning, parts. Later requests replay
	// it in place of Assistant (which is then the last assistant text).
	History []Message `json:"history,omitempty"`
	// Reserve is the corpus text that follows Text (compose --live), a
	// little more than the previous turn's MaxTokens: send --exact grows
	// the turn with a prefix of it when the live history is shorter than
	// compose budgeted, so the resized text continues where the corpus
	// does and the run is reproducible from its records.
	Reserve string `json:"reserve,omitempty"`
	// Images go in the user message before its text, in order (compose
	// --images, --image-dir): the message is then a list of image parts
	// and one text part.
	Images []Image `json:"images,omitempty"`
}

// Image is an image of a user turn: a data URL, and its pixel size (as
// its header says: what the server's processor sees).
type Image struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// PartImage is an image part of a dataset message: its URL as the
// dataset gave it (a data URL, or a remote one) and its index in the
// message's content list.
type PartImage struct {
	At  int    `json:"at"`
	URL string `json:"url"`
}

// Unreachable explains a turn whose target ISL cannot be met.
type Unreachable struct {
	MinISL int `json:"min_isl"`
	// Short is MinISL − TargetISL: by how much the request overshoots.
	Short  int    `json:"short"`
	Reason string `json:"reason"`
}
