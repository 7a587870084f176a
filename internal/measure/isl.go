package measure

import (
	"bytes"
	"regexp"
	"strings"
	"sync"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/probe"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/serverprofile"
)

// measureRequest counts one request and, where counts disagree, explains
// why. Explanations cost extra renders, so they are computed only for
// records with a gap. A request the server profile would refuse is an
// error (the line fails, naming the rule).
func (m *Measurer) measureRequest(ex *extract.Inputs, meta requestMeta) (records.ISL, error) {
	tok := m.opts.Tokenizer
	isl := records.ISL{
		Profile:        string(m.profile()),
		Counted:        "bare",
		Server:         meta.server,
		Target:         meta.target,
		Expected:       meta.expected,
		ExpectedCached: meta.expectedCached,
		ServerCached:   meta.cached,
		ConversationID: meta.conversationID,
		TurnIndex:      meta.turn,
		Endpoint:       ex.Endpoint,
		ServerField:    usageField(ex.Endpoint),
	}
	if meta.sizedFor != "" && meta.sizedFor != isl.Profile {
		isl.SizedFor = meta.sizedFor
		m.sizedForOther(meta.sizedFor)
	}
	if ex.Endpoint == endpoint.Completions {
		return m.measureCompletions(ex, meta, isl)
	}
	templates := serverprofile.Templated(m.profile(), ex)
	if ex.Media != (records.Media{}) {
		media := ex.Media
		isl.Media = &media
	}
	startsBOS := false // the rendered text begins with the BOS token
	counted := 0
	var req *serverprofile.Request
	if m.opts.ApplyChatTemplate && m.opts.Template != nil && templates {
		buf := renderBufs.Get().(*[]byte)
		pr, err := m.serverPrompt(ex, (*buf)[:0])
		req = pr.Request
		switch {
		case serverprofile.IsTemplateError(err):
			isl.TemplateError = err.Error()
			m.templateFailed("chat template: " + err.Error())
		case err != nil:
			return records.ISL{}, err
		default:
			if meta.server != nil { // explainServer asks
				startsBOS = m.startsWithBOS(pr.Text)
			}
			t := pr.Count(tok)
			isl.Templated, isl.Counted, counted = &t, "templated", t
			isl.ImageTokens = imageTokens(pr.ImageTokens(tok))
			isl.Renderer = serverprofile.RendererOf(m.profile(), m.opts.Template)
			if markerAsked(meta) {
				special := 0
				if pr.AddSpecialTokens {
					special = tok.NumSpecialTokensToAdd(false)
				}
				isl.MarkerEnd = markerEnd(pr.Text, meta.marker, func(b []byte) int { return tok.CountBytes(b) + special })
			}
			if cap(pr.Text) <= maxPooledRender {
				*buf = pr.Text
				renderBufs.Put(buf)
			}
		}
	}
	if m.opts.ApplyChatTemplate && m.opts.Template == nil && templates {
		isl.TemplateError = noTemplate
		m.templateFailed(noTemplate)
	}
	if isl.Counted == "bare" || m.opts.Bare {
		b := tok.Count(strings.Join(ex.Texts, " "))
		isl.Bare = &b
		if isl.Counted == "bare" {
			counted = b
			if markerAsked(meta) {
				isl.MarkerEnd = markerEnd([]byte(strings.Join(ex.Texts, " ")), meta.marker, tok.CountBytes)
			}
		}
	}
	if isl.MarkerEnd != nil && *meta.cached >= *isl.MarkerEnd {
		m.markerHit(meta.conversationID, *meta.cached, *isl.MarkerEnd)
	}
	if meta.target != nil {
		isl.VsTarget = m.explainTarget(ex, req, meta, counted, isl.Counted == "templated")
	}
	if meta.server != nil {
		isl.VsServer = m.explainServer(ex, *meta.server, counted, isl.Counted == "templated", startsBOS)
	}
	if isl.TemplateError != "" {
		blameTemplate(isl.VsTarget)
		blameTemplate(isl.VsServer)
	}
	if m.opts.CompareServer != "" && isl.Templated != nil {
		isl.VsProfile = m.compareProfile(ex, *isl.Templated)
	}
	return isl, nil
}

// imageTokens is the record's image_tokens member (nil without images).
func imageTokens(per []int) *records.ImageTokens {
	if len(per) == 0 {
		return nil
	}
	it := &records.ImageTokens{PerImage: per}
	for _, n := range per {
		it.Total += n
	}
	return it
}

// usageField is the usage member a server reports an endpoint's prompt
// count in: input_tokens for the Responses API (ResponseUsage), else
// prompt_tokens.
func usageField(ep endpoint.Kind) string {
	if ep == endpoint.Responses {
		return "input_tokens"
	}
	return "prompt_tokens"
}

