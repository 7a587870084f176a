package measure

import (
	"testing"
)

// TestIDsOfEmptyTextIsEmptyArray: an empty text has no tokens, and its ids
// are the empty JSON array, never null (issue 11, item 21).
func TestIDsOfEmptyTextIsEmptyArray(t *testing.T) {
	m := defaultMeasurer(t)
	out := one(t, m, `{"text":""}`)
	if want := `{"text":"","tokens":0,"ids":[]}`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}
