package serverprofile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/jsonobj"
	"github.com/islkit/islkit/internal/vision"
	"github.com/islkit/islkit/internal/vision/imagehdr"
)

// Vision is what a vLLM server of a vision-language model does with a
// request's images: the model's processor (vision.Load), the server's
// --limit-mm-per-prompt for images, and how remote image URLs are read
// (nil: only data URLs; a remote URL is then refused, never guessed).
// A nil *Vision is a text-only model: vLLM refuses any media part.
type Vision struct {
	Processor vision.Processor
	// Limit is --limit-mm-per-prompt's image count; negative: none.
	Limit int
	// Fetch reads the header of the image at a remote URL.
	Fetch func(url string) (imagehdr.Header, error)
	// Dir is the folder LoadVision read the processor from (the pin's
	// processor when it is not the tokenizer's).
	Dir string
	// unsupported refuses every image: a family LoadVision read but whose
	// images are not counted yet.
	unsupported error
	// expansions caches Processor.Expand by image size, without
	// overrides (a payload log repeats a few sizes); sizes counts its
	// entries, bounded by maxCachedSizes.
	expansions sync.Map // [2]int → vision.Expansion
	sizes      atomic.Int32
	// tekken is the view of Dir's tekken.json image settings, for the
	// Mistral renderer when Processor is transformers' format (a Mistral
	// repo ships both; vLLM in tokenizer mode mistral reads tekken.json).
	tekkenOnce sync.Once
	tekken     *Vision
	tekkenErr  error
}

// tekkenView is v for the Mistral renderer: v itself when it reads
// tekken.json's image settings, else those of Dir's tekken.json (read
// once).
func (v *Vision) tekkenView() (*Vision, error) {
	if v.Processor.Family() == vision.MistralTekken {
		return v, nil
	}
	v.tekkenOnce.Do(func() {
		if v.Dir == "" {
			v.tekkenErr = fmt.Errorf("no model folder to read tekken.json from")
			return
		}
		p, err := vision.LoadFormat(v.Dir, vision.FormatMistral)
		if err != nil {
			v.tekkenErr = err
			return
		}
		v.tekken = &Vision{Processor: p, Limit: v.Limit, Fetch: v.Fetch, Dir: v.Dir}
	})
	return v.tekken, v.tekkenErr
}

// maxCachedSizes bounds Vision's cache of expansions by size.
const maxCachedSizes = 4096

// expand is Processor.Expand, from the cache when o is empty. An
// Expansion is never modified once made, so one is shared.
func (v *Vision) expand(w, h int, o vision.Overrides) (vision.Expansion, error) {
	if o.Kwargs != nil || o.Detail != "" {
		return v.Processor.Expand(w, h, o)
	}
	key := [2]int{w, h}
	if e, ok := v.expansions.Load(key); ok {
		return e.(vision.Expansion), nil
	}
	e, err := v.Processor.Expand(w, h, o)
	if err == nil && v.sizes.Add(1) <= maxCachedSizes {
		v.expansions.Store(key, e)
	}
	return e, err
}

// NewVision is the vLLM view of a model's image processor. A
// Mistral-format model's images (no placeholder: mistral-common's encoder
// inserts their tokens itself) are counted by the Mistral renderer only.
func NewVision(p vision.Processor, limit int) (*Vision, error) {
	if f := p.Family(); vllmImagePlaceholder(f) == "" && f != vision.MistralTekken && f != vision.Mistral3 {
		return nil, fmt.Errorf("image counting for %s models is not supported yet", p.Family())
	}
	return &Vision{Processor: p, Limit: limit}, nil
}

// Supported is nil when v counts images, else why it refuses them.
func (v *Vision) Supported() error { return v.unsupported }

// vllmImagePlaceholder is get_placeholder_str(modality="image") of the
// vLLM model class serving the family: the text vLLM puts in front of a
// message's text for each image when the template takes string content
// (§1.2, _get_full_multimodal_text_prompt). Pixtral in transformers'
// format is served by LlavaForConditionalGeneration, whose "<image>" is
// no token of its vocabulary, and Mistral3ForConditionalGeneration has
// none: with a string-content template their prompts lack the [IMG] the
// processor expands, and vLLM fails them ("Failed to apply prompt
// replacement"); their own templates take "openai" content and print
// [IMG] for each image part.
func vllmImagePlaceholder(f vision.Family) string {
	switch f {
	case vision.Qwen2VL, vision.Qwen3VL:
		return "<|vision_start|><|image_pad|><|vision_end|>"
	case vision.Gemma3:
		return "<start_of_image>"
	case vision.Llama4:
		return "<|image|>"
	case vision.PixtralHF:
		return "<image>"
	case vision.InternVL:
		return "<IMG_CONTEXT>"
	case vision.LlavaOneVision, vision.Idefics3, vision.SmolVLM:
		return "<image>"
	}
	return ""
}