// measureCompletions counts a completions body: no template; with
// --apply-chat-template (the server's view) as the profile's server
// counts its prompts (serverprofile.CountCompletions), else AIPerf's bare
// count (the texts joined by " ", plus the token ids given). Either way
// the count is the one the profile's server reports, so it is "templated"
// unless it is AIPerf's.
func (m *Measurer) measureCompletions(ex *extract.Inputs, meta requestMeta, isl records.ISL) (records.ISL, error) {
	tok := m.opts.Tokenizer
	profile := m.profile()
	if !m.opts.ApplyChatTemplate {
		profile = serverprofile.AIPerf
	}
	counted, err := serverprofile.CountCompletions(profile, ex, tok)
	if err != nil {
		return records.ISL{}, err
	}
	if profile == serverprofile.AIPerf {
		isl.Bare, isl.Counted = &counted, "bare"
	} else {
		isl.Templated, isl.Counted = &counted, "templated"
		if m.opts.Bare {
			b, _ := serverprofile.CountCompletions(serverprofile.AIPerf, ex, tok)
			isl.Bare = &b
		}
	}
	// The special tokens a server adds to each text prompt are the one
	// rule in which the counts differ; the rest is the prompts' length.
	special := 0 // what the server's special tokens add to counted
	if profile == serverprofile.AIPerf {
		if n, err := serverprofile.CountCompletions(serverprofile.VLLM, ex, tok); err == nil {
			special = n - counted
		}
	}
	split := func(total, share int, rest string) *records.Gap {
		g := &records.Gap{Total: total}
		if share != 0 && total != 0 {
			g.Causes = append(g.Causes, records.Cause{Cause: records.CauseSpecialTokens, Tokens: share})
		}
		if total != 0 && total != share {
			g.Causes = append(g.Causes, records.Cause{Cause: rest, Tokens: total - share})
		}
		return g
	}
	if meta.target != nil {
		// compose sizes a completions prompt with the server's special
		// tokens (encode(prompt, add_special_tokens=True) == --isl).
		isl.VsTarget = split(counted-*meta.target, -special, records.CauseContent)
	}
	if meta.server != nil {
		isl.VsServer = split(*meta.server-counted, special, records.CauseUnexplained)
	}
	if other := m.opts.CompareServer; other != "" && isl.Templated != nil {
		g := &records.ProfileGap{Profile: string(other)}
		if n, err := serverprofile.CountCompletions(other, ex, tok); err != nil {
			g.Error = err.Error()
		} else {
			g.Count = &n
			g.Gap = split(counted-n, counted-n, "")
		}
		isl.VsProfile = g
	}
	return isl, nil
}

// profile is the server profile counts follow.
func (m *Measurer) profile() serverprofile.Profile {
	if m.opts.Server == "" {
		return serverprofile.Default
	}
	return m.opts.Server
}

// serverPrompt is ex as the profile's server renders it
// (serverprofile.RenderRules; --no-tools leaves the tools out of the
// render and counts their texts bare), appended to dst.
func (m *Measurer) serverPrompt(ex *extract.Inputs, dst []byte) (serverprofile.Prompt, error) {
	return serverprofile.RenderRulesVision(serverprofile.RulesOf(m.profile()), ex, m.opts.Template, m.opts.Vision, m.opts.Now, m.opts.NoTools, dst)
}

// compareProfile counts the request under --compare-server and splits the
// difference by rule family.
func (m *Measurer) compareProfile(ex *extract.Inputs, templated int) *records.ProfileGap {
	other := m.opts.CompareServer
	g := &records.ProfileGap{Profile: string(other)}
	n, steps, err := serverprofile.Explain(m.profile(), templated, other, ex, m.opts.Template, m.opts.Tokenizer, m.opts.Now, m.opts.NoTools)
	if err != nil {
		g.Error = err.Error()
		return g
	}
	g.Count = &n
	g.Gap = &records.Gap{Total: templated - n}
	for _, s := range steps {
		g.Gap.Causes = append(g.Gap.Causes, records.Cause{Cause: s.Cause, Tokens: s.Tokens})
	}
	return g
}

// blameTemplate names what a gap leaves unexplained after a template
// failure: the template's share, which the bare count could not include.
func blameTemplate(g *records.Gap) {
	if g == nil {
		return
	}
	for i := range g.Causes {
		if g.Causes[i].Cause == records.CauseUnexplained {
			g.Causes[i].Cause = records.CauseTemplateError
		}
	}
}

