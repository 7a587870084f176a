package serverprofile

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/request"
)

// Prompt is what a server of a profile encodes for one request (one
// engine request): the text, and whether the encoding adds the
// tokenizer's special tokens. Bare are texts a count adds on top without
// prefilling them (AIPerf counts the tools it does not render this way).
type Prompt struct {
	Text             []byte
	AddSpecialTokens bool
	Bare             []string
	// Request is the chat request the server prepared and rendered (nil
	// where nothing is rendered: completions, a bare count).
	Request *Request
	// Images are the request's images, in prompt order, for a model that
	// takes them (RenderVision). Text holds each one's placeholder as the
	// template printed it; the server prefills Expanded().
	Images []Image
	// Cuts are the offsets in Text where the server's encoding starts
	// anew, in increasing order (Harmony encodes each text content of a
	// message on its own); none for one encoding of the whole text.
	Cuts []int
	// Fixed are spans of Text that are one token each, placed by id (a
	// special token mistral-common appends by id and never parses from
	// text), in increasing order; the text between them is encoded on
	// its own.
	Fixed []FixedToken
	// Ordinary: the text between Fixed tokens is encoded with no added
	// token matched (openai_harmony's encode_ordinary of a message's
	// text: "<|end|>" in a content is text).
	Ordinary bool
}

// ordinaryCounter is a tokenizer that encodes text without matching its
// added tokens (tokenizer.Tokenizer).
type ordinaryCounter interface {
	CountOrdinaryBytes(b []byte) int
	EncodeOrdinary(text string) []int
}

// FixedToken is a span of a prompt's text that is the token ID, or,
// where Image is k > 0, the k-th image of Prompt.Images placed by id
// (mistral-common's image chunk): the span holds its placeholder, the
// server prefills the image's expansion.
type FixedToken struct{ Start, End, ID, Image int }

// pieces calls text with each part of Text that is encoded on its own,
// and fixed with each Fixed token, in order.
func (pr *Prompt) pieces(text func([]byte), fixed func(FixedToken)) {
	from, cut := 0, 0
	emit := func(to int) {
		for cut < len(pr.Cuts) && pr.Cuts[cut] <= to {
			if c := pr.Cuts[cut]; c > from {
				text(pr.Text[from:c])
				from = c
			}
			cut++
		}
		if to > from {
			text(pr.Text[from:to])
		}
		from = to
	}
	for _, f := range pr.Fixed {
		emit(f.Start)
		fixed(f)
		from = f.End
	}
	if from < len(pr.Text) || len(pr.Fixed) == 0 {
		emit(len(pr.Text))
	}
}

// Expanded is the text the server tokenizes: Text with every image
// placeholder replaced by its image's text (for images placed as Fixed
// tokens, the Fixed spans).
func (pr *Prompt) Expanded() []byte {
	if pr.fixedImages() {
		out := make([]byte, 0, len(pr.Text))
		from := 0
		for _, f := range pr.Fixed {
			if f.Image > 0 {
				out = append(out, pr.Text[from:f.Start]...)
				out = append(out, pr.Images[f.Image-1].Expansion.Text()...)
				from = f.End
			}
		}
		return append(out, pr.Text[from:]...)
	}
	return expanded(pr.Text, pr.Images)
}

// fixedImages reports whether the images are placed as Fixed tokens
// (the Mistral renderer), not by placeholder text.
func (pr *Prompt) fixedImages() bool {
	return len(pr.Images) > 0 && len(pr.Fixed) > 0 && pr.Images[0].ids != nil
}

// fixedCount is a Fixed token's count: 1, or its image's tokens.
func (pr *Prompt) fixedCount(f FixedToken) int {
	if f.Image > 0 {
		return pr.Images[f.Image-1].Expansion.Tokens()
	}
	return 1
}

