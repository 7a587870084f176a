package report

import "fmt"

// ModelMismatch counts the requests composed for another model than the
// one measure counted with (the records' composed_for against measure's
// --tokenizer and chat template): their counts are another tokenizer's.
type ModelMismatch struct {
	Requests uint64 `json:"requests"`
	// First says how the model differs for the first such request.
	First string `json:"first"`
}

// addModelMismatch counts one request whose model differs (why != "").
func (s *Accumulator) addModelMismatch(why string) {
	if why == "" {
		return
	}
	if s.modelMismatch == nil {
		s.modelMismatch = &ModelMismatch{First: why}
	}
	s.modelMismatch.Requests++
}

// ModelMismatchWarning says that n requests were composed for another
// model than measure counts with; first says how it differs.
func ModelMismatchWarning(n uint64, first string) string {
	return fmt.Sprintf("%d request(s) were composed for another model than measure counts with (%s): their counts are another tokenizer's or template's; give measure the --tokenizer (and --chat-template) of the records' composed_for", n, first)
}

func (m *ModelMismatch) line() string {
	return "warning: " + ModelMismatchWarning(m.Requests, m.First)
}
