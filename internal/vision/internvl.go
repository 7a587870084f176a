package vision

// internvl is InternVL3's dynamic tiling (transformers' GotOcr2ImageProcessor
// with InternVLProcessor's crop_to_patches): the grid of min..max tiles of
// size×size whose aspect ratio is closest to the image's, plus a thumbnail
// when there is more than one tile; each tile is image_seq_length
// <IMG_CONTEXT> tokens, all between <img> and </img>.
type internvl struct {
	tile                   int // size.height (= size.width)
	minPatches, maxPatches int
	crop                   bool
	seqLen                 int
}

func (v *internvl) Family() Family { return InternVL }

func (v *internvl) Expand(w, h int, o Overrides) (Expansion, error) {
	if err := checkInput(w, h, o); err != nil {
		return Expansion{}, err
	}
	k := newKwargs(o.Kwargs)
	crop := k.boolean("crop_to_patches", v.crop)
	minP := k.integer("min_patches", v.minPatches)
	maxP := k.integer("max_patches", v.maxPatches)
	if err := k.done(); err != nil {
		return Expansion{}, err
	}
	if maxP > maxTiles {
		return Expansion{}, errorf("max_patches %d: above %d", maxP, maxTiles)
	}
	tiles := 1
	if crop && maxP > 1 {
		cols, rows := optimalTiledCanvas(w, h, v.tile, v.tile, minP, maxP)
		tiles = cols * rows
		if tiles != 1 {
			tiles++ // the thumbnail
		}
	}
	b := newBuilder("<img>", "<IMG_CONTEXT>", "</img>")
	b.add("<img>", 1)
	b.add("<IMG_CONTEXT>", v.seqLen*tiles)
	b.add("</img>", 1)
	return b.expansion("<IMG_CONTEXT>", tiles), nil
}

// optimalTiledCanvas is GotOcr2's get_optimal_tiled_canvas: (columns, rows).
func optimalTiledCanvas(w, h, tileH, tileW, minTiles, maxTiles int) (int, int) {
	aspect := float64(w) / float64(h)
	area := w * h
	bestDiff := -1.0
	bc, br := 1, 1
	for _, g := range supportedAspectRatios(minTiles, maxTiles) {
		d := aspect - float64(g[0])/float64(g[1])
		if d < 0 {
			d = -d
		}
		if bestDiff < 0 || d < bestDiff {
			bestDiff, bc, br = d, g[0], g[1]
		} else if d == bestDiff && float64(area) > 0.5*float64(tileH)*float64(tileW)*float64(g[0])*float64(g[1]) {
			bc, br = g[0], g[1]
		}
	}
	return bc, br
}

// supportedAspectRatios is get_all_supported_aspect_ratios: (width, height)
// tile counts, stably sorted by their product.
func supportedAspectRatios(minTiles, maxTiles int) [][2]int {
	var out [][2]int
	for p := 1; p <= maxTiles; p++ {
		// Listing by product, then in the loop order (width, then height),
		// is what a stable sort of that loop's list by product gives.
		for w := 1; w <= maxTiles; w++ {
			for h := 1; h <= maxTiles; h++ {
				if w*h == p && p >= minTiles {
					out = append(out, [2]int{w, h})
				}
			}
		}
	}
	return out
}
