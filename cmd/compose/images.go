package main

import (
	"strconv"
	"strings"

	"github.com/islkit/islkit/internal/cli"
	"github.com/islkit/islkit/internal/compose"
	"github.com/islkit/islkit/internal/serverprofile"
)

// imageFlags are the flags that only --images uses (--dataset takes the
// last two, processor and limit-mm-per-prompt, too).
var imageFlags = []string{"images-stddev", "image-size", "image-width-mean", "image-width-stddev", "image-height-mean", "image-height-stddev", "image-format", "image-dir", "processor", "limit-mm-per-prompt"}

// imageOptions reads the image flags.
func (f *flags) imageOptions(set map[string]bool) (compose.ImageOptions, error) {
	if err := cli.OnlyWith(set, f.Images > 0, "with --images", "they say what the images of each turn are", imageFlags...); err != nil {
		return compose.ImageOptions{}, err
	}
	if err := cli.OnlyWith(set, false, "with --dataset", "a dataset's remote images are what it reads", "fetch-images"); err != nil {
		return compose.ImageOptions{}, err
	}
	o := compose.ImageOptions{PerTurn: f.Images, Stddev: f.ImagesStddev, Width: f.ImageWidthMean, Height: f.ImageHeightMean,
		WidthStddev: f.ImageWidthStddev, HeightStddev: f.ImageHeightStddev, Format: f.ImageFormat, Dir: f.ImageDir}
	if f.ImageSize != "" {
		if set["image-width-mean"] || set["image-height-mean"] {
			return o, cli.Usagef("--image-size and --image-width-mean/--image-height-mean: give one of them")
		}
		w, h, ok := strings.Cut(f.ImageSize, "x")
		var err1, err2 error
		o.Width, err1 = strconv.Atoi(w)
		o.Height, err2 = strconv.Atoi(h)
		if !ok || err1 != nil || err2 != nil {
			return o, cli.Usagef("--image-size %q: want WxH, e.g. 1280x720", f.ImageSize)
		}
	}
	if o.PerTurn > 0 && o.Dir == "" && (o.Width == 0 || o.Height == 0) {
		return o, cli.Usagef("--images needs --image-size WxH (or --image-width-mean and --image-height-mean), or --image-dir")
	}
	return o, nil
}

// vision reads the model's image processing (--processor, else the model
// folder) with the server's image limit.
func (f *flags) vision(m *compose.Model) (*serverprofile.Vision, error) {
	vis, err := serverprofile.VisionFlags(f.Processor, m.Source.Dir, f.LimitMMPerPrompt)
	if err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return vis, nil
}
