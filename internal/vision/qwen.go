package vision

import "math"

// qwen is Qwen2-VL's, Qwen2.5-VL's and Qwen3-VL's rule (transformers'
// Qwen2VLImageProcessor, which Qwen3-VL shares): smart_resize to multiples
// of patch×merge within [min_pixels, max_pixels], then one <|image_pad|> per
// merge×merge patches.
type qwen struct {
	family             Family
	patch, merge       int
	minPixels, maxPixs int
}

func (q *qwen) Family() Family { return q.family }

// MaxAspect is smart_resize's limit: a longer side over 200 times the
// shorter raises ValueError.
const qwenMaxAspect = 200

func (q *qwen) Expand(w, h int, o Overrides) (Expansion, error) {
	if err := checkInput(w, h, o); err != nil {
		return Expansion{}, err
	}
	k := newKwargs(o.Kwargs)
	minPx, maxPx := q.minPixels, q.maxPixs
	if s, l, ok := k.edges("size"); ok {
		minPx, maxPx = s, l
	}
	// min_pixels and max_pixels (the older names) override the size's.
	minPx = k.integer("min_pixels", minPx)
	maxPx = k.integer("max_pixels", maxPx)
	if err := k.done(); err != nil {
		return Expansion{}, err
	}
	if minPx <= 0 || maxPx <= 0 {
		return Expansion{}, errorf("min_pixels %d and max_pixels %d must be positive", minPx, maxPx)
	}
	rh, rw, err := smartResize(h, w, q.patch*q.merge, minPx, maxPx)
	if err != nil {
		return Expansion{}, err
	}
	n := (rh / q.patch) * (rw / q.patch) / (q.merge * q.merge)
	b := newBuilder("<|image_pad|>")
	b.add("<|image_pad|>", n)
	return b.expansion("<|image_pad|>", 1), nil
}

// smartResize is transformers' qwen2_vl smart_resize, with Python's
// arithmetic: round() rounds half to even, / is float division.
func smartResize(height, width, factor, minPixels, maxPixels int) (int, int, error) {
	hi, lo := max(height, width), min(height, width)
	if ratio := float64(hi) / float64(lo); ratio > qwenMaxAspect {
		return 0, 0, errorf("aspect ratio %s above %d, which the Qwen processor refuses", pyFloat(ratio), qwenMaxAspect)
	}
	f := float64(factor)
	hBar := int(math.RoundToEven(float64(height)/f)) * factor
	wBar := int(math.RoundToEven(float64(width)/f)) * factor
	if hBar*wBar > maxPixels {
		beta := math.Sqrt(float64(height*width) / float64(maxPixels))
		hBar = max(factor, int(math.Floor(float64(height)/beta/f))*factor)
		wBar = max(factor, int(math.Floor(float64(width)/beta/f))*factor)
	} else if hBar*wBar < minPixels {
		beta := math.Sqrt(float64(minPixels) / float64(height*width))
		hBar = int(math.Ceil(float64(height)*beta/f)) * factor
		wBar = int(math.Ceil(float64(width)*beta/f)) * factor
	}
	return hBar, wBar, nil
}
