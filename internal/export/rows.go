package export

// The rows of the four tables. Each struct is the one definition of its
// table: the Parquet schema is read from it by parquet-go, the CSV header
// and cells by writeCSV, in field order. A pointer is a nullable column
// (null in Parquet, an empty cell in CSV); schemas/export.md documents
// every column (TestDocListsTheColumnsWritten).

// RequestRow is one request measure read (send records, AIPerf exports,
// OpenAI bodies), warmup ones included (Warmup says so).
type RequestRow struct {
	Row               int64    `parquet:"row"`
	RecordKind        *string  `parquet:"record_kind,optional"`
	BenchmarkID       *string  `parquet:"benchmark_id,optional"`
	ConversationID    *string  `parquet:"conversation_id,optional"`
	ConversationIndex *int64   `parquet:"conversation_index,optional"`
	Turn              *int64   `parquet:"turn,optional"`
	Pass              *int64   `parquet:"pass,optional"`
	Endpoint          *string  `parquet:"endpoint,optional"`
	Server            *string  `parquet:"server,optional"`
	Profile           *string  `parquet:"profile,optional"`
	StageIndex        *int64   `parquet:"stage_index,optional"`
	StageConcurrency  *int64   `parquet:"stage_concurrency,optional"`
	StageRate         *float64 `parquet:"stage_rate,optional"`
	Warmup            bool     `parquet:"warmup"`
	DryRun            bool     `parquet:"dry_run"`
	Measured          bool     `parquet:"measured"`
	NoPayload         bool     `parquet:"no_payload"`

	TargetISL     *int64  `parquet:"target_isl,optional"`
	ExpectedISL   *int64  `parquet:"expected_isl,optional"`
	ISL           *int64  `parquet:"isl,optional"`
	ISLCounted    *string `parquet:"isl_counted,optional"`
	ISLTemplated  *int64  `parquet:"isl_templated,optional"`
	ISLBare       *int64  `parquet:"isl_bare,optional"`
	ServerISL     *int64  `parquet:"server_isl,optional"`
	ISLVsTarget   *int64  `parquet:"isl_vs_target,optional"`
	ISLVsExpected *int64  `parquet:"isl_vs_expected,optional"`
	ISLVsServer   *int64  `parquet:"isl_vs_server,optional"`
	ISLError      *string `parquet:"isl_error,optional"`
	TemplateError *string `parquet:"template_error,optional"`
	Images        *int64  `parquet:"images,optional"`
	ImageTokens   *int64  `parquet:"image_tokens,optional"`

	ExpectedCachedTokens *int64  `parquet:"expected_cached_tokens,optional"`
	CachedTokens         *int64  `parquet:"cached_tokens,optional"`
	MaxTokens            *int64  `parquet:"max_tokens,optional"`
	PromptTokens         *int64  `parquet:"prompt_tokens,optional"`
	OutputTokens         *int64  `parquet:"output_tokens,optional"`
	OutputTokensCounted  bool    `parquet:"output_tokens_counted"`
	ReasoningTokens      *int64  `parquet:"reasoning_tokens,optional"`
	OSLCause             *string `parquet:"osl_cause,optional"`

	StartNs       *int64   `parquet:"start_ns,optional"`
	EndNs         *int64   `parquet:"end_ns,optional"`
	ScheduledNs   *int64   `parquet:"scheduled_ns,optional"`
	ScheduleLagNs *int64   `parquet:"schedule_lag_ns,optional"`
	QueueNs       *int64   `parquet:"queue_ns,optional"`
	SizingNs      *int64   `parquet:"sizing_ns,optional"`
	ClientCPU     *float64 `parquet:"client_cpu,optional"`
	LatencyNs     *int64   `parquet:"latency_ns,optional"`
	TTFTNs        *int64   `parquet:"ttft_ns,optional"`
	TPOTNs        *float64 `parquet:"tpot_ns,optional"`
	ITLCount      *int64   `parquet:"itl_count,optional"`
	ITLMeanNs     *float64 `parquet:"itl_mean_ns,optional"`
	ITLMaxNs      *int64   `parquet:"itl_max_ns,optional"`
	Chunks        *int64   `parquet:"chunks,optional"`

	Status        *int64  `parquet:"status,optional"`
	OK            *bool   `parquet:"ok,optional"`
	Stream        *bool   `parquet:"stream,optional"`
	Retried       bool    `parquet:"retried"`
	FinishReason  *string `parquet:"finish_reason,optional"`
	ErrorKind     *string `parquet:"error_kind,optional"`
	ErrorMessage  *string `parquet:"error_message,optional"`
	ModelMismatch *string `parquet:"model_mismatch,optional"`
}