// Count is the server's prompt_tokens for the prompt. Images whose
// replacement is only special tokens add their Tokens() in place of the
// placeholder's own tokens without being tokenized; one holding plain
// text is counted in place, the whole prompt expanded.
func (pr *Prompt) Count(tok Counter) int {
	var n int
	switch {
	case len(pr.Images) == 0 || pr.fixedImages():
		count := tok.CountBytes
		if o, ok := tok.(ordinaryCounter); ok && pr.Ordinary {
			count = o.CountOrdinaryBytes
		}
		pr.pieces(func(b []byte) { n += count(b) }, func(f FixedToken) { n += pr.fixedCount(f) })
	case literal(pr.Images):
		n = tok.CountBytes(pr.Expanded())
	default:
		n = tok.CountBytes(pr.Text)
		ph := tok.Count(pr.Images[0].Expansion.Placeholder)
		for _, im := range pr.Images {
			n += im.Expansion.Tokens() - ph
		}
	}
	if pr.AddSpecialTokens {
		n += tok.NumSpecialTokensToAdd(false)
	}
	if len(pr.Bare) > 0 {
		n += tok.Count(strings.Join(pr.Bare, " "))
	}
	return n
}

// IDs is the token ids the server prefills for the prompt (Bare is not
// prefilled).
func (pr *Prompt) IDs(tok Encoder) []int {
	if pr.AddSpecialTokens {
		return tok.EncodeWithSpecialTokens(string(pr.Expanded()))
	}
	if len(pr.Cuts) > 0 || len(pr.Fixed) > 0 {
		encode := tok.Encode
		if o, ok := tok.(ordinaryCounter); ok && pr.Ordinary {
			encode = o.EncodeOrdinary
		}
		var ids []int
		pr.pieces(func(b []byte) { ids = append(ids, encode(string(b))...) }, func(f FixedToken) {
			if f.Image > 0 {
				ids = append(ids, pr.Images[f.Image-1].ids...)
				return
			}
			ids = append(ids, f.ID)
		})
		return ids
	}
	return tok.Encode(string(pr.Expanded()))
}

// ImageTokens is each image's share of the count: its replacement's
// tokens, counted on their own (exact where the replacement is only
// special tokens, as on the Qwen families; where it holds plain text, as
// Gemma 3's "\n\n" around the image, that text may merge with its
// neighbours, and only the prompt's Count is exact).
func (pr *Prompt) ImageTokens(tok Counter) []int {
	if len(pr.Images) == 0 {
		return nil
	}
	out := make([]int, len(pr.Images))
	for i, im := range pr.Images {
		if !im.Expansion.Literal {
			out[i] = im.Expansion.Tokens()
			continue
		}
		n := 0
		for _, p := range im.Expansion.Pieces {
			n += p.Repeat * tok.Count(p.Text)
		}
		out[i] = n
	}
	return out
}

// Render is the one place a request becomes what a server of profile p
// prefills: every tool counts through it (compose and send --exact by
// PromptOf, measure, the test server and probe --verify-url by
// CountRequest and PromptIDs). Per endpoint:
//   - completions: the one prompt, never templated, with special tokens
//     as p's server adds them (CompletionsAddSpecialTokens); AIPerf: its
//     texts joined by " ", without. A body of several prompts is several
//     engine requests (CountCompletions, CompletionsIDs).
//   - without a template (t nil), or what p does not template (AIPerf's
//     Responses string input): the texts joined by one space, without
//     special tokens (measure's bare count);
//   - chat and Responses: the request as p's server prepares it (Prepare:
//     a Responses body made that server's chat request first), rendered
//     through t with now as strftime_now's clock, with special tokens
//     where that server adds them; or, where that server renders the
//     model with a renderer of its own (RendererOf: gpt-oss's Harmony),
//     through that renderer (now is the conversation's start date).
//
// The text is appended to dst.
func Render(p Profile, ex *extract.Inputs, t *chat.Template, now time.Time, dst []byte) (Prompt, error) {
	return RenderVision(p, ex, t, nil, now, dst)
}

// RenderVision is Render for a model that takes images (vis nil: a
// text-only model, whose server refuses media parts): the images of a
// chat or Responses body are read (sizes from their headers), checked
// against the server's limits and expanded by the model's processor
// (Prompt.Images), and counted with the prompt.
func RenderVision(p Profile, ex *extract.Inputs, t *chat.Template, vis *Vision, now time.Time, dst []byte) (Prompt, error) {
	switch {
	case ex.Endpoint == endpoint.Completions:
		if len(ex.Prompts) != 1 || ex.Prompts[0].Tokens || ex.Pretokenised > 0 {
			return Prompt{}, fmt.Errorf("a completions body of %d prompts (or of token ids) is not one text prompt", len(ex.Prompts))
		}
		if p == AIPerf {
			// _compute_input_token_count's bare path (CountCompletions).
			return Prompt{Text: append(dst, strings.Join(ex.Texts, " ")...)}, nil
		}
		special, err := CompletionsAddSpecialTokens(p, ex)
		if err != nil {
			return Prompt{}, err
		}
		return Prompt{Text: append(dst, ex.Prompts[0].Text...), AddSpecialTokens: special}, nil
	case t == nil || !Templated(p, ex):
		return Prompt{Text: append(dst, strings.Join(ex.Texts, " ")...)}, nil
	}
	return RenderRulesVision(RulesOf(p), ex, t, vis, now, false, dst)
}

