// Package vision counts the prompt tokens an image becomes on the
// vision-language models vLLM and SGLang serve, as their processors compute
// them: from the model's own processor configuration (preprocessor_config.json,
// processor_config.json, config.json; tekken.json's image settings for
// Mistral-format models), the family's resize or tiling rule gives a grid,
// and the grid gives the text the processor puts in place of the image
// placeholder the chat template printed (start and end tokens, row breaks,
// tile separators, newlines included).
//
// Rules are written from transformers 5.24's PIL image processors and model
// processors and mistral-common 1.13's ImageEncoder, the code vLLM and SGLang
// call for these families; TestReference checks every family against those
// libraries run on a grid of sizes (scripts/vision). A family without a rule
// is refused by name, never guessed.
//
// A caller counting a request: p, err := vision.Load(modelDir) once; per
// image, h, err := imagehdr.DataURL(url) (or imagehdr.Read on fetched
// bytes) for the size Pillow reports (servers do not apply EXIF rotation);
// vision.CheckCount(images, limit); e, err := p.Expand(h.Width, h.Height,
// vision.Overrides{Kwargs: body's mm_processor_kwargs, Detail: detail}).
// Then render the chat template, replace the placeholders it printed, in
// order, each with its image's e.Text() (never rescanning replaced text:
// Gemma's replacement holds its placeholder again), as transformers'
// ProcessorMixin does, and count the prompt;
// where !e.Literal, e.Tokens() is the image's exact share without
// re-tokenizing.
package vision

import (
	"fmt"
	"strings"
)

// Family names a processing rule.
type Family string

const (
	Qwen2VL        Family = "qwen2_vl" // Qwen2-VL and Qwen2.5-VL
	Qwen3VL        Family = "qwen3_vl"
	Gemma3         Family = "gemma3"
	Llama4         Family = "llama4"
	PixtralHF      Family = "pixtral"         // Pixtral in transformers' format (LlavaForConditionalGeneration, a pixtral vision tower)
	Mistral3       Family = "mistral3"        // Mistral Small 3.x in transformers' format (Mistral3ForConditionalGeneration)
	MistralTekken  Family = "mistral"         // Pixtral and Mistral Small 3.x in Mistral's format (mistral-common)
	InternVL       Family = "internvl"        // InternVL3 in transformers' format
	LlavaOneVision Family = "llava_onevision" // LLaVA-OneVision
	Idefics3       Family = "idefics3"        // Idefics3
	SmolVLM        Family = "smolvlm"         // SmolVLM and SmolVLM2
)

// Families lists the families with a rule, for messages.
var Families = []Family{Qwen2VL, Qwen3VL, Gemma3, Llama4, PixtralHF, Mistral3, MistralTekken, InternVL, LlavaOneVision, Idefics3, SmolVLM}

// Piece is a run of one text repeated.
type Piece struct {
	Text   string
	Repeat int
}

// Expansion is what one image placeholder becomes in the prompt the server
// tokenizes.
type Expansion struct {
	// Placeholder is the text the processor replaces: the image token the
	// chat template prints for an image (Qwen's template prints it between
	// <|vision_start|> and <|vision_end|>, which stay).
	Placeholder string
	// Pieces is the replacement, as runs: special tokens and, for some
	// families, literal text (Gemma 3's "\n\n", Idefics3's "\n", the
	// pan-and-scan sentence).
	Pieces []Piece
	// Special is the number of special tokens in the replacement: each is
	// one token.
	Special int
	// Literal says the replacement holds text besides special tokens; its
	// tokens depend on the tokenizer and on the text around it (Gemma's
	// "\n\n" merges with the template's newlines), so count the prompt with
	// the replacement in place.
	Literal bool
	// Tiles is the number of images the vision encoder sees (crops, tiles
	// and the global view; 1 for a single resized image).
	Tiles int
}

// Text is the replacement text.
func (e Expansion) Text() string {
	var b strings.Builder
	for _, p := range e.Pieces {
		b.WriteString(strings.Repeat(p.Text, p.Repeat))
	}
	return b.String()
}

// Tokens is the replacement's token count when it is only special tokens,
// and -1 when it holds literal text (count it in context).
func (e Expansion) Tokens() int {
	if e.Literal {
		return -1
	}
	return e.Special
}

// Overrides are the per-request settings the server honours for an image:
// the body's mm_processor_kwargs (vLLM passes them to the processor call;
// each family accepts only its own) and the OpenAI image_url "detail",
// which vLLM and SGLang read and ignore.
type Overrides struct {
	Kwargs map[string]any
	Detail string
}

// Processor expands an image of a size into its prompt text.
type Processor interface {
	Family() Family
	// Expand returns what an image of w×h pixels (as Pillow reports its
	// size) becomes, or an error naming why the server would refuse it.
	Expand(w, h int, o Overrides) (Expansion, error)
}

// Error is an image or a configuration the rule refuses, with the reason.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func errorf(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// builder collects pieces, merging runs and counting special tokens.
type builder struct {
	pieces  []Piece
	special map[string]bool
	n       int
	literal bool
}

func newBuilder(special ...string) *builder {
	b := &builder{special: map[string]bool{}}
	for _, s := range special {
		b.special[s] = true
	}
	return b
}

func (b *builder) add(text string, repeat int) {
	if repeat <= 0 || text == "" {
		return
	}
	if b.special[text] {
		b.n += repeat
	} else {
		b.literal = true
	}
	if k := len(b.pieces); k > 0 && b.pieces[k-1].Text == text {
		b.pieces[k-1].Repeat += repeat
		return
	}
	b.pieces = append(b.pieces, Piece{text, repeat})
}

func (b *builder) expansion(placeholder string, tiles int) Expansion {
	return Expansion{Placeholder: placeholder, Pieces: b.pieces, Special: b.n, Literal: b.literal, Tiles: tiles}
}

// checkInput refuses sizes no image has (imagehdr bounds real ones) and
// detail values OpenAI does not define; auto, low and high change nothing
// on these servers.
func checkInput(w, h int, o Overrides) error {
	if w < 1 || h < 1 || w > maxSide || h > maxSide {
		return errorf("image size %d×%d: sides must be 1 to %d pixels", w, h, maxSide)
	}
	switch o.Detail {
	case "", "auto", "low", "high":
		return nil
	}
	return errorf("image_url detail %q: not auto, low or high", o.Detail)
}

// maxSide is imagehdr.MaxSide: no image header declares more.
const maxSide = 65535

// maxTiles bounds a request's tile count settings (InternVL's and Llama
// 4's max_patches): the grids are listed whole, and no model is trained
// past a few dozen tiles.
const maxTiles = 64