// imageRef is one image part of a request, in prompt order.
type imageRef struct {
	// url is the URL's bytes: the body's own (not copied) when its JSON
	// string has no escapes, as a data URL's base64 never has.
	url    []byte
	Detail string
	// msg and part place it: messages[msg].content[part].
	msg, part int
}

// where names the part, for errors.
func (r *imageRef) where() string {
	return fmt.Sprintf("messages[%d].content[%d]", r.msg, r.part)
}

// imageRefs collects the image parts Prepare met (nil when the model is
// text-only).
type imageRefs struct {
	vis  *Vision
	refs []imageRef
}

// add reads an image part's URL (chat: image_url.url; Responses:
// input_image's image_url string) and detail.
func (c *imageRefs) add(part jsonobj.Object, msg, j int) error {
	ref := imageRef{msg: msg, part: j}
	if c.vis.unsupported != nil {
		return refuse(VLLM, "image", "%s: %v", ref.where(), c.vis.unsupported)
	}
	if c.vis.Processor != nil && c.vis.Processor.Family() == vision.MistralTekken {
		return refuse(VLLM, "image", "%s: %s images are counted only with the Mistral renderer (tokenizer mode mistral): mistral-common's encoder inserts their image tokens, not a chat template", ref.where(), c.vis.Processor.Family())
	}
	return c.addRef(part, ref)
}

// addRef reads an image part's URL and detail into ref and appends it.
func (c *imageRefs) addRef(part jsonobj.Object, ref imageRef) error {
	v, _ := part.Get("image_url")
	if u, ok := urlBytes(v); ok {
		ref.url = u // Responses input_image, or a bare string
	} else if o, err := jsonobj.Members(v); err == nil && v != nil {
		u, _ := o.Get("url")
		if ref.url, ok = urlBytes(u); !ok {
			return refuse(VLLM, "an image part needs a URL", "%s.image_url.url", ref.where())
		}
		d, _ := o.Get("detail")
		ref.Detail, _ = str(d)
	} else {
		return refuse(VLLM, "an image part needs a URL", "%s.image_url", ref.where())
	}
	if d, ok := part.Get("detail"); ok && ref.Detail == "" {
		ref.Detail, _ = str(d)
	}
	c.refs = append(c.refs, ref)
	return nil
}

// urlBytes is a JSON string's value: the bytes between its quotes as
// they lie in the body when it holds no escape (a data URL's megabytes of
// base64 are neither copied nor scanned again), else decoded.
func urlBytes(raw []byte) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 {
		return body, true
	}
	s, ok := str(raw)
	return []byte(s), ok
}

// Image is one image of a rendered prompt: its size and what its
// placeholder becomes.
type Image struct {
	Width, Height int
	Expansion     vision.Expansion
	// ids are the expansion's token ids where the renderer places the
	// image by id (mistral-common's image chunk); nil otherwise.
	ids []int
}

// expandImages reads every image's size, applies the server's limits and
// the processor, and checks that the render printed one placeholder per
// image.
func expandImages(c *imageRefs, ex *extract.Inputs, text []byte) ([]Image, error) {
	if c == nil || len(c.refs) == 0 {
		return nil, nil
	}
	v := c.vis
	if err := vision.CheckCount(len(c.refs), v.Limit); err != nil {
		return nil, refuse(VLLM, "too many images", "%v", err)
	}
	var kw map[string]any
	if raw, ok := ex.Body.Get("mm_processor_kwargs"); ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &kw); err != nil {
			return nil, refuse(VLLM, "mm_processor_kwargs must be an object", "")
		}
	}
	out := make([]Image, len(c.refs))
	for i, r := range c.refs {
		h, err := imageHeader(v, r.url)
		if err != nil {
			return nil, refuse(VLLM, "image", "%s: %v", r.where(), err)
		}
		e, err := v.expand(h.Width, h.Height, vision.Overrides{Kwargs: kw, Detail: r.Detail})
		if err != nil {
			return nil, refuse(VLLM, "image", "%s: %v", r.where(), err)
		}
		out[i] = Image{Width: h.Width, Height: h.Height, Expansion: e}
	}
	if n := bytes.Count(text, []byte(out[0].Expansion.Placeholder)); n != len(out) && (n < len(out) || !keepsExtraPlaceholders(v.Processor.Family())) {
		// transformers' processors refuse a text whose placeholders do not
		// match the images given.
		return nil, refuse(VLLM, "image placeholders", "the prompt holds %d %q for %d images", n, out[0].Expansion.Placeholder, len(out))
	}
	return out, nil
}

// keepsExtraPlaceholders: vLLM 0.32 expands the first of more [IMG] than
// images for Pixtral and Mistral Small 3.x in transformers' format (a
// user's text saying "[IMG]") and leaves the others one token each
// (compose.TestPixtralHFGrid's literal-img-token); expanded does the same.
func keepsExtraPlaceholders(f vision.Family) bool {
	return f == vision.PixtralHF || f == vision.Mistral3
}

