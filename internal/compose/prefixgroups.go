package compose

import (
	"fmt"
	"strings"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/prefixcache"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/request"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/sizing"
)

// prefixGroup is the text every conversation of one group opens its first
// user turn with, and the SHA-256 of the first PrefixLength wire tokens it
// gives.
type prefixGroup struct {
	text string
	sum  [32]byte
}

// splitTemplate renders a one-message chat request around a sentinel as
// server profile p does: header is what precedes the user content on the
// wire, tail what follows it.
func splitTemplate(m *Model, p serverprofile.Profile) (header, tail string, err error) {
	if m.Template == nil {
		return "", "", nil
	}
	req := &request.Request{Messages: []request.Message{{Role: "user", Content: sentinel}}}
	pr, err := serverprofile.PromptOf(orDefault(p), req, m.Template, m.Now)
	if err != nil {
		return "", "", fmt.Errorf("rendering a request: %w", err)
	}
	text := string(pr.Text)
	if strings.Count(text, sentinel) != 1 {
		return "", "", fmt.Errorf("the chat template of %s does not place the user content verbatim once", m.Source.Name)
	}
	header, tail, _ = strings.Cut(text, sentinel)
	return header, tail, nil
}

// preparePrefixes cuts one prefix per group (--prefix-groups) so that the
// template header and the prefix are exactly PrefixLength wire tokens;
// each prefix ends with a non-space and the turn's own text follows after
// a space, where the pre-tokenizers cut, so the prefix's tokens do not
// depend on what follows.
func (c *Composer) preparePrefixes() error {
	o := c.opts
	switch {
	case !o.Exact:
		return usagef("--prefix-groups needs --exact: the shared prefix is made of exact wire tokens")
	case o.SharedSystemPromptLength > 0:
		return usagef("--prefix-groups with --shared-system-prompt-length: the prefix groups replace the shared system prompt")
	case c.comp.Landing.Slot != cachebust.NoSlot && c.comp.Landing.Prefix:
		return usagef("--prefix-groups with cache-bust target %s: the marker would open every prompt, before the shared prefix, so no prefix could be cached; probe with --cache-bust first_turn_suffix or none", c.probe.CacheBust)
	}
	header, _, err := splitTemplate(c.model, c.opts.Server)
	if err != nil {
		return err
	}
	tok := c.model.Tokenizer
	h := tok.Count(header)
	want := o.PrefixLength - h
	if want < 1 {
		return usagef("--prefix-length %d: the chat template's header alone costs %d tokens; ask for more", o.PrefixLength, h)
	}
	if o.PrefixLength >= o.ISL {
		return usagef("--prefix-length %d must be below --isl %d: the first turn holds the prefix and its own text", o.PrefixLength, o.ISL)
	}
	stride := coprimeStride(len(c.gen.IDs()))
	for g := range o.PrefixGroups {
		start := (g*stride + int(o.Seed%uint64(len(c.gen.IDs())))) % len(c.gen.IDs())
		eval := func(text string) (sizing.Attempt, error) {
			text = strings.TrimRight(text, " ")
			return sizing.Attempt{Text: text, Wire: tok.Count(header+text) - h}, nil
		}
		a, out, err := c.gen.Search(start, want, want, eval)
		if err != nil {
			return err
		}
		if out != sizing.Exact {
			return fmt.Errorf("prefix group %d: cannot cut a prefix of exactly %d tokens (closest %d)", g, want, a.Wire)
		}
		text := strings.TrimRight(a.Text, " ")
		ids := tok.Encode(header + text)
		if len(ids) != o.PrefixLength {
			return fmt.Errorf("prefix group %d: header and prefix encode to %d tokens, not %d", g, len(ids), o.PrefixLength)
		}
		c.groups = append(c.groups, prefixGroup{text: text, sum: idsSum(ids)})
	}
	return nil
}

// lead is what turn k of conv opens with: its group's prefix and a space
// on the first turn, nothing otherwise.
func (c *Composer) lead(conv *records.Conversation, k int) string {
	if k != 0 || conv.PrefixGroup == nil {
		return ""
	}
	return c.groups[*conv.PrefixGroup].text + " "
}

// checkPrefix requires the first request of conv to open with its group's
// PrefixLength wire tokens.
func (c *Composer) checkPrefix(conv *records.Conversation, marker string) error {
	if conv.PrefixGroup == nil {
		return nil
	}
	ids, _, err := wireIDs(c.model, conv, 0, marker)
	if err != nil {
		return err
	}
	if len(ids) < c.opts.PrefixLength || idsSum(ids[:c.opts.PrefixLength]) != c.groups[*conv.PrefixGroup].sum {
		return fmt.Errorf("conversation %s: its first %d wire tokens are not its prefix group's: the tokenizer merged across the prefix", conv.ID, c.opts.PrefixLength)
	}
	return nil
}

// nameCacheBlocks names the prefix-cache blocks of every request of conv
// (--cache-block-size), encoding each request once more.
func (c *Composer) nameCacheBlocks(conv *records.Conversation, marker string) error {
	if c.opts.CacheBlockSize < 1 {
		return nil
	}
	conv.CacheBlockSize = c.opts.CacheBlockSize
	for k := range conv.Turns {
		ids, _, err := wireIDs(c.model, conv, k, marker)
		if err != nil {
			return fmt.Errorf("conversation %s turn %d: %w", conv.ID, k, err)
		}
		conv.Turns[k].CacheBlocks = prefixcache.Chain(ids, c.opts.CacheBlockSize)
	}
	return nil
}
