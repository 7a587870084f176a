package vision

import (
	"errors"
	"fmt"
)

// ErrTextOnly is wrapped by Load's error for a model without a vision
// encoder: a server refuses any image for it.
var ErrTextOnly = errors.New("a text-only model takes no images")

// CheckCount refuses a prompt with more images than the server's
// --limit-mm-per-prompt allows (limit < 0: no limit). vLLM refuses the
// whole request with "At most N image(s) may be provided in one prompt."
func CheckCount(images, limit int) error {
	if limit >= 0 && images > limit {
		return errorf("%d images in one prompt, above the server's limit of %d (--limit-mm-per-prompt image=%d)", images, limit, limit)
	}
	return nil
}

// MaxAspect is the largest aspect ratio (longer over shorter side) the
// family's processor takes, or 0 when it has none. Expand refuses images
// beyond it with the reason; this tells a caller composing images the
// bound beforehand.
func MaxAspect(p Processor) float64 {
	switch p.Family() {
	case Qwen2VL, Qwen3VL:
		return qwenMaxAspect
	}
	return 0
}

// CheckAspect refuses an image whose aspect ratio is above the family's
// limit, with the reason, as the server would.
func CheckAspect(p Processor, w, h int) error {
	limit := MaxAspect(p)
	if limit == 0 || w < 1 || h < 1 {
		return nil
	}
	if r := float64(max(w, h)) / float64(min(w, h)); r > limit {
		return fmt.Errorf("image %d×%d: aspect ratio %s above %s, which the %s processor refuses", w, h, pyFloat(r), pyFloat(limit), p.Family())
	}
	return nil
}