// imageHeader reads an image's size as the server would: a data URL's
// bytes, or (with Fetch) a remote URL's.
func imageHeader(v *Vision, url []byte) (imagehdr.Header, error) {
	if len(url) >= 5 && strings.EqualFold(string(url[:5]), "data:") {
		h, err := imagehdr.DataURLBytes(url)
		var he *imagehdr.Error
		if err != nil && errors.As(err, &he) && he.MediaTypeMismatch {
			// vLLM opens the bytes whatever the media type says.
			return h, nil
		}
		return h, err
	}
	if v.Fetch == nil {
		return imagehdr.Header{}, fmt.Errorf("a remote image URL (%s): its size is unknown without fetching it (measure --fetch-images)", clipURL(string(url[:min(len(url), 81)])))
	}
	return v.Fetch(string(url))
}

func clipURL(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// expanded is text with each image placeholder, in order, replaced by
// its image's text; replaced text is never scanned again (Gemma's
// replacement holds its placeholder).
func expanded(text []byte, images []Image) []byte {
	if len(images) == 0 {
		return text
	}
	ph := []byte(images[0].Expansion.Placeholder)
	out := make([]byte, 0, len(text)+len(images)*64)
	rest := text
	for _, im := range images {
		i := bytes.Index(rest, ph)
		if i < 0 {
			break // expandImages counted them
		}
		out = append(out, rest[:i]...)
		for _, p := range im.Expansion.Pieces {
			for k := 0; k < p.Repeat; k++ {
				out = append(out, p.Text...)
			}
		}
		rest = rest[i+len(ph):]
	}
	return append(out, rest...)
}

// literal reports whether some image's replacement holds plain text.
func literal(images []Image) bool {
	for _, im := range images {
		if im.Expansion.Literal {
			return true
		}
	}
	return false
}

// VisionFlags is LoadVision for the flags every tool takes: processor
// (--processor; "" is modelDir, the tokenizer's folder) and limit
// (--limit-mm-per-prompt, ParseImageLimit's forms). An error is a bad
// limit: a usage error for the caller.
func VisionFlags(processor, modelDir, limit string) (*Vision, error) {
	n, err := ParseImageLimit(limit)
	if err != nil {
		return nil, err
	}
	if processor == "" {
		processor = modelDir
	}
	return LoadVision(processor, n), nil
}

// LoadVision reads the image processing of the model in dir for a vLLM
// server with --limit-mm-per-prompt image=limit (negative: none): nil for
// a text-only model (no processor configuration, or a config.json without
// a vision encoder) and for the embedded model (dir ""). A family whose
// images cannot be counted yet (Mistral's format) gives a Vision that
// refuses each image with the reason, so requests without images still
// count.
func LoadVision(dir string, limit int) *Vision {
	if dir == "" {
		return nil
	}
	p, err := vision.Load(dir)
	switch {
	case errors.Is(err, vision.ErrTextOnly), err != nil && !hasProcessorConfig(dir):
		return nil
	case err != nil:
		// A family without a rule: requests with images fail with the
		// reason, the others count.
		return &Vision{Limit: limit, unsupported: err, Dir: dir}
	}
	v, err := NewVision(p, limit)
	if err != nil {
		return &Vision{Processor: p, Limit: limit, unsupported: err, Dir: dir}
	}
	v.Dir = dir
	return v
}

// hasProcessorConfig reports whether dir holds a file vision.Load reads
// for images (a tokenizer folder has none of them).
func hasProcessorConfig(dir string) bool {
	for _, name := range []string{"preprocessor_config.json", "processor_config.json", "tekken.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// ParseImageLimit reads a --limit-mm-per-prompt value as vLLM takes it,
// JSON ({"image": 4}) or key=value pairs (image=4,video=1), and returns
// its image count ("" or no image key: -1, no limit).
func ParseImageLimit(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return -1, nil
	}
	var m map[string]any
	if strings.HasPrefix(s, "{") {
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return 0, fmt.Errorf("--limit-mm-per-prompt %s: not a JSON object", s)
		}
	} else {
		m = map[string]any{}
		for _, kv := range strings.Split(s, ",") {
			k, v, ok := strings.Cut(kv, "=")
			var n int
			if _, err := fmt.Sscan(v, &n); !ok || err != nil {
				return 0, fmt.Errorf("--limit-mm-per-prompt %s: want MODALITY=N pairs, e.g. image=4", s)
			}
			m[strings.TrimSpace(k)] = float64(n)
		}
	}
	v, ok := m["image"]
	if !ok {
		return -1, nil
	}
	switch n := v.(type) {
	case float64:
		if n >= 0 && n == float64(int(n)) {
			return int(n), nil
		}
	case map[string]any:
		// vLLM ≥ 0.11 also takes {"image": {"count": N, ...}}.
		if c, ok := n["count"].(float64); ok && c >= 0 && c == float64(int(c)) {
			return int(c), nil
		}
	}
	return 0, fmt.Errorf("--limit-mm-per-prompt %s: the image limit is not a whole number ≥ 0", s)
}
