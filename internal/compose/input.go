package compose

import (
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/records"
)

var hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ReadProbe reads the one probe record from r. Unknown fields, a second
// record, another kind or schema version, and implausible values are
// refused with the file and line.
func ReadProbe(r io.Reader, name string) (*records.Probe, error) {
	jr := jsonl.NewReader(r, name)
	line, err := jr.Next()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: no probe record (run probe and pipe it in, or pass --probe FILE)", name)
	}
	if err != nil {
		return nil, err
	}
	var p records.Probe
	if err := records.Decode(line, records.KindProbe, &p); err != nil {
		return nil, err
	}
	if err := checkProbe(line, &p); err != nil {
		return nil, err
	}
	if _, err := jr.Next(); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: more than one record: probe writes exactly one", name)
	}
	return &p, nil
}

// checkProbe checks the values of the probe record decoded from line
// (records.Decode has checked its kind and schema version).
func checkProbe(line jsonl.Line, p *records.Probe) error {
	switch {
	case !hexSHA256.MatchString(p.Tokenizer.SHA256):
		return line.FieldErrorf("tokenizer.sha256", "%q is not a hex SHA-256", p.Tokenizer.SHA256)
	case p.ChatTemplate.SHA256 != "" && !hexSHA256.MatchString(p.ChatTemplate.SHA256):
		return line.FieldErrorf("chat_template.sha256", "%q is not a hex SHA-256", p.ChatTemplate.SHA256)
	case !p.CacheBust.Valid():
		return line.FieldErrorf("cache_bust", "invalid target %q", p.CacheBust)
	case p.MarkerTokens < 0:
		return line.FieldErrorf("marker_tokens", "negative (%d)", p.MarkerTokens)
	case p.CacheBust == cachebust.None && p.MarkerTokens != 0:
		return line.FieldErrorf("marker_tokens", "%d for target none", p.MarkerTokens)
	case p.Overhead.Fixed < 0 || p.Overhead.Wrap < 0:
		return line.FieldErrorf("template_overhead", "negative overhead (fixed %d, wrap %d)", p.Overhead.Fixed, p.Overhead.Wrap)
	case !p.Endpoint.Templated() && p.ChatTemplate.Applied:
		return line.FieldErrorf("chat_template.applied", "true for endpoint completions, whose prompt is never templated")
	case !p.Endpoint.Templated() && (p.Overhead.Wrap != 0 || p.Overhead.Fixed != p.Tokenizer.NumSpecialTokensToAdd):
		// A completions prompt costs only the special tokens the
		// tokenizer adds (probe.Run).
		return line.FieldErrorf("template_overhead", "for endpoint completions it is the tokenizer's %d special token(s) and no wrap (got fixed %d, wrap %d)",
			p.Tokenizer.NumSpecialTokensToAdd, p.Overhead.Fixed, p.Overhead.Wrap)
	case p.Endpoint.Templated() && !p.ChatTemplate.Applied && (p.Overhead.Fixed != 0 || p.Overhead.Wrap != 0):
		return line.FieldErrorf("template_overhead", "non-zero although the chat template was not applied")
	}
	if p.Now != "" {
		if _, err := chat.ParseNow(p.Now); err != nil {
			return line.FieldErrorf("now", "%v", err)
		}
	}
	return nil
}

// Model is what compose renders and counts with. Its Template is nil when
// the chat template is not applied or the model has none: wire ISL is then
// the bare count.
type Model = model.Model

// LoadModel resolves the model for probe record p (model.LoadPinned).
// tokenizerSpec "" reuses the probe's --tokenizer; chatTemplate "" reuses
// its --chat-template. The tokenizer and the template must be the ones the
// probe measured (SHA-256), or compensation would be for another model.
// now "" takes $ISLKIT_NOW, else the probe's pinned clock.
func LoadModel(p *records.Probe, tokenizerSpec, chatTemplate, now string) (*Model, error) {
	return LoadModelWith(p, model.Options{Tokenizer: tokenizerSpec, ChatTemplate: chatTemplate, Now: now})
}

// LoadModelWith is LoadModel with all the model flags (--renderer too:
// "" follows the probe's).
func LoadModelWith(p *records.Probe, o model.Options) (*Model, error) {
	return model.LoadPinned(p.Pin(), o, probeNamed, probeFix)
}

// modelFor is LoadModel for a model already resolved.
func modelFor(p *records.Probe, src *modelsrc.Source, chatTemplate, now string) (*Model, error) {
	return model.PinnedFromSource(src, p.Pin(), chatTemplate, now, probeNamed, probeFix)
}

// What names the pin LoadModel checks, and the fix of a mismatch.
const (
	probeNamed = "the probe record"
	probeFix   = "rerun probe with this model (or give compose the probe's --tokenizer and --chat-template)"
)
