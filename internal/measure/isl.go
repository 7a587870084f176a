package measure

import (
	"bytes"
	"regexp"
	"strings"
	"sync"

	"github.com/islkit/islkit/internal/budget"
	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/payload"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
)

// measureRequest counts one request and, where counts disagree, explains
// why. Explanations cost extra renders, so they are computed only for
// records with a gap.
func (m *Measurer) measureRequest(ex *payload.Extracted, meta requestMeta) records.ISL {
	tok := m.opts.Tokenizer
	isl := records.ISL{
		Counted:        "bare",
		Server:         meta.server,
		Target:         meta.target,
		Expected:       meta.expected,
		ExpectedCached: meta.expectedCached,
		ServerCached:   meta.cached,
		ConversationID: meta.conversationID,
		TurnIndex:      meta.turn,
	}
	if ex.Media != (records.Media{}) {
		media := ex.Media
		isl.Media = &media
	}
	startsBOS := false // the rendered text begins with the BOS token
	counted := 0
	if m.opts.ApplyChatTemplate && m.opts.Template != nil && ex.Chat != nil {
		buf := renderBufs.Get().(*[]byte)
		text, err := m.opts.Template.Append((*buf)[:0], m.renderInput(chatView(ex, "", nil), ex, !m.opts.NoTools))
		if err != nil {
			isl.TemplateError = err.Error()
		} else {
			if meta.server != nil { // explainServer asks
				startsBOS = m.startsWithBOS(text)
			}
			t := tok.CountBytes(text)
			if m.opts.NoTools && len(ex.ToolTexts) > 0 {
				// AIPerf counts tool definitions as bare text on top.
				t += tok.Count(strings.Join(ex.ToolTexts, " "))
			}
			isl.Templated, isl.Counted, counted = &t, "templated", t
		}
		if cap(text) <= maxPooledRender {
			*buf = text
			renderBufs.Put(buf)
		}
	}
	if isl.Counted == "bare" || m.opts.Bare {
		b := tok.Count(strings.Join(ex.Texts, " "))
		isl.Bare = &b
		if isl.Counted == "bare" {
			counted = b
		}
	}
	if meta.target != nil {
		isl.VsTarget = m.explainTarget(ex, meta, counted, isl.Counted == "templated")
	}
	if meta.server != nil {
		isl.VsServer = m.explainServer(ex, *meta.server, counted, isl.Counted == "templated", startsBOS)
	}
	return isl
}

// chatView is the messages as AIPerf templates them: role, content (text
// parts joined by sep), tool calls, in that key order. rewrite, when not
// nil, replaces each content.
func chatView(ex *payload.Extracted, sep string, rewrite func(i int, content string) string) []chat.Message {
	out := make([]chat.Message, len(ex.Chat))
	for i, msg := range ex.Chat {
		content := msg.Content(sep)
		if rewrite != nil {
			content = rewrite(i, content)
		}
		out[i] = chat.Message{Role: msg.Role, Content: content, ToolCalls: msg.ToolCalls}
	}
	return out
}

// renderBufs holds buffers the main count renders into: the rendered text
// is only counted, so one buffer serves record after record.
var renderBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledRender bounds the buffers kept, so that one huge record does
// not pin its buffer.
const maxPooledRender = 1 << 20

func (m *Measurer) render(messages []chat.Message, ex *payload.Extracted, withTools bool) (string, error) {
	return m.opts.Template.Render(m.renderInput(messages, ex, withTools))
}

func (m *Measurer) renderInput(messages []chat.Message, ex *payload.Extracted, withTools bool) chat.RenderInput {
	in := chat.RenderInput{
		Messages:            messages,
		AddGenerationPrompt: true,
		Kwargs:              ex.Kwargs,
		Now:                 m.opts.Now,
	}
	if withTools && ex.Tools != nil {
		in.Tools = ex.Tools
	}
	return in
}

