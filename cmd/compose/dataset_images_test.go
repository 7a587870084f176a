package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/probe"
)

// TestDatasetImagesCLI: compose --dataset counts a dataset's image parts
// with --processor (named in composed_for for send --exact) and sizes the
// turn exactly to its target, --isl beyond what the request carries
// besides its text (the image's 391 tokens on Qwen2.5-VL among it); a remote image is read only with
// --fetch-images (without it the dialog is skipped with the reason), and
// --fetch-images without --dataset is a usage error.
func TestDatasetImagesCLI(t *testing.T) {
	rec, err := probe.Run(probe.Options{ApplyChatTemplate: true, CacheBust: cachebust.FirstTurnSuffix})
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := json.Marshal(rec)
	p := string(pb) + "\n"
	if code, _, errs := runCLI(p, "--isl", "50", "--fetch-images"); code != 2 || !strings.Contains(errs, "--dataset") {
		t.Errorf("--fetch-images without --dataset: exit %d, %q", code, errs)
	}
	var img bytes.Buffer
	if err := png.Encode(&img, image.NewGray(image.Rect(0, 0, 640, 480))); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(img.Bytes()) }))
	defer srv.Close()
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img.Bytes())
	lines := []string{
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + dataURL + `"}},{"type":"text","text":"What is in it?"}]}]}`,
		`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + srv.URL + `/a.png"}},{"type":"text","text":"And here?"}]}]}`,
	}
	ds := filepath.Join(t.TempDir(), "images.jsonl")
	if err := os.WriteFile(ds, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proc, err := filepath.Abs(filepath.Join("..", "..", "internal", "vision", "testdata", "configs", "qwen2_5_vl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, fetch := range []bool{false, true} {
		args := []string{"--dataset", ds, "--isl", "700", "--processor", proc, "--workers", "1"}
		if fetch {
			args = append(args, "--fetch-images")
		}
		code, out, errs := runCLI(p, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		convs := strings.Split(strings.TrimSpace(out), "\n")
		if want := map[bool]int{false: 1, true: 2}[fetch]; len(convs) != want {
			t.Fatalf("fetch %v: %d conversations, want %d (stderr %s)", fetch, len(convs), want, errs)
		}
		if !fetch && !strings.Contains(errs, "--fetch-images") {
			t.Errorf("the remote image's dialog skipped without the reason: %s", errs)
		}
		for _, line := range convs {
			var conv struct {
				ComposedFor struct{ Processor string } `json:"composed_for"`
				Turns       []struct {
					TargetISL int  `json:"target_isl"`
					WireISL   *int `json:"wire_isl"`
				} `json:"turns"`
			}
			if err := json.Unmarshal([]byte(line), &conv); err != nil {
				t.Fatal(err)
			}
			// The image is part of what the request carries besides its
			// text: the target is the count with an empty text + --isl,
			// so above --isl by the image's 391 tokens (and its 3 more).
			if conv.ComposedFor.Processor != proc || conv.Turns[0].WireISL == nil || *conv.Turns[0].WireISL != conv.Turns[0].TargetISL || conv.Turns[0].TargetISL < 700+394 {
				t.Errorf("fetch %v: %+v", fetch, conv)
			}
		}
	}
}
