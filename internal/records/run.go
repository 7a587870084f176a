package records

// Run is the configuration of a live send run: written once, as send's
// first output line, so every summary and report can say what was run
// and measure --compare what differed. measure passes it through
// unchanged (it is no request) and copies it into the summary. Secrets
// are left out: no Authorization or API-key header value, no password in
// a URL, not in CommandLine either.
type Run struct {
	Kind          string `json:"kind"` // KindRun
	SchemaVersion int    `json:"schema_version"`
	// Tool and Version name the program that ran (send and its version).
	Tool    string `json:"tool"`
	Version string `json:"version"`
	// Started is when the run started (after the wait for StartAt), RFC
	// 3339 in UTC, to the nanosecond since shards' start skew is read
	// from it (records of earlier releases have whole seconds).
	Started string `json:"started"`
	// StartAt is send --start-at: the time the shards of a run across
	// machines agreed to start at, RFC 3339 as given.
	StartAt string `json:"start_at,omitempty"`
	// CommandLine is the tool's arguments, secrets replaced by "REDACTED".
	CommandLine []string `json:"command_line"`
	URL         string   `json:"url"`
	Endpoint    string   `json:"endpoint"`
	// Model is the "model" of the bodies: --model, else the conversations'
	// (several are joined by ", ").
	Model            string  `json:"model,omitempty"`
	Stream           bool    `json:"stream"`
	Concurrency      int     `json:"concurrency"`
	Rate             float64 `json:"rate"`
	RateDistribution string  `json:"rate_distribution,omitempty"`
	Requests         int     `json:"requests"`
	Duration         string  `json:"duration,omitempty"`
	Warmup           int     `json:"warmup,omitempty"`
	Recycle          bool    `json:"recycle,omitempty"`
	Shard            string  `json:"shard,omitempty"`
	Exact            bool    `json:"exact,omitempty"`
	Conversations    int     `json:"conversations"`
	// Headers are the names of the extra request headers (values left out).
	Headers []string `json:"headers,omitempty"`
	// Turns is the number of turns of the conversations the run sends
	// (its shard's): the requests of one pass, so measure can tell
	// whether merged shards are complete.
	Turns int `json:"turns,omitempty"`
}