// probeConstants are compose's assumptions: the chat-template probe and
// the marker estimate, computed the way probe does.
type probeConstants struct {
	template budget.TemplateOverhead
	markers  map[cachebust.Target]int
}

func (m *Measurer) constants() *probeConstants {
	m.probeOnce.Do(func() {
		m.probe.markers = map[cachebust.Target]int{}
		for _, t := range cachebust.Targets() {
			m.probe.markers[t], _ = probe.MarkerCost(t, m.opts.Tokenizer)
		}
		if m.opts.Template != nil { // a nil *chat.Template is not a nil Renderable
			m.probe.template = probe.Overhead(m.opts.Template, m.opts.Tokenizer, m.opts.Now)
		}
	})
	return &m.probe
}

// markerRE finds a marker with the separator that goes with it: before
// it (suffix placement) or after it (prefix placement).
var markerRE = regexp.MustCompile(`\n\n` + cachebust.MarkerPattern + `|` + cachebust.MarkerPattern + `(\n\n)?`)

// splitMarker removes the cache-bust marker from content and returns what
// remains and the marker as it appeared; known is the marker send
// recorded, else it is recognised by AIPerf's [rid:…] shape.
func splitMarker(content, known string) (string, string) {
	if known != "" {
		if strings.HasPrefix(content, known) {
			return content[len(known):], known
		}
		if strings.HasSuffix(content, known) {
			return content[:len(content)-len(known)], known
		}
		trimmed := strings.TrimSpace(known)
		if strings.Contains(content, trimmed) {
			return strings.Replace(content, trimmed, "", 1), trimmed
		}
		return content, ""
	}
	loc := markerRE.FindStringIndex(content)
	if loc == nil {
		return content, ""
	}
	return content[:loc[0]] + content[loc[1]:], content[loc[0]:loc[1]]
}

// markerTarget infers the cache-bust target from where a marker sits, for
// records that do not name it.
func markerTarget(marker string, role string) cachebust.Target {
	prefix := strings.HasSuffix(marker, "\n\n") || !strings.HasPrefix(marker, "\n\n")
	switch {
	case role == "system" && prefix:
		return cachebust.SystemPrefix
	case role == "system":
		return cachebust.SystemSuffix
	case prefix:
		return cachebust.FirstTurnPrefix
	default:
		return cachebust.FirstTurnSuffix
	}
}

// explainTarget splits counted − target. The target was built as content
// budget + the probe's fixed and per-message costs + the estimated marker;
// the rendered count is the template's own tokens + content + marker +
// merges across their seams. Each difference is one cause; "content" is
// the content's share (exact mode moves it to cancel the others).
func (m *Measurer) explainTarget(ex *payload.Extracted, meta requestMeta, counted int, templated bool) *records.Gap {
	gap := &records.Gap{Total: counted - *meta.target}
	if gap.Total == 0 {
		return gap
	}
	if !templated {
		gap.Causes = []records.Cause{{Cause: records.CauseUnexplained, Tokens: gap.Total}}
		return gap
	}
	tok := m.opts.Tokenizer
	contents := ex.Contents()
	content, markerTokens, replies, nReplies := 0, 0, 0, 0
	var target cachebust.Target
	msgRoles := roles(ex)
	for i, c := range contents {
		rest, marker := splitMarker(c, meta.marker)
		n := tok.Count(rest)
		content += n
		if msgRoles[i] == "assistant" {
			replies += n
			nReplies++
		}
		if marker != "" {
			markerTokens = tok.Count(marker)
			target = meta.cacheBust // send records say; AIPerf's do not
			if target == "" {
				target = markerTarget(marker, msgRoles[i])
			}
		}
	}
	var causes []records.Cause
	remaining := gap.Total
	if nReplies > 0 && meta.maxTokens > 0 {
		// compose sized the history assuming max_tokens per reply; the
		// replies' real length is the first thing to set apart.
		if d := replies - nReplies*meta.maxTokens; d != 0 {
			causes = append(causes, records.Cause{Cause: records.CauseReplies, Tokens: d})
			remaining -= d
			content -= d
		}
		if remaining == 0 {
			gap.Causes = causes
			return gap
		}
	}
	pure := 0
	empty := chatView(ex, "", func(int, string) string { return "" })
	if text, err := m.render(empty, ex, !m.opts.NoTools); err == nil {
		pure = tok.Count(text)
	}
	c := m.constants()
	expectedTemplate := c.template.Fixed + c.template.Wrap*ex.NumMessages
	estimate := 0
	if markerTokens > 0 {
		estimate = c.markers[target]
	}
	parts := []records.Cause{
		{Cause: records.CauseTemplate, Tokens: pure - expectedTemplate},
		{Cause: records.CauseMarker, Tokens: markerTokens - estimate},
		{Cause: records.CauseBoundary, Tokens: counted - pure - (content + (gap.Total - remaining)) - markerTokens},
	}
	explained := 0
	for _, x := range parts {
		explained += x.Tokens
	}
	parts = append(parts, records.Cause{Cause: records.CauseContent, Tokens: remaining - explained})
	gap.Causes = nonZero(append(causes, parts...))
	return gap
}

