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
	// Stages is the plan of a staged run (send --stages); absent in a run
	// of one load level.
	Stages *RunStages `json:"stages,omitempty"`
}

// RunStages is the plan of a staged run: the levels as given and as
// expanded, each stage's length, the cool-down between two, and
// --until-slo's search (its SLO, the goodput fraction a stage needs, the
// resolution it bisects to). Bisection stages are not listed: their
// levels depend on the verdicts; each request record carries its stage.
type RunStages struct {
	Spec       string    `json:"spec"`
	Kind       string    `json:"kind"` // concurrency or rate
	Levels     []float64 `json:"levels"`
	Duration   string    `json:"stage_duration,omitempty"`
	Requests   int       `json:"stage_requests,omitempty"`
	Cooldown   string    `json:"cooldown,omitempty"`
	Warmup     int       `json:"warmup_per_stage,omitempty"`
	UntilSLO   bool      `json:"until_slo,omitempty"`
	SLO        string    `json:"slo,omitempty"` // as --slo takes it
	MinGoodput float64   `json:"min_goodput,omitempty"`
	Resolution float64   `json:"resolution,omitempty"`
}
