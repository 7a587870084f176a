package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/records"
)

// TestImageTokensShown: the image tokens of the records are summed in the
// JSON summary and shown in the text summary and the HTML report.
func TestImageTokensShown(t *testing.T) {
	s := NewAccumulator()
	n := 500
	s.Add(records.ISL{Counted: "templated", Templated: &n, Media: &records.Media{Images: 2},
		ImageTokens: &records.ImageTokens{PerImage: []int{391, 64}, Total: 455}})
	s.Add(records.ISL{Counted: "templated", Templated: &n, Media: &records.Media{Images: 1},
		ImageTokens: &records.ImageTokens{PerImage: []int{1196}, Total: 1196}})
	m := s.Report().Media
	if m.Images != 3 || m.CountedImages != 3 || m.ImageTokens != 455+1196 {
		t.Errorf("media %+v", m)
	}
	const line = "images: 3 counted, 1651 image tokens in the templated counts (550.3 per image)"
	var text, page bytes.Buffer
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteReport(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), line) || strings.Contains(text.String(), "not in templated counts") {
		t.Errorf("text summary:\n%s", text.String())
	}
	if !strings.Contains(page.String(), line) {
		t.Errorf("the HTML report lacks %q", line)
	}
}