// explainServer splits server − counted into what servers do differently.
func (m *Measurer) explainServer(ex *payload.Extracted, server, counted int, templated, startsBOS bool) *records.Gap {
	gap := &records.Gap{Total: server - counted}
	if gap.Total == 0 {
		return gap
	}
	var causes []records.Cause
	left := gap.Total
	add := func(cause string, tokens int) {
		if tokens != 0 {
			causes = append(causes, records.Cause{Cause: cause, Tokens: tokens})
			left -= tokens
		}
	}
	tok := m.opts.Tokenizer
	if !templated && m.opts.Template != nil && ex.Chat != nil {
		// Counted bare: the server's template is the first suspect.
		if text, err := m.render(chatView(ex, "", nil), ex, true); err == nil {
			startsBOS = m.startsWithBOS([]byte(text))
			add(records.CauseTemplate, tok.Count(text)-counted)
			templated = true
		}
	}
	if templated {
		if m.opts.NoTools && ex.Tools != nil {
			if text, err := m.render(chatView(ex, "", nil), ex, true); err == nil {
				add(records.CauseTools, tok.Count(text)-counted)
			}
		}
		if ex.MultiTextParts {
			if a, err := m.render(chatView(ex, "\n", nil), ex, !m.opts.NoTools); err == nil {
				if b, err := m.render(chatView(ex, "", nil), ex, !m.opts.NoTools); err == nil {
					add(records.CausePartJoin, tok.Count(a)-tok.Count(b))
				}
			}
		}
		if n := tok.NumSpecialTokensToAdd(false); n > 0 && left >= n && startsBOS {
			add(records.CauseDoubledBOS, n)
		}
	}
	if ex.Media != (records.Media{}) && left > 0 {
		add(records.CauseMedia, left)
	}
	add(records.CauseUnexplained, left)
	gap.Causes = causes
	return gap
}

// startsWithBOS reports whether rendered text begins with the template's
// bos_token, which a server adding special tokens would then double.
func (m *Measurer) startsWithBOS(rendered []byte) bool {
	if m.opts.Template == nil {
		return false
	}
	bos, _ := m.opts.Template.SpecialTokens()["bos_token"].(string)
	return bos != "" && bytes.HasPrefix(rendered, []byte(bos))
}

func roles(ex *payload.Extracted) []string {
	out := make([]string, len(ex.Chat))
	for i, m := range ex.Chat {
		out[i] = m.Role
	}
	return out
}

func nonZero(causes []records.Cause) []records.Cause {
	out := causes[:0]
	for _, c := range causes {
		if c.Tokens != 0 {
			out = append(out, c)
		}
	}
	return out
}
