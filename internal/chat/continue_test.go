package chat

import (
	"errors"
	"testing"
)

// TestContinueFinalMessage: transformers' continue_final_message cuts the
// render after the final message (server-preprocessing.md §1.9,
// render_jinja_template in transformers v4.5x). The expected texts are
// Python Jinja2 renders cut by that code.
func TestContinueFinalMessage(t *testing.T) {
	trimmed := "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</{{ m.role }}>\n{% endfor %}"
	kept := "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>\n{% endfor %}"
	for _, c := range []struct{ src, final, want string }{
		{trimmed, "Once upon", "<user>hi</user>\n<assistant>Once upon"},
		{trimmed, "Once upon  ", "<user>hi</user>\n<assistant>Once upon"},
		{trimmed, " hi hi\n", "<user>hi</user>\n<assistant>hi hi"},
		{kept, "Once upon", "<user>hi</user>\n<assistant>Once upon"},
		{kept, "Once upon  ", "<user>hi</user>\n<assistant>Once upon  "},
		{kept, " hi hi\n", "<user>hi</user>\n<assistant> hi hi"},
	} {
		tmpl, err := Compile(c.src)
		if err != nil {
			t.Fatal(err)
		}
		in := RenderInput{Messages: MessagesValue([]Message{{Role: "user", Content: "hi"}, {Role: "assistant", Content: c.final}}), ContinueFinalMessage: true}
		got, err := tmpl.Render(in)
		if err != nil || got != c.want {
			t.Errorf("%q: got %q, %v; want %q", c.final, got, err, c.want)
		}
		buf, err := tmpl.Append([]byte("prefix"), in)
		if err != nil || string(buf) != "prefix"+c.want {
			t.Errorf("Append %q: got %q, %v", c.final, buf, err)
		}
	}
	tmpl, _ := Compile(kept)
	// The last text part of list content is continued.
	got, err := tmpl.Render(RenderInput{Messages: ObjectsValue([]Object{{{Key: "role", Value: "assistant"}, {Key: "content", Value: []Object{{{Key: "text", Value: "A"}}, {{Key: "text", Value: "B"}}}}}}), ContinueFinalMessage: true})
	if want := `<assistant>[{'text': 'A'}, {'text': 'B`; err != nil || got != want {
		t.Errorf("list content: %q, %v; want %q", got, err, want)
	}
	// transformers refuses continue_final_message with add_generation_prompt.
	if _, err := tmpl.Render(RenderInput{Messages: MessagesValue([]Message{{Role: "assistant", Content: "x"}}), ContinueFinalMessage: true, AddGenerationPrompt: true}); !errors.Is(err, ErrContinueWithGenerationPrompt) {
		t.Errorf("both flags: %v", err)
	}
	// A final message the template drops cannot be continued.
	drop, _ := Compile("{% for m in messages %}{{ m.role }}{% endfor %}")
	if _, err := drop.Render(RenderInput{Messages: MessagesValue([]Message{{Role: "assistant", Content: "gone"}}), ContinueFinalMessage: true}); err == nil {
		t.Error("a final message missing from the render was continued")
	}
}
