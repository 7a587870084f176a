// Package records defines the JSON records that flow between the four
// tools (probe | compose | send | measure). Each stream format has one Go
// type here and one JSON Schema in schemas/; every tool reads and writes
// them through internal/jsonl, so no tool parses another's output by hand.
//
// One file per stream, named after it:
//
//	probe.go         Probe (probe → compose), schemas/probe.schema.json
//	conversation.go  Conversation (compose → send), conversation.schema.json
//	request.go       Request (send → measure), request.schema.json
//	run.go           Run, send's first line (send → measure),
//	                 run.schema.json
//	metrics.go       Metrics, a sample of the server's Prometheus metrics
//	                 (send --scrape-metrics → measure),
//	                 metrics.schema.json
//	isl.go           ISL, the "isl" member measure adds to each request,
//	                 measurement.schema.json
//
// The summary (measure --summary-json, summary.schema.json) is
// report.Report. The package holds data only: it imports no logic package
// (TestImportsNoLogic), so every tool can depend on it.
package records

// SchemaVersion is the version of every record format in this package. A
// reader refuses a record whose schema_version it does not know.
const SchemaVersion = 1

// Kind values identify each record format in its "kind" field.
const (
	KindProbe        = "islkit.probe"
	KindConversation = "islkit.conversation"
	KindRequest      = "islkit.request"
	KindSummary      = "islkit.summary" // measure --summary-json
	KindRun          = "islkit.run"     // send's first line: the run's configuration
	KindMetrics      = "islkit.metrics" // send --scrape-metrics: one sample of the server's metrics
)
