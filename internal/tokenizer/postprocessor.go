package tokenizer

import (
	"fmt"

	json "github.com/goccy/go-json"
)

// postProcessor adds special tokens around an encoded sequence when the
// caller asks for them (add_special_tokens=true).
type postProcessor interface {
	// process wraps one sequence's ids.
	process(ids []int) []int
	// added is how many ids process adds (num_special_tokens_to_add).
	added(pair bool) int
}

func buildPostProcessor(raw json.RawMessage) (postProcessor, error) {
	if isNull(raw) {
		return nil, nil
	}
	kind, err := typeOf(raw)
	if err != nil {
		return nil, err
	}
	switch kind {
	case "ByteLevel":
		return noopProcessor{}, nil
	case "Sequence":
		var v struct {
			Processors []json.RawMessage `json:"processors"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("Sequence: %w", err)
		}
		var seq sequenceProcessor
		for i, r := range v.Processors {
			p, err := buildPostProcessor(r)
			if err != nil {
				return nil, fmt.Errorf("Sequence[%d]: %w", i, err)
			}
			if p != nil {
				seq = append(seq, p)
			}
		}
		return seq, nil
	case "BertProcessing", "RobertaProcessing":
		var v struct {
			Sep [2]json.RawMessage `json:"sep"`
			Cls [2]json.RawMessage `json:"cls"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		var sep, cls int
		if err := json.Unmarshal(v.Sep[1], &sep); err != nil {
			return nil, fmt.Errorf("%s: sep: %w", kind, err)
		}
		if err := json.Unmarshal(v.Cls[1], &cls); err != nil {
			return nil, fmt.Errorf("%s: cls: %w", kind, err)
		}
		// Single: CLS A SEP. Pair: BERT adds CLS A SEP B SEP (3),
		// RoBERTa CLS A SEP SEP B SEP (4).
		pairAdded := 3
		if kind == "RobertaProcessing" {
			pairAdded = 4
		}
		return templateProcessor{before: []int{cls}, after: []int{sep}, pairAdded: pairAdded}, nil
	case "TemplateProcessing":
		return buildTemplate(raw)
	default:
		return nil, fmt.Errorf("unsupported post_processor type %q", kind)
	}
}

type noopProcessor struct{}

func (noopProcessor) process(ids []int) []int { return ids }
func (noopProcessor) added(bool) int          { return 0 }

type sequenceProcessor []postProcessor

func (seq sequenceProcessor) process(ids []int) []int {
	for _, p := range seq {
		ids = p.process(ids)
	}
	return ids
}

func (seq sequenceProcessor) added(pair bool) int {
	n := 0
	for _, p := range seq {
		n += p.added(pair)
	}
	return n
}

// templateProcessor puts fixed ids before and after the single sequence.
type templateProcessor struct {
	before, after []int
	pairAdded     int
}

func (t templateProcessor) process(ids []int) []int {
	out := make([]int, 0, len(t.before)+len(ids)+len(t.after))
	out = append(out, t.before...)
	out = append(out, ids...)
	return append(out, t.after...)
}

func (t templateProcessor) added(pair bool) int {
	if pair {
		return t.pairAdded
	}
	return len(t.before) + len(t.after)
}

// templatePieceJSON is one element of a TemplateProcessing template.
type templatePieceJSON struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID string `json:"id"`
	} `json:"Sequence"`
}

func buildTemplate(raw json.RawMessage) (postProcessor, error) {
	var v struct {
		Single        []templatePieceJSON `json:"single"`
		Pair          []templatePieceJSON `json:"pair"`
		SpecialTokens map[string]struct {
			IDs []int `json:"ids"`
		} `json:"special_tokens"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("TemplateProcessing: %w", err)
	}
	idsOf := func(name string) ([]int, error) {
		st, ok := v.SpecialTokens[name]
		if !ok {
			return nil, fmt.Errorf("TemplateProcessing: special token %q is not in special_tokens", name)
		}
		return st.IDs, nil
	}
	var t templateProcessor
	seen := false
	for _, p := range v.Single {
		switch {
		case p.Sequence != nil:
			if seen {
				return nil, fmt.Errorf("TemplateProcessing: single template has more than one sequence")
			}
			seen = true
		case p.SpecialToken != nil:
			ids, err := idsOf(p.SpecialToken.ID)
			if err != nil {
				return nil, err
			}
			if seen {
				t.after = append(t.after, ids...)
			} else {
				t.before = append(t.before, ids...)
			}
		default:
			return nil, fmt.Errorf("TemplateProcessing: template piece is neither SpecialToken nor Sequence")
		}
	}
	for _, p := range v.Pair {
		if p.SpecialToken != nil {
			ids, err := idsOf(p.SpecialToken.ID)
			if err != nil {
				return nil, err
			}
			t.pairAdded += len(ids)
		}
	}
	return t, nil
}
