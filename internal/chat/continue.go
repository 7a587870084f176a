package chat

import (
	"errors"
	"strings"
	"unicode"

	"github.com/islkit/islkit/internal/chat/internal/jinja"
)

// ErrContinueWithGenerationPrompt is transformers' refusal of
// continue_final_message together with add_generation_prompt
// ("continue_final_message and add_generation_prompt are not compatible",
// tokenization_utils_base.py @598a3dc3).
var ErrContinueWithGenerationPrompt = errors.New("chat: continue_final_message and add_generation_prompt are not compatible")

// finalMessageText is the text transformers continues: the final
// message's content, or for list content the last part that has "text"
// (render_jinja_template, v4.5x; server-preprocessing.md §1.9).
func finalMessageText(msgs jinja.Value) (string, error) {
	if !msgs.IsList() || len(msgs.AsList().Items) == 0 {
		return "", errors.New("chat: continue_final_message needs a final message")
	}
	last := msgs.AsList().Items[len(msgs.AsList().Items)-1]
	if !last.IsDict() {
		return "", errors.New("chat: continue_final_message: the final message is not an object")
	}
	content, _ := last.AsDict().Get("content")
	if content.IsList() {
		items := content.AsList().Items
		for i := len(items) - 1; i >= 0; i-- {
			if !items[i].IsDict() {
				continue
			}
			if text, ok := items[i].AsDict().Get("text"); ok {
				content = text
				goto found
			}
		}
		return "", errors.New("chat: continue_final_message is set but we could not find any text to continue in the final message")
	}
found:
	if !content.IsString() {
		// Python: None.strip() is an AttributeError.
		return "", errors.New("chat: continue_final_message: the final message's content is not a string")
	}
	return content.AsString(), nil
}

// continueFinal returns the length of rendered that transformers keeps
// for continue_final_message: up to the end of the last occurrence of the
// final message (its stripped text), keeping the message's own trailing
// whitespace when the template kept it. Python indexes code points where
// this indexes bytes; both measure the same substrings.
func continueFinal(rendered, final string) (int, error) {
	stripped := pyStrip(final)
	loc := strings.LastIndex(rendered, stripped)
	if loc < 0 {
		return 0, errors.New("chat: continue_final_message is set but the final message does not appear in the chat after applying the chat template")
	}
	left := strings.TrimLeftFunc(final, pySpace)
	if end := loc + len(left); end <= len(rendered) && rendered[loc:end] == final {
		return end, nil
	}
	return loc + len(stripped), nil
}

// pySpace is Python's str.isspace for one rune: Unicode white space plus
// the information separators U+001C..U+001F.
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

func pyStrip(s string) string { return strings.TrimFunc(s, pySpace) }

// Content formats (see ContentFormat).
const (
	ContentString = jinja.FormatString
	ContentOpenAI = jinja.FormatOpenAI
)

// Content-format detectors (see ContentFormat).
const (
	DetectVLLM   = "vllm"
	DetectSGLang = "sglang"
)

// ContentFormat is how a server's "auto" content-format detection
// classifies the template it would render with (tools decides the
// template, as in Render): ContentOpenAI when the template loops over a
// message's content, else ContentString. detector is DetectVLLM (follows
// aliases of messages) or DetectSGLang (literal message/msg/m only).
func (t *Template) ContentFormat(detector string, withTools bool) string {
	in := RenderInput{}
	if withTools {
		in.Tools = true
	}
	jt, err := t.pick(in)
	if err != nil {
		return ContentString // vLLM: no template resolved → "string"
	}
	t.formatOnce.Do(func() {
		t.formats = map[*jinja.Template][2]string{}
		for _, n := range t.named {
			t.formats[n] = [2]string{n.ContentFormatVLLM(), n.ContentFormatSGLang()}
		}
	})
	f := t.formats[jt]
	if detector == DetectSGLang {
		return f[1]
	}
	return f[0]
}
