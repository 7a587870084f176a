package main

import (
	"path/filepath"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

// TestImageFlags: the image flags are usage errors without --images or
// without what they need, and --images on a model folder with image
// processing composes turns with their images (--processor here).
func TestImageFlags(t *testing.T) {
	p := probeLine(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--isl", "50", "--image-size", "64x64"}, "--images"},
		{[]string{"--isl", "50", "--images", "1"}, "--image-size"},
		{[]string{"--isl", "50", "--images", "1", "--image-size", "64by64"}, "WxH"},
		{[]string{"--isl", "50", "--images", "1", "--image-size", "64x64", "--image-width-mean", "3"}, "one of them"},
		{[]string{"--isl", "50", "--images", "1", "--image-size", "64x64"}, "--processor"}, // the embedded Qwen3 has none
	} {
		if code, out, errs := runCLI(p, c.args...); code != 2 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	proc := filepath.Join("..", "..", "internal", "vision", "testdata", "configs", "qwen2_5_vl")
	code, out, errs := runCLI(p, "--isl", "600", "--conversations", "2", "--workers", "1", "--images", "2", "--image-size", "320x240", "--image-format", "jpeg", "--processor", proc)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var conv struct {
			Turns []struct {
				TargetISL int  `json:"target_isl"`
				WireISL   *int `json:"wire_isl"`
				Images    []struct {
					URL           string
					Width, Height int
				} `json:"images"`
			} `json:"turns"`
		}
		if err := json.Unmarshal([]byte(line), &conv); err != nil {
			t.Fatal(err)
		}
		turn := conv.Turns[0]
		if len(turn.Images) != 2 || turn.Images[0].Width != 320 || turn.Images[0].Height != 240 || !strings.HasPrefix(turn.Images[0].URL, "data:image/jpeg;base64,") ||
			turn.WireISL == nil || *turn.WireISL != 600 {
			t.Errorf("turn %+v", turn)
		}
	}
}
