package vision

import "math"

// gemma3 is Gemma 3's rule (Gemma3Processor): every image, resized to
// 896×896, is image_seq_length soft tokens between <start_of_image> and
// <end_of_image>, with "\n\n" on each side; with pan-and-scan (off unless a
// request's do_pan_and_scan turns it on) a wide or tall image also gets
// crops, each a full sequence, after a sentence introducing them.
type gemma3 struct {
	seqLen int
	// The processor's defaults for pan-and-scan (preprocessor_config.json
	// leaves them null and Gemma3Processor's images_kwargs fill them).
	panScan  bool
	minCrop  int
	maxCrops int
	minRatio float64
}

func (g *gemma3) Family() Family { return Gemma3 }

func (g *gemma3) Expand(w, h int, o Overrides) (Expansion, error) {
	if err := checkInput(w, h, o); err != nil {
		return Expansion{}, err
	}
	k := newKwargs(o.Kwargs)
	on := k.boolean("do_pan_and_scan", g.panScan)
	minCrop := k.integer("pan_and_scan_min_crop_size", g.minCrop)
	maxCrops := k.integer("pan_and_scan_max_num_crops", g.maxCrops)
	minRatio := k.number("pan_and_scan_min_ratio_to_activate", g.minRatio)
	if err := k.done(); err != nil {
		return Expansion{}, err
	}
	crops := 0
	if on {
		if minCrop <= 0 || maxCrops < 1 || maxCrops > maxTiles {
			return Expansion{}, errorf("pan_and_scan_min_crop_size %d and pan_and_scan_max_num_crops %d: want a positive size and 1 to %d crops", minCrop, maxCrops, maxTiles)
		}
		crops = panAndScanCrops(w, h, minCrop, maxCrops, minRatio)
	}
	b := newBuilder("<start_of_image>", "<image_soft_token>", "<end_of_image>")
	full := func() {
		b.add("\n\n", 1)
		b.add("<start_of_image>", 1)
		b.add("<image_soft_token>", g.seqLen)
		b.add("<end_of_image>", 1)
		b.add("\n\n", 1)
	}
	if crops == 0 {
		full()
		return b.expansion("<start_of_image>", 1), nil
	}
	b.add("Here is the original image ", 1)
	full()
	b.add(" and here are some crops to help you see better ", 1)
	for i := range crops {
		if i > 0 {
			b.add(" ", 1)
		}
		full()
	}
	return b.expansion("<start_of_image>", 1+crops), nil
}

// panAndScanCrops is Gemma3ImageProcessor.pan_and_scan's count of crops
// (0: none).
func panAndScanCrops(w, h, minCrop, maxCrops int, minRatio float64) int {
	var cw, ch int
	if w >= h {
		if float64(w)/float64(h) < minRatio {
			return 0
		}
		cw = int(math.Floor(float64(w)/float64(h) + 0.5))
		cw = min(int(math.Floor(float64(w)/float64(minCrop))), cw)
		cw = max(2, cw)
		cw = min(maxCrops, cw)
		ch = 1
	} else {
		if float64(h)/float64(w) < minRatio {
			return 0
		}
		ch = int(math.Floor(float64(h)/float64(w) + 0.5))
		ch = min(int(math.Floor(float64(h)/float64(minCrop))), ch)
		ch = max(2, ch)
		ch = min(maxCrops, ch)
		cw = 1
	}
	sw := int(math.Ceil(float64(w) / float64(cw)))
	sh := int(math.Ceil(float64(h) / float64(ch)))
	if min(sw, sh) < minCrop {
		return 0
	}
	return cw * ch
}
