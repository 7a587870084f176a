package records

// Metrics is one sample of the server's own Prometheus metrics, taken by
// send --scrape-metrics during a live run and written into the record
// stream between the requests; measure passes it through and reads the
// samples as a second witness of what the server counted.
type Metrics struct {
	Kind          string `json:"kind"` // KindMetrics
	SchemaVersion int    `json:"schema_version"`
	// URL is the scraped address, without a password.
	URL string `json:"url"`
	// Time is when the scrape was answered, RFC 3339 with nanoseconds in
	// UTC; ElapsedNs is the same instant on the run's clock (nanoseconds
	// since the run started, the clock of result.start_ns).
	Time      string `json:"time"`
	ElapsedNs int64  `json:"elapsed_ns"`
	// Stage is the load level running when the sample was taken, in a
	// staged run.
	Stage *Stage `json:"stage,omitempty"`
	// Samples are the series scraped, one per name and label set; a
	// histogram or summary is its _bucket, _sum and _count series. A
	// value that is not finite (NaN, ±Inf) is left out: JSON cannot carry
	// it.
	Samples []MetricSample `json:"samples,omitempty"`
	// Error says why the scrape failed; a failed scrape has no samples.
	Error string `json:"error,omitempty"`
}

// MetricSample is one series' value in a scrape.
type MetricSample struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Value  float64           `json:"value"`
}
