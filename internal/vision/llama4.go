package vision

import (
	"math"
	"slices"
)

// llama4 is Llama 4's tiling (Llama4ImageProcessor, Llama4Processor): the
// canvas of up to max_patches tiles of size×size that needs the least
// scaling, then per tile (ratio_h×ratio_w of them, when more than one)
// num_patches_per_chunk <|patch|> tokens with <|tile_x_separator|> between
// tiles of a row and <|tile_y_separator|> after each row, then the global
// view: <|image|> and its patches, all between <|image_start|> and
// <|image_end|>. transformers' processor exists only on torch, so this rule
// is checked against the processor's documented examples, not the grid.
type llama4 struct {
	tile        int // size.height (= size.width)
	maxPatches  int
	toMaxCanvas bool
	perChunk    int      // (tile/patch)² / round(1/pixel_shuffle_ratio²)
	res         [][2]int // the canvases for maxPatches, listed once
}

func (l *llama4) Family() Family { return Llama4 }

func (l *llama4) Expand(w, h int, o Overrides) (Expansion, error) {
	if err := checkInput(w, h, o); err != nil {
		return Expansion{}, err
	}
	k := newKwargs(o.Kwargs)
	maxP := k.integer("max_patches", l.maxPatches)
	toMax := k.boolean("resize_to_max_canvas", l.toMaxCanvas)
	if err := k.done(); err != nil {
		return Expansion{}, err
	}
	if maxP < 1 || maxP > maxTiles {
		return Expansion{}, errorf("max_patches %d: want 1 to %d", maxP, maxTiles)
	}
	res := l.res
	if maxP != l.maxPatches || res == nil {
		res = llama4Resolutions(maxP, l.tile)
	}
	ch, cw := llama4BestFit(h, w, res, toMax)
	rh, rw := ch/l.tile, cw/l.tile
	b := newBuilder("<|image_start|>", "<|patch|>", "<|tile_x_separator|>", "<|tile_y_separator|>", "<|image|>", "<|image_end|>")
	b.add("<|image_start|>", 1)
	tiles := 1
	if rh*rw > 1 {
		tiles += rh * rw
		for range rh {
			for x := range rw {
				b.add("<|patch|>", l.perChunk)
				if x < rw-1 {
					b.add("<|tile_x_separator|>", 1)
				}
			}
			b.add("<|tile_y_separator|>", 1)
		}
	}
	b.add("<|image|>", 1)
	b.add("<|patch|>", l.perChunk)
	b.add("<|image_end|>", 1)
	return b.expansion("<|image|>", tiles), nil
}

// llama4Resolutions is find_supported_resolutions: (height, width) canvases
// in its order (aspect ratios by first appearance, chunk counts falling).
func llama4Resolutions(maxChunks, tile int) [][2]int {
	var order []float64
	byRatio := map[float64][][2]int{}
	for n := maxChunks; n >= 1; n-- {
		var factors []int
		for i := 1; i <= int(math.Sqrt(float64(n))); i++ {
			if n%i == 0 {
				factors = append(factors, i)
				if n/i != i {
					factors = append(factors, n/i)
				}
			}
		}
		slices.Sort(factors)
		for _, f := range factors {
			hh, ww := f, n/f
			r := float64(hh) / float64(ww)
			if _, ok := byRatio[r]; !ok {
				order = append(order, r)
			}
			byRatio[r] = append(byRatio[r], [2]int{hh, ww})
		}
	}
	var out [][2]int
	for _, r := range order {
		for _, p := range byRatio[r] {
			out = append(out, [2]int{p[0] * tile, p[1] * tile})
		}
	}
	return out
}

// llama4BestFit is get_best_fit, in torch's float32 (an int64 tensor
// divided by an int is float32).
func llama4BestFit(h, w int, res [][2]int, toMaxCanvas bool) (int, int) {
	scales := make([]float32, len(res))
	for i, r := range res {
		sw := float32(r[1]) / float32(w)
		sh := float32(r[0]) / float32(h)
		if sh > sw {
			scales[i] = sw
		} else {
			scales[i] = sh
		}
	}
	var sel float32
	up := false
	for _, s := range scales {
		if s >= 1 {
			if !up || (toMaxCanvas && s > sel) || (!toMaxCanvas && s < sel) {
				sel = s
			}
			up = true
		}
	}
	if !up {
		first := true
		for _, s := range scales {
			if s < 1 && (first || s > sel) {
				sel, first = s, false
			}
		}
	}
	best := -1
	for i, s := range scales {
		if s == sel && (best < 0 || res[i][0]*res[i][1] < res[best][0]*res[best][1]) {
			best = i
		}
	}
	return res[best][0], res[best][1]
}
