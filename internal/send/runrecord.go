package send

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/report"
	"github.com/islkit/islkit/internal/version"
	"github.com/islkit/islkit/internal/wire"
)

// RunRecord is the islkit.run record of a live run: its configuration,
// secrets removed (see RedactArgs, RedactURL). convs and models describe
// the dataset; headers are the extra request headers, whose values are
// left out.
func RunRecord(args []string, o Config, stream bool, models []string, convs int, headers []string, exact bool, started time.Time) records.Run {
	r := records.Run{Kind: records.KindRun, SchemaVersion: records.SchemaVersion,
		Tool: "send", Version: version.String(), Started: started.UTC().Format(time.RFC3339Nano),
		CommandLine: RedactArgs(args), URL: wire.RedactURL(o.URL), Endpoint: string(o.Endpoint),
		Model: strings.Join(models, ", "), Stream: stream, Concurrency: o.Concurrency, Rate: o.Rate,
		Requests: o.Requests, Warmup: o.Warmup, Recycle: o.Recycle, Exact: exact, Conversations: convs}
	if o.Rate > 0 {
		r.RateDistribution = o.RateDistribution
	}
	if o.Duration > 0 {
		r.Duration = o.Duration.String()
	}
	if o.Shard.N > 1 {
		r.Shard = fmt.Sprintf("%d/%d", o.Shard.I, o.Shard.N)
	}
	if p := o.Stages; p != nil {
		r.Stages = &records.RunStages{Spec: p.Spec, Kind: p.Levels.Kind, Levels: p.Levels.Values,
			Requests: p.Requests, Warmup: o.Warmup, UntilSLO: p.UntilSLO}
		if p.Duration > 0 {
			r.Stages.Duration = p.Duration.String()
		}
		if p.Cooldown > 0 {
			r.Stages.Cooldown = p.Cooldown.String()
		}
		if p.SLO != (report.SLO{}) {
			r.Stages.SLO = p.SLO.String()
		}
		if p.UntilSLO {
			r.Stages.MinGoodput, r.Stages.Resolution = p.minGoodput(), p.resolution()
		}
	}
	r.Headers = append([]string(nil), headers...)
	sort.Strings(r.Headers)
	return r
}

// redacted replaces a secret.
const redacted = "REDACTED"

// RedactArgs returns send's arguments with the secrets replaced: the value
// of --api-key, of a header (-H/--header NAME=VALUE: every value, since
// any header may carry a credential) and the password of every URL.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	secretNext := false
	for i, a := range args {
		switch {
		case secretNext:
			out[i], secretNext = redactValue(a), false
		case a == "--api-key":
			out[i], secretNext = a, true
		case strings.HasPrefix(a, "--api-key="):
			out[i] = "--api-key=" + redacted
		case a == "-H" || a == "--header":
			out[i], secretNext = a, true
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + redactValue(strings.TrimPrefix(a, "--header="))
		case strings.HasPrefix(a, "-H") && len(a) > 2:
			out[i] = "-H" + redactValue(a[2:])
		case strings.HasPrefix(a, "--") && strings.Contains(a, "="):
			name, value, _ := strings.Cut(a, "=") // --url=URL
			out[i] = name + "=" + wire.RedactURL(value)
		default:
			out[i] = wire.RedactURL(a)
		}
	}
	return out
}

// redactValue keeps a header's name (NAME=VALUE) and hides its value; a
// bare value (--api-key's) is hidden whole.
func redactValue(v string) string {
	if name, _, ok := strings.Cut(v, "="); ok {
		return name + "=" + redacted
	}
	return redacted
}
