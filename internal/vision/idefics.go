package vision

import (
	"fmt"
	"math"
)

// idefics is Idefics3's and SmolVLM's rule (their image processors and
// processors): the image scaled so its longest edge is size.longest_edge
// (at most 4096), then, with do_image_splitting, up to whole tiles of
// max_image_size and cut into rows×cols tiles plus a global view; each tile
// is image_seq_len <image> tokens after <fake_token_around_image> and a
// <row_r_col_c> tag, rows end in "\n", and the global view is
// "\n<fake_token_around_image><global-img>" + tokens + "<fake_token_around_image>".
type idefics struct {
	family  Family
	longest int // size.longest_edge
	tile    int // max_image_size.longest_edge
	split   bool
	seqLen  int
}

func (d *idefics) Family() Family { return d.family }

// ideficsMaxImageSize is MAX_IMAGE_SIZE of the image processors.
const ideficsMaxImageSize = 4096

func (d *idefics) Expand(w, h int, o Overrides) (Expansion, error) {
	if err := checkInput(w, h, o); err != nil {
		return Expansion{}, err
	}
	k := newKwargs(o.Kwargs)
	split := k.boolean("do_image_splitting", d.split)
	longest := k.longestEdge("size", d.longest)
	tile := k.longestEdge("max_image_size", d.tile)
	if err := k.done(); err != nil {
		return Expansion{}, err
	}
	rows, cols := 0, 0
	if split {
		rh, rw := rescaleToMaxLen(h, w, longest)
		rh, rw = scaleBelowUpperBound(rh, rw, ideficsMaxImageSize)
		rh, rw = resizeForVisionEncoder(rh, rw, tile)
		if rh > tile || rw > tile {
			rows = (rh-tile)/tile + 1
			cols = (rw-tile)/tile + 1
		}
	}
	b := newBuilder(append([]string{"<fake_token_around_image>", "<image>", "<global-img>"}, rowColTags...)...)
	if rows == 0 && cols == 0 {
		b.add("<fake_token_around_image>", 1)
		b.add("<global-img>", 1)
		b.add("<image>", d.seqLen)
		b.add("<fake_token_around_image>", 1)
		return b.expansion("<image>", 1), nil
	}
	if rows > 6 || cols > 6 {
		// The tokenizers define <row_r_col_c> for r, c ≤ 6 only.
		return Expansion{}, errorf("image %d×%d splits into %d×%d tiles; the tokenizer has tile tags for 6×6 at most", w, h, rows, cols)
	}
	for r := 1; r <= rows; r++ {
		for c := 1; c <= cols; c++ {
			b.add("<fake_token_around_image>", 1)
			b.add(fmt.Sprintf("<row_%d_col_%d>", r, c), 1)
			b.add("<image>", d.seqLen)
		}
		b.add("\n", 1)
	}
	b.add("\n", 1)
	b.add("<fake_token_around_image>", 1)
	b.add("<global-img>", 1)
	b.add("<image>", d.seqLen)
	b.add("<fake_token_around_image>", 1)
	return b.expansion("<image>", rows*cols+1), nil
}

var rowColTags = func() []string {
	var t []string
	for r := 1; r <= 6; r++ {
		for c := 1; c <= 6; c++ {
			t = append(t, fmt.Sprintf("<row_%d_col_%d>", r, c))
		}
	}
	return t
}()

// rescaleToMaxLen is _resize_output_size_rescale_to_max_len (min_len 1).
func rescaleToMaxLen(height, width, maxLen int) (int, int) {
	aspect := float64(width) / float64(height)
	if width >= height {
		width = maxLen
		height = int(float64(width) / aspect)
		if height%2 != 0 {
			height++
		}
	} else {
		height = maxLen
		width = int(float64(height) * aspect)
		if width%2 != 0 {
			width++
		}
	}
	return max(height, 1), max(width, 1)
}

// scaleBelowUpperBound is _resize_output_size_scale_below_upper_bound.
func scaleBelowUpperBound(height, width, maxLen int) (int, int) {
	aspect := float64(width) / float64(height)
	if width >= height && width > maxLen {
		width = maxLen
		height = int(float64(width) / aspect)
	} else if height > width && height > maxLen {
		height = maxLen
		width = int(float64(height) * aspect)
	}
	return max(height, 1), max(width, 1)
}

// resizeForVisionEncoder is the processors' resize_for_vision_encoder:
// both sides up to whole tiles.
func resizeForVisionEncoder(height, width, tile int) (int, int) {
	aspect := float64(width) / float64(height)
	t := float64(tile)
	if width >= height {
		width = int(math.Ceil(float64(width)/t)) * tile
		height = int(float64(width) / aspect)
		height = int(math.Ceil(float64(height)/t)) * tile
	} else {
		height = int(math.Ceil(float64(height)/t)) * tile
		width = int(float64(height) * aspect)
		width = int(math.Ceil(float64(width)/t)) * tile
	}
	return height, width
}
