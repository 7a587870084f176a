package compose

import (
	"fmt"
	"math"

	"github.com/islkit/islkit/internal/cli"

	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/serverprofile"
)

// Options are compose's flags (AIPerf's names). Lengths are tokens.
type Options struct {
	ISL       int     // --isl: target wire ISL of each user turn
	ISLStddev float64 // --isl-stddev
	OSL       int     // --osl: max_tokens and the synthetic reply's length
	OSLStddev float64 // --osl-stddev
	// Conversations is --conversations.
	Conversations int
	Turns         int     // --turns: mean user turns per conversation
	TurnsStddev   float64 // --turns-stddev
	// SharedSystemPromptLength is --shared-system-prompt-length; 0 = none.
	SharedSystemPromptLength int
	Seed                     uint64
	// BenchmarkID is the marker digest's benchmark id; "" mints a fresh
	// one (NewBenchmarkID), so runs do not share markers. The same
	// BenchmarkID and Seed give the same bytes.
	BenchmarkID string
	// Exact sizes every turn against its rendered request (default);
	// false gives AIPerf's average compensation.
	Exact bool
	Model string // copied into each record's "model"
	// Server is the server profile whose count the turns are sized for
	// (--server; "" is vllm), recorded on each conversation.
	Server serverprofile.Profile
	// Workers composes conversations in parallel; output order and bytes
	// do not depend on it. <= 0 means 1.
	Workers int

	// PrefixGroups > 0 puts conversation i in group i mod PrefixGroups:
	// the first PrefixLength wire tokens of its first request are those of
	// every conversation of its group (--prefix-groups, --prefix-length).
	PrefixGroups, PrefixLength int
	// CacheBlockSize > 0 names every request's prefix-cache blocks
	// (--cache-block-size given explicitly: it costs one more encoding of
	// every request), so send can write expected_cached_tokens.
	CacheBlockSize int
	// Live writes what send --exact needs to make live later turns exact
	// (--live): the model the conversation was composed for and, per
	// turn, a reserve of the corpus text that follows the turn's text
	// (LiveReserve). Without it the output is what it always was.
	Live bool
	// Endpoint is the endpoint the requests are sized for (--endpoint;
	// "" is chat). It must be the probe's.
	Endpoint endpoint.Kind
	// AllowOverContext composes first turns longer than the model's
	// context length (model_max_length), which a server would refuse.
	AllowOverContext bool

	// Images are the user turns' images (--images and the image flags).
	Images ImageOptions

	// Set records which of the mean flags were given explicitly, so
	// "stddev without mean" can be refused.
	ISLSet, OSLSet, TurnsSet bool
}

// usagef is a usage error (cli.UsageError): a bad flag or flag
// combination, refused before any output, exit status 2.
func usagef(format string, args ...any) error { return cli.Usagef(format, args...) }

// MaxLength bounds every length flag (--isl, --osl, their spreads, the
// system prompt): 16 Mi tokens is above any model's context today, and a
// larger value would only grow text to gigabytes before anything fails.
const MaxLength = 1 << 24

// MaxTurns bounds --turns and its spread: a conversation's turns are
// composed in memory, and no context holds more.
const MaxTurns = 10_000

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Validate refuses impossible values and combinations that do not need the
// probe record; New checks those that do.
func (o Options) Validate() error {
	if err := o.Images.Validate(); err != nil {
		return err
	}
	switch {
	case !finite(o.ISLStddev) || !finite(o.OSLStddev) || !finite(o.TurnsStddev):
		return usagef("--isl-stddev, --osl-stddev and --turns-stddev must be numbers (got %g, %g, %g)", o.ISLStddev, o.OSLStddev, o.TurnsStddev)
	case o.Turns > MaxTurns || o.TurnsStddev > MaxTurns:
		return usagef("--turns and --turns-stddev must be at most %d (got %d and %g)", MaxTurns, o.Turns, o.TurnsStddev)
	case o.ISL < 1:
		return usagef("--isl must be at least 1 token (got %d)", o.ISL)
	case o.ISLStddev < 0:
		return usagef("--isl-stddev must not be negative (got %g)", o.ISLStddev)
	case o.OSL < 1:
		return usagef("--osl must be at least 1 token (got %d)", o.OSL)
	case o.OSLStddev < 0:
		return usagef("--osl-stddev must not be negative (got %g)", o.OSLStddev)
	case o.Conversations < 1:
		return usagef("--conversations must be at least 1 (got %d)", o.Conversations)
	case o.Turns < 1:
		return usagef("--turns must be at least 1 (got %d)", o.Turns)
	case o.TurnsStddev < 0:
		return usagef("--turns-stddev must not be negative (got %g)", o.TurnsStddev)
	case o.SharedSystemPromptLength < 0:
		return usagef("--shared-system-prompt-length must not be negative (got %d); 0 means no system prompt", o.SharedSystemPromptLength)
	case o.ISL > MaxLength || o.ISLStddev > MaxLength:
		return usagef("--isl and --isl-stddev must be at most %d tokens (got %d and %g)", MaxLength, o.ISL, o.ISLStddev)
	case o.OSL > MaxLength || o.OSLStddev > MaxLength:
		return usagef("--osl and --osl-stddev must be at most %d tokens (got %d and %g)", MaxLength, o.OSL, o.OSLStddev)
	case o.SharedSystemPromptLength > MaxLength:
		return usagef("--shared-system-prompt-length must be at most %d tokens (got %d)", MaxLength, o.SharedSystemPromptLength)
	case o.ISLStddev > 0 && !o.ISLSet:
		return usagef("--isl-stddev needs --isl (a spread without a mean)")
	case o.OSLStddev > 0 && !o.OSLSet:
		return usagef("--osl-stddev needs --osl (a spread without a mean)")
	case o.TurnsStddev > 0 && !o.TurnsSet:
		return usagef("--turns-stddev needs --turns (a spread without a mean)")
	case o.PrefixGroups < 0 || o.PrefixLength < 0:
		return usagef("--prefix-groups and --prefix-length must not be negative")
	case (o.PrefixGroups > 0) != (o.PrefixLength > 0):
		return usagef("--prefix-groups and --prefix-length go together")
	case o.CacheBlockSize < 0:
		return usagef("--cache-block-size must not be negative (got %d)", o.CacheBlockSize)
	case o.Live && !o.Exact:
		return usagef("--live needs --exact: send --exact resizes turns against counts compose made exact")
	case !o.Endpoint.OrChat().Valid():
		return usagef("--endpoint %q: valid values are %s", o.Endpoint, endpoint.Names())
	case !o.Endpoint.MultiTurn() && (o.Turns > 1 || o.TurnsStddev > 0):
		return usagef("--endpoint %s sends one prompt per conversation, without history: --turns must be 1 (got %d%s); use --endpoint chat or responses for multi-turn conversations",
			o.Endpoint, o.Turns, map[bool]string{true: fmt.Sprintf(", --turns-stddev %g", o.TurnsStddev), false: ""}[o.TurnsStddev > 0])
	case !o.Endpoint.Templated() && o.SharedSystemPromptLength > 0:
		return usagef("--endpoint %s has no system message (the prompt is bare text): drop --shared-system-prompt-length, or use --endpoint chat or responses", o.Endpoint)
	case o.Endpoint.OrChat() != endpoint.Chat && o.PrefixGroups > 0:
		return usagef("--prefix-groups is sized for chat requests only; drop it with --endpoint %s", o.Endpoint)
	case o.CacheBlockSize > 0 && !o.Exact:
		return usagef("--cache-block-size needs --exact: the blocks are named from the rendered requests")
	}
	return nil
}
