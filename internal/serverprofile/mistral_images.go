package serverprofile

import (
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/vision"
)

// Images under the Mistral renderer. vLLM's Mistral renderer
// (vllm/renderers/mistral.py) hands the OpenAI messages, image_url parts
// included, to MistralTokenizer.apply_chat_template; mistral-common turns
// each part into an ImageURLChunk, the normaliser coalesces the text
// chunks around them, and InstructTokenizerV3.encode_user_content encodes
// the chunks in order, each on its own: a text chunk as text, an image as
// its ImageEncoder's [IMG] rows, [IMG_BREAK] after each and [IMG_END] for
// the last (vision.MistralTekken's rule). Only user messages take images.

// mistralChunk is one chunk of a user message: text, or the image
// mistralImages.refs[image-1].
type mistralChunk struct {
	text  string
	image int
}

// mistralImages collects a request's image parts (vis nil: the model
// takes none).
type mistralImages struct {
	vis  *Vision
	refs imageRefs
}

// part reads the image part content[j] of messages[msg].
func (mi *mistralImages) part(po jsonobj.Object, role string, msg, j int) (mistralChunk, error) {
	switch {
	case mi.vis == nil:
		return mistralChunk{}, refuse(VLLM, "media part for a text-only model", "messages[%d].content[%d] is \"image_url\"", msg, j)
	case mi.vis.unsupported != nil:
		return mistralChunk{}, refuse(VLLM, "image", "messages[%d].content[%d]: %v", msg, j, mi.vis.unsupported)
	case role != "user":
		// mistral-common's SystemMessage, AssistantMessage and ToolMessage
		// take no image chunk.
		return mistralChunk{}, refuse(VLLM, mistralRule, "messages[%d].content[%d]: an image in a %s message (mistral-common takes images in user messages only)", msg, j, role)
	}
	// vLLM in tokenizer mode mistral sizes images by tekken.json's image
	// settings (which round where transformers' processor floors), also
	// where the folder holds transformers' processor files beside it.
	tv, err := mi.vis.tekkenView()
	if err != nil {
		return mistralChunk{}, refuse(VLLM, "image", "messages[%d].content[%d]: the image processor read (%s, %s) is transformers' format, and under the Mistral renderer images are counted by tekken.json's image settings: %v", msg, j, mi.vis.Dir, mi.vis.Processor.Family(), err)
	}
	mi.vis = tv
	mi.refs.vis = tv
	if err := mi.refs.addRef(po, imageRef{msg: msg, part: j}); err != nil {
		return mistralChunk{}, err
	}
	return mistralChunk{image: len(mi.refs.refs)}, nil
}

// mistralAggregate is the normaliser's _aggregate_content_chunks_impl for
// a run of user messages some of which hold images: their chunks in order,
// empty texts skipped, adjacent texts joined by "\n\n" (v3's and v7's
// message and chunk separators alike).
func mistralAggregate(group []mistralMessage) []mistralChunk {
	var out []mistralChunk
	text := func(s string) {
		if s == "" {
			return
		}
		if k := len(out); k > 0 && out[k-1].image == 0 {
			out[k-1].text += "\n\n" + s
			return
		}
		out = append(out, mistralChunk{text: s})
	}
	for _, m := range group {
		if m.chunks == nil {
			text(m.content)
			continue
		}
		for _, c := range m.chunks {
			if c.image == 0 {
				text(c.text)
			} else {
				out = append(out, c)
			}
		}
	}
	return out
}

// mistralImageFirst is InstructTokenizerV3._maybe_put_image_first: a
// user content of text chunks then one image (after coalescing, one text
// and the image) is encoded image first.
func mistralImageFirst(chunks []mistralChunk) []mistralChunk {
	n := len(chunks)
	if n < 2 || chunks[n-1].image == 0 {
		return chunks
	}
	for _, c := range chunks[:n-1] {
		if c.image != 0 {
			return chunks
		}
	}
	return append([]mistralChunk{chunks[n-1]}, chunks[:n-1]...)
}

// userChunks writes a user message's chunks: each text encoded on its
// own (a cut after it), each image a Fixed token of its placeholder; v3's
// system prompt, on the last user message, is a text chunk of its own
// first.
func (w *mistralWriter) userChunks(chunks []mistralChunk, systemPrefix string) error {
	if systemPrefix != "" {
		w.text(systemPrefix + "\n\n")
		w.cut()
	}
	for _, c := range mistralImageFirst(chunks) {
		if c.image == 0 {
			w.text(c.text)
			w.cut()
			continue
		}
		id, ok := w.ids["[IMG]"]
		if !ok {
			return fmt.Errorf("mistral: the tokenizer has no special token [IMG]")
		}
		w.order = append(w.order, c.image)
		start := len(w.dst)
		w.dst = append(w.dst, "[IMG]"...)
		w.fixed = append(w.fixed, FixedToken{Start: start, End: len(w.dst), ID: id, Image: len(w.order)})
	}
	return nil
}

func (w *mistralWriter) cut() {
	if k := len(w.cuts); k == 0 || w.cuts[k-1] < len(w.dst) {
		w.cuts = append(w.cuts, len(w.dst))
	}
}

// mistralExpand reads the images' sizes in prompt order (order holds
// indexes into refs, 1-based), checks the server's limit and expands each
// by tekken.json's image settings, with its token ids.
func mistralExpand(mi *mistralImages, order []int, ex *extract.Inputs, f *chat.MistralFormat) ([]Image, error) {
	if len(order) == 0 {
		return nil, nil
	}
	v := mi.vis
	if err := vision.CheckCount(len(order), v.Limit); err != nil {
		return nil, refuse(VLLM, "too many images", "%v", err)
	}
	var kw map[string]any
	if raw, ok := ex.Body.Get("mm_processor_kwargs"); ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &kw); err != nil {
			return nil, refuse(VLLM, "mm_processor_kwargs must be an object", "")
		}
	}
	out := make([]Image, len(order))
	for k, i := range order {
		r := &mi.refs.refs[i-1]
		h, err := imageHeader(v, r.url)
		if err != nil {
			return nil, refuse(VLLM, "image", "%s: %v", r.where(), err)
		}
		e, err := v.expand(h.Width, h.Height, vision.Overrides{Kwargs: kw, Detail: r.Detail})
		if err != nil {
			return nil, refuse(VLLM, "image", "%s: %v", r.where(), err)
		}
		ids := make([]int, 0, e.Special)
		for _, p := range e.Pieces {
			id, ok := f.Special[p.Text]
			if !ok {
				return nil, fmt.Errorf("mistral: the tokenizer has no special token %s", p.Text)
			}
			for range p.Repeat {
				ids = append(ids, id)
			}
		}
		out[k] = Image{Width: h.Width, Height: h.Height, Expansion: e, ids: ids}
	}
	return out, nil
}
