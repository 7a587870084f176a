package serverprofile

import (
	"encoding/json"
	"fmt"

	"github.com/islkit/islkit/internal/chat"
)

// mistralDefaultSpecials are the special tokens mistral-common gives a
// tekken.json without a special_tokens list (Tekkenizer's
// DEPRECATED_SPECIAL_TOKENS), by rank: the two Tekken files it ships
// have none.
var mistralDefaultSpecials = []string{
	"<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
	"[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
	"[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
	"[TOOL_CONTENT]",
}

// MistralFormatOf reads what the Mistral renderer needs of a tekken.json:
// config.version and the special tokens' ids (special_tokens, or
// mistral-common's defaults when the file has none). Errors name the
// field; the caller names the file. (The vocabulary itself is
// tokenizer.FromTekken's.)
func MistralFormatOf(data []byte) (*chat.MistralFormat, error) {
	var f struct {
		Config *struct {
			Version                 *string `json:"version"`
			DefaultNumSpecialTokens *int    `json:"default_num_special_tokens"`
		} `json:"config"`
		SpecialTokens *[]struct {
			Rank     *int    `json:"rank"`
			TokenStr *string `json:"token_str"`
		} `json:"special_tokens"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a valid tekken.json: %w", err)
	}
	switch {
	case f.Config == nil:
		return nil, fmt.Errorf("config: missing (is this a tekken.json?)")
	case f.Config.Version == nil:
		return nil, fmt.Errorf("config.version: missing")
	}
	numSpecial := -1
	if f.Config.DefaultNumSpecialTokens != nil {
		numSpecial = *f.Config.DefaultNumSpecialTokens
	}
	mf := &chat.MistralFormat{Version: *f.Config.Version, Special: map[string]int{}}
	if f.SpecialTokens == nil {
		for rank, s := range mistralDefaultSpecials {
			mf.Special[s] = rank
		}
		return mf, nil
	}
	for i, s := range *f.SpecialTokens {
		switch {
		case s.Rank == nil:
			return nil, fmt.Errorf("special_tokens[%d].rank: missing", i)
		case s.TokenStr == nil:
			return nil, fmt.Errorf("special_tokens[%d].token_str: missing", i)
		case *s.Rank < 0 || (numSpecial >= 0 && *s.Rank >= numSpecial):
			return nil, fmt.Errorf("special_tokens[%d].rank: %d is not below config.default_num_special_tokens (%d)", i, *s.Rank, numSpecial)
		}
		if _, dup := mf.Special[*s.TokenStr]; dup {
			return nil, fmt.Errorf("special_tokens[%d].token_str: %q is given twice", i, *s.TokenStr)
		}
		mf.Special[*s.TokenStr] = *s.Rank
	}
	return mf, nil
}
