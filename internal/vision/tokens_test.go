package vision

import (
	"testing"

	"github.com/islkit/islkit/internal/testutil/testmodel"
)

// TestQwenExpansionTokens: with Qwen3's tokenizer (the Qwen2.5-VL and
// Qwen3-VL vocabularies share its vision tokens), the template's
// <|vision_start|>, an expansion and <|vision_end|> encode to exactly
// Special + 2 ids: the ids config.json names (vision_start_token_id 151652,
// image_token_id 151655, vision_end_token_id 151653), so Expansion.Tokens
// is the image's share without re-tokenizing.
func TestQwenExpansionTokens(t *testing.T) {
	tok, err := testmodel.Source(t, "").Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"qwen2_5_vl", "qwen3_vl"} {
		p := load(t, name)
		for _, size := range [][2]int{{1, 1}, {1280, 720}, {333, 517}, {4000, 20}} {
			e, err := p.Expand(size[0], size[1], Overrides{})
			if err != nil {
				t.Fatal(err)
			}
			ids := tok.Encode("<|vision_start|>" + e.Text() + "<|vision_end|>")
			if len(ids) != e.Tokens()+2 || e.Literal {
				t.Fatalf("%s %v: %d ids for %d tokens", name, size, len(ids), e.Tokens())
			}
			if ids[0] != 151652 || ids[len(ids)-1] != 151653 {
				t.Fatalf("%s %v: ends %d %d", name, size, ids[0], ids[len(ids)-1])
			}
			for _, id := range ids[1 : len(ids)-1] {
				if id != 151655 {
					t.Fatalf("%s %v: id %d in the image", name, size, id)
				}
			}
		}
	}
}
