package vision

import (
	"math"
	"strconv"
)

// llavaOneVision is LLaVA-OneVision's any-res count
// (LlavaOnevisionProcessor._get_number_of_features): the best grid pinpoint
// for the image, its patches unpadded to the image's aspect ratio, scaled
// down past anyres_max_N, a newline token per row, plus the base image's
// tokens; all of them <image>. (A prompt with several images gets
// num_image_tokens + 1 per image from transformers instead; vLLM counts each
// image like this one, as a single-image prompt.)
type llavaOneVision struct {
	pinpoints [][2]int // (height, width)
	tile      int      // size.height of the base image
	baseTok   int      // num_image_tokens
	maxPatch  int      // N of anyres_max_N
	defaultFS bool     // vision_feature_select_strategy "default" drops one
}

func (l *llavaOneVision) Family() Family { return LlavaOneVision }

func (l *llavaOneVision) Expand(w, h int, o Overrides) (Expansion, error) {
	if err := checkInput(w, h, o); err != nil {
		return Expansion{}, err
	}
	if err := newKwargs(o.Kwargs).done(); err != nil {
		return Expansion{}, err
	}
	bh, bw := selectBestResolution(h, w, l.pinpoints)
	scaleH, scaleW := bh/l.tile, bw/l.tile
	side := int(math.Sqrt(float64(l.baseTok)))
	unpadded, newline := l.unpaddedFeatures(h, w, side, side, scaleH, scaleW)
	n := unpadded + newline + l.baseTok
	if l.defaultFS {
		n--
	}
	b := newBuilder("<image>")
	b.add("<image>", n)
	return b.expansion("<image>", 1+scaleH*scaleW), nil
}

func (l *llavaOneVision) unpaddedFeatures(height, width, ph, pw, sh, sw int) (int, int) {
	curH, curW := ph*sh, pw*sw
	orig := float64(width) / float64(height)
	cur := float64(curW) / float64(curH)
	if orig > cur {
		newH := int(pyRound7(float64(height) * (float64(curW) / float64(width))))
		pad := floorDiv(curH-newH, 2)
		curH -= pad * 2
	} else {
		newW := int(pyRound7(float64(width) * (float64(curH) / float64(height))))
		pad := floorDiv(curW-newW, 2)
		curW -= pad * 2
	}
	unpadded, newline := curH*curW, curH
	ratio := math.Sqrt(float64(curH*curW) / float64(l.maxPatch*ph*ph))
	if ratio > 1.1 {
		unpadded = int(pyFloorDiv(float64(curH), ratio)) * int(pyFloorDiv(float64(curW), ratio))
		newline = int(pyFloorDiv(float64(curH), ratio))
	}
	return unpadded, newline
}

// pyRound7 is Python's round(x, 7): correctly rounded, half to even on the
// exact binary value, which is what strconv's fixed formatting does.
func pyRound7(x float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 7, 64), 64)
	return f
}

// selectBestResolution is transformers' select_best_resolution: the
// pinpoint keeping the most of the image's resolution, then wasting least.
func selectBestResolution(h, w int, pins [][2]int) (int, int) {
	bestH, bestW := 0, 0
	maxEff, minWaste := 0, -1
	for _, p := range pins {
		ph, pw := p[0], p[1]
		scale := min(float64(pw)/float64(w), float64(ph)/float64(h))
		dw, dh := int(float64(w)*scale), int(float64(h)*scale)
		eff := min(dw*dh, w*h)
		waste := pw*ph - eff
		if eff > maxEff || (eff == maxEff && (minWaste < 0 || waste < minWaste)) {
			maxEff, minWaste, bestH, bestW = eff, waste, ph, pw
		}
	}
	return bestH, bestW
}