// chatView is the messages as AIPerf templates them: role, content (text
// parts joined by sep), tool calls, in that key order. rewrite, when not
// nil, replaces each content.
func chatView(ex *extract.Inputs, sep string, rewrite func(i int, content string) string) []chat.Message {
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

func (m *Measurer) render(messages []chat.Message, ex *extract.Inputs, withTools bool) (string, error) {
	return m.opts.Template.Render(m.renderInput(messages, ex, withTools))
}

func (m *Measurer) renderInput(messages []chat.Message, ex *extract.Inputs, withTools bool) chat.RenderInput {
	in := chat.RenderInput{
		Messages:            chat.MessagesValue(messages),
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
	template records.TemplateOverhead
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
func (m *Measurer) explainTarget(ex *extract.Inputs, req *serverprofile.Request, meta requestMeta, counted int, templated bool) *records.Gap {
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
	if req != nil {
		empty := req.WithEmptyContents()
		empty.BareTexts = nil // counted bare on top: not the template's own
		if text, err := empty.Append(m.opts.Template, m.opts.Now, nil); err == nil {
			pure = empty.Count(tok, text)
		}
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
func (m *Measurer) explainServer(ex *extract.Inputs, server, counted int, templated, startsBOS bool) *records.Gap {
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
	withTools := false // the tools are in the count so far
	if !templated && m.opts.Template != nil && serverprofile.Templated(m.profile(), ex) {
		// Counted bare: the server's template is the first suspect.
		if n, text, images, err := m.serverCount(ex); err == nil {
			startsBOS = m.startsWithBOS(text)
			add(records.CauseImage, images)
			add(records.CauseTemplate, n-counted-images)
			templated, withTools = true, true
		}
	}
	if templated {
		if m.opts.NoTools && ex.Tools != nil && !withTools {
			if n, _, _, err := m.serverCount(ex); err == nil {
				add(records.CauseTools, n-counted)
			}
		}
		if ex.MultiTextParts && m.profile() == serverprofile.AIPerf {
			// AIPerf joins text parts with ""; vLLM with "\n".
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
	if ex.Media != (records.Media{}) && left > 0 && (m.opts.Vision == nil || !templated) {
		add(records.CauseMedia, left)
	}
	add(records.CauseUnexplained, left)
	gap.Causes = causes
	return gap
}

// serverCount is the profile's count with the request's tools rendered
// (whatever --no-tools says): what the server itself counts.
// images is the tokens its images take.
func (m *Measurer) serverCount(ex *extract.Inputs) (int, []byte, int, error) {
	if m.opts.Vision != nil && (m.profile() != serverprofile.AIPerf || ex.Tools == nil) {
		pr, err := serverprofile.RenderRulesVision(serverprofile.RulesOf(m.profile()), ex, m.opts.Template, m.opts.Vision, m.opts.Now, false, nil)
		if err != nil {
			return 0, nil, 0, err
		}
		images := 0
		for _, n := range pr.ImageTokens(m.opts.Tokenizer) {
			images += n
		}
		return pr.Count(m.opts.Tokenizer), pr.Text, images, nil
	}
	req, err := serverprofile.Prepare(serverprofile.RulesOf(m.profile()), ex, m.opts.Template)
	if err != nil {
		return 0, nil, 0, err
	}
	if m.profile() == serverprofile.AIPerf && ex.Tools != nil {
		// AIPerf never renders tools; the server does.
		full, err := serverprofile.Prepare(serverprofile.RulesOf(serverprofile.Transformers), ex, m.opts.Template)
		if err == nil {
			req.Tools, req.BareTexts = full.Tools, nil
		}
	}
	text, err := req.Append(m.opts.Template, m.opts.Now, nil)
	if err != nil {
		return 0, nil, 0, err
	}
	return req.Count(m.opts.Tokenizer, text), text, 0, nil
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

func roles(ex *extract.Inputs) []string {
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

// markerAsked tells whether a request's marker position is worth a count:
// a first request (turn 0, where no earlier request of this run carried
// its marker) whose server reported cached tokens.
func markerAsked(meta requestMeta) bool {
	return meta.marker != "" && meta.cached != nil && *meta.cached > 0 && meta.turn != nil && *meta.turn == 0
}

// markerEnd counts the tokens of prompt through the end of marker (nil
// when the prompt does not hold it, e.g. a template rewrote it).
func markerEnd(prompt []byte, marker string, count func([]byte) int) *int {
	m := marker
	i := bytes.Index(prompt, []byte(m))
	if i < 0 { // a template that trims a message may cut the marker's blank lines
		m = strings.TrimSpace(marker)
		if i = bytes.Index(prompt, []byte(m)); m == "" || i < 0 {
			return nil
		}
	}
	n := count(prompt[:i+len(m)])
	return &n
}