// ITLRow is one gap between output chunks of a live request: every gap
// the summary's itl_ms pools, so its percentiles can be recomputed.
type ITLRow struct {
	Row   int64 `parquet:"row"`
	Index int64 `parquet:"index"`
	ITLNs int64 `parquet:"itl_ns"`
}

// StageRow is the performance of the requests sent at one load level
// (records.Request.Stage), or of the requests without a stage.
type StageRow struct {
	StageIndex            *int64   `parquet:"stage_index,optional"`
	Concurrency           *int64   `parquet:"concurrency,optional"`
	Rate                  *float64 `parquet:"rate,optional"`
	Requests              int64    `parquet:"requests"`
	Succeeded             int64    `parquet:"succeeded"`
	Failed                int64    `parquet:"failed"`
	Cancelled             int64    `parquet:"cancelled"`
	DurationS             float64  `parquet:"duration_s"`
	InputTokens           int64    `parquet:"input_tokens"`
	OutputTokens          int64    `parquet:"output_tokens"`
	RequestThroughput     float64  `parquet:"request_throughput"`
	OutputTokenThroughput float64  `parquet:"output_token_throughput"`
	TotalTokenThroughput  float64  `parquet:"total_token_throughput"`
	PeakConcurrency       int64    `parquet:"peak_concurrency"`
	MeanConcurrency       float64  `parquet:"mean_concurrency"`
	TTFTMeanMs            *float64 `parquet:"ttft_mean_ms,optional"`
	TTFTP50Ms             *float64 `parquet:"ttft_p50_ms,optional"`
	TTFTP90Ms             *float64 `parquet:"ttft_p90_ms,optional"`
	TTFTP99Ms             *float64 `parquet:"ttft_p99_ms,optional"`
	TPOTMeanMs            *float64 `parquet:"tpot_mean_ms,optional"`
	TPOTP50Ms             *float64 `parquet:"tpot_p50_ms,optional"`
	TPOTP99Ms             *float64 `parquet:"tpot_p99_ms,optional"`
	ITLMeanMs             *float64 `parquet:"itl_mean_ms,optional"`
	ITLP50Ms              *float64 `parquet:"itl_p50_ms,optional"`
	ITLP99Ms              *float64 `parquet:"itl_p99_ms,optional"`
	E2EMeanMs             *float64 `parquet:"e2e_mean_ms,optional"`
	E2EP50Ms              *float64 `parquet:"e2e_p50_ms,optional"`
	E2EP90Ms              *float64 `parquet:"e2e_p90_ms,optional"`
	E2EP99Ms              *float64 `parquet:"e2e_p99_ms,optional"`
	GoodputRequests       *int64   `parquet:"goodput_requests,optional"`
	GoodputThroughput     *float64 `parquet:"goodput_throughput,optional"`
	GoodputFraction       *float64 `parquet:"goodput_fraction,optional"`
	ClientSaturated       *bool    `parquet:"client_saturated,optional"`
	SLOVerdict            *string  `parquet:"slo_verdict,optional"`
}

// MetricRow is one series' value in one scrape of the server's metrics
// (an islkit.metrics record), or one failed scrape (Error set, no name).
type MetricRow struct {
	Time             string   `parquet:"time"`
	ElapsedNs        int64    `parquet:"elapsed_ns"`
	URL              string   `parquet:"url"`
	StageIndex       *int64   `parquet:"stage_index,optional"`
	StageConcurrency *int64   `parquet:"stage_concurrency,optional"`
	StageRate        *float64 `parquet:"stage_rate,optional"`
	Name             *string  `parquet:"name,optional"`
	Labels           *string  `parquet:"labels,optional"`
	Value            *float64 `parquet:"value,optional"`
	Error            *string  `parquet:"error,optional"`
}