// RenderRules is Render's templated path for a chat or Responses body
// under rules (one profile's, or a mix: Compare), the tools left out
// of the render and their texts counted bare on top when noTools
// (measure --no-tools, AIPerf's way). A request the rules refuse is a
// *RefusalError; a template that raises gives a *TemplateError, with the
// prepared request in the Prompt.
func RenderRules(r Rules, ex *extract.Inputs, t *chat.Template, now time.Time, noTools bool, dst []byte) (Prompt, error) {
	return RenderRulesVision(r, ex, t, nil, now, noTools, dst)
}

// RenderRulesVision is RenderRules for a model that takes images
// (RenderVision).
func RenderRulesVision(r Rules, ex *extract.Inputs, t *chat.Template, vis *Vision, now time.Time, noTools bool, dst []byte) (Prompt, error) {
	switch rulesRenderer(r, t) {
	case RendererHarmony:
		return renderHarmony(ex, now, noTools, dst)
	case RendererMistral:
		if t.Mistral == nil {
			return Prompt{}, errors.New("--renderer mistral: the model is not in Mistral format (no tekken.json)")
		}
		if noTools {
			return Prompt{}, errors.New("--no-tools is not reproduced under the mistral renderer")
		}
		v, err := mistralVariantOf(r)
		if err != nil {
			return Prompt{}, err
		}
		return renderMistral(v, ex, t.Mistral, vis, dst)
	case RendererDeepSeekV32:
		v, err := dsVariantOf(r)
		if err != nil {
			return Prompt{}, err
		}
		return renderDeepSeekV32(v, ex, noTools, dst)
	}
	if err := sglangModelRules(r, ex, t); err != nil {
		return Prompt{}, err
	}
	req, err := PrepareVision(r, ex, t, vis)
	if err != nil {
		return Prompt{}, err
	}
	if noTools {
		req.WithoutTools(ex)
	}
	text, err := req.Append(t, now, dst)
	if err != nil {
		return Prompt{Request: req}, &TemplateError{Err: err}
	}
	images, err := expandImages(req.images, ex, text)
	if err != nil {
		return Prompt{Request: req}, err
	}
	return Prompt{Text: text, AddSpecialTokens: req.AddSpecialTokens, Bare: req.BareTexts, Request: req, Images: images}, nil
}

// TemplateError is a chat template that raises (or cannot be rendered)
// on a request: a server with that template refuses it.
type TemplateError struct{ Err error }

func (e *TemplateError) Error() string { return e.Err.Error() }
func (e *TemplateError) Unwrap() error { return e.Err }

// IsTemplateError reports whether err is a template that raised.
func IsTemplateError(err error) bool {
	var te *TemplateError
	return errors.As(err, &te)
}

// Refused reports whether err says that a server would refuse the
// request: a rule of its preprocessing (RefusalError) or its template.
func Refused(err error) bool {
	return IsRefusal(err) || IsTemplateError(err)
}

// PromptOf is Render for a request compose or send built: its body
// (request.Body: the members a server renders and counts) read back as
// any body is, so that what is counted is what is sent.
func PromptOf(p Profile, r *request.Request, t *chat.Template, now time.Time) (Prompt, error) {
	return PromptOfVision(p, r, t, nil, now)
}

// PromptOfVision is PromptOf for a model that takes images.
func PromptOfVision(p Profile, r *request.Request, t *chat.Template, vis *Vision, now time.Time) (Prompt, error) {
	body, err := r.Body()
	if err != nil {
		return Prompt{}, err
	}
	ex, err := extract.Body(body)
	if err != nil {
		return Prompt{}, fmt.Errorf("reading the request back: %w", err)
	}
	return RenderVision(p, ex, t, vis, now, make([]byte, 0, len(body)+256))
}
