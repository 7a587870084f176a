package vision

import "math"

// pixtral is Pixtral's and Mistral Small 3.x's grid: the image scaled down
// to fit longest_edge, then one [IMG] per (patch×merge)² pixels, an
// [IMG_BREAK] after each row and [IMG_END] in place of the last break.
// The two formats differ in the scaling: transformers' PixtralImageProcessor
// floors the scaled sides, mistral-common's ImageEncoder rounds them (half
// to even, at least 1); both count whole merged patches.
type pixtral struct {
	family     Family
	countPatch int // the processor's patch side: merged patches of countPatch×merge are counted
	merge      int // spatial_merge_size
	longest    int // max_image_size / size.longest_edge
}

func (p *pixtral) Family() Family { return p.family }

func (p *pixtral) Expand(w, h int, o Overrides) (Expansion, error) {
	if err := checkInput(w, h, o); err != nil {
		return Expansion{}, err
	}
	if err := newKwargs(o.Kwargs).done(); err != nil {
		return Expansion{}, err
	}
	var rows, cols int
	ratio := max(float64(h)/float64(p.longest), float64(w)/float64(p.longest))
	step := p.countPatch * p.merge
	if p.family == MistralTekken {
		fw, fh := w, h
		if ratio > 1 {
			fw = max(int(math.RoundToEven(float64(w)/ratio)), 1)
			fh = max(int(math.RoundToEven(float64(h)/ratio)), 1)
		}
		cols = (fw-1)/step + 1
		rows = (fh-1)/step + 1
	} else {
		fw, fh := w, h
		if ratio > 1 {
			fh = int(math.Floor(float64(h) / ratio))
			fw = int(math.Floor(float64(w) / ratio))
		}
		// Resized to whole merged patches: PixtralProcessor._process_images
		// hands the image processor patch_size × spatial_merge_size, not
		// the preprocessor's patch_size (as vLLM's Mistral3HFEncoderInfo
		// and PixtralHFEncoderInfo count), then counted in merged patches.
		rows, cols = pyCeilDiv(fh, step), pyCeilDiv(fw, step)
		if fw == 0 || fh == 0 {
			// The image processor's resize to a side of 0 pixels fails
			// (vLLM 0.32: "Failed to apply PixtralProcessor").
			return Expansion{}, errorf("image %d×%d scales to %d×%d pixels, a side of none: the Pixtral processor fails on it", w, h, fw, fh)
		}
	}
	b := newBuilder("[IMG]", "[IMG_BREAK]", "[IMG_END]")
	for r := range rows {
		b.add("[IMG]", cols)
		if r < rows-1 {
			b.add("[IMG_BREAK]", 1)
		} else {
			b.add("[IMG_END]", 1)
		}
	}
	return b.expansion("[IMG]", 1), nil
}

// pyCeilDiv is Python's (n - 1) // d + 1, which is 0 for n = 0.
func pyCeilDiv(n, d int) int {
	q := (n - 1) / d
	if (n-1)%d != 0 && n-1 < 0 {
		q-- // floor division
	}
	return q + 1
}
