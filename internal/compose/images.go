package compose

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"

	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/vision"
	"github.com/islkit/islkit/internal/vision/imagehdr"
)

// ImageOptions are compose's image flags: how many images each user turn
// carries and what they are.
type ImageOptions struct {
	// PerTurn is --images (the mean per user turn), Stddev --images-stddev.
	PerTurn int
	Stddev  float64
	// Width and Height are the mean size (--image-size WxH or
	// --image-width-mean, --image-height-mean), with their spreads.
	Width, Height             int
	WidthStddev, HeightStddev float64
	// Format is png or jpeg.
	Format string
	// Dir is --image-dir: images are drawn from its files instead of
	// generated.
	Dir string
}

// MaxImageSide bounds the generated sizes: Pillow's and imagehdr's limit.
const MaxImageSide = imagehdr.MaxSide

// maxImagesPerTurn bounds --images and its spread.
const maxImagesPerTurn = 1000

// Validate refuses impossible image settings.
func (o ImageOptions) Validate() error {
	switch {
	case o.PerTurn < 0 || o.PerTurn > maxImagesPerTurn || o.Stddev < 0 || !finite(o.Stddev) || o.Stddev > maxImagesPerTurn:
		return usagef("--images must be 0 to %d and --images-stddev not negative (got %d and %g)", maxImagesPerTurn, o.PerTurn, o.Stddev)
	case o.PerTurn == 0:
		return nil
	case o.Dir != "":
		return nil
	case o.Width < 1 || o.Height < 1 || o.Width > MaxImageSide || o.Height > MaxImageSide:
		return usagef("--image-size must be 1 to %d pixels each side (got %dx%d)", MaxImageSide, o.Width, o.Height)
	case o.WidthStddev < 0 || o.HeightStddev < 0 || !finite(o.WidthStddev) || !finite(o.HeightStddev):
		return usagef("--image-width-stddev and --image-height-stddev must not be negative (got %g and %g)", o.WidthStddev, o.HeightStddev)
	case o.Format != "png" && o.Format != "jpeg":
		return usagef("--image-format must be png or jpeg (got %q)", o.Format)
	}
	return nil
}

// imageSource draws a turn's images.
type imageSource struct {
	opts      ImageOptions
	maxAspect float64 // the processor's limit (0: none)
	files     []records.Image
}

func newImageSource(o ImageOptions, p vision.Processor) (*imageSource, error) {
	s := &imageSource{opts: o}
	if p != nil {
		s.maxAspect = vision.MaxAspect(p)
	}
	if o.Dir == "" {
		return s, nil
	}
	var err error
	if s.files, err = ReadImageDir(o.Dir); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadImageDir reads every image file of dir (PNG, JPEG, WebP, GIF, by
// their bytes; other files are skipped) as data URLs, in name order.
func ReadImageDir(dir string) ([]records.Image, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, usagef("--image-dir: %v", err)
	}
	var out []records.Image
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("--image-dir: %w", err)
		}
		if imagehdr.Sniff(b) == "" {
			continue
		}
		h, err := imagehdr.Read(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("--image-dir: %s: %w", path, err)
		}
		out = append(out, records.Image{URL: "data:" + h.Format.MediaType() + ";base64," + base64.StdEncoding.EncodeToString(b), Width: h.Width, Height: h.Height})
	}
	if len(out) == 0 {
		return nil, usagef("--image-dir %s: no PNG, JPEG, WebP or GIF file in it", dir)
	}
	return out, nil
}

// turn draws the images of one user turn.
func (s *imageSource) turn(rng *rand.Rand) []records.Image {
	n := s.opts.PerTurn
	if s.opts.Stddev > 0 {
		n = int(math.RoundToEven(max(0, float64(n)+s.opts.Stddev*rng.NormFloat64())))
		n = min(n, maxImagesPerTurn)
	}
	if n == 0 {
		return nil
	}
	out := make([]records.Image, n)
	for i := range out {
		if s.files != nil {
			out[i] = s.files[rng.IntN(len(s.files))]
			continue
		}
		w := side(rng, s.opts.Width, s.opts.WidthStddev)
		h := side(rng, s.opts.Height, s.opts.HeightStddev)
		if s.maxAspect > 0 {
			// Keep the draw inside what the processor takes.
			if float64(w) > s.maxAspect*float64(h) {
				w = int(s.maxAspect * float64(h))
			} else if float64(h) > s.maxAspect*float64(w) {
				h = int(s.maxAspect * float64(w))
			}
		}
		out[i] = records.Image{URL: syntheticImage(s.opts.Format, w, h, rng.Uint64()), Width: w, Height: h}
	}
	return out
}

// side draws one side length: AIPerf's positive normal (at least 1),
// within the largest side an image header can say.
func side(rng *rand.Rand, mean int, stddev float64) int {
	return min(positiveNormal(rng, float64(mean), stddev), MaxImageSide)
}

// syntheticImage is a data URL of a w×h image whose pixels are a few
// bytes of seed on the first row and black elsewhere: every image differs
// (a server caches images by their pixels), and compresses to little.
func syntheticImage(format string, w, h int, seed uint64) string {
	var b []byte
	if format == "jpeg" {
		b = syntheticJPEG(w, h, seed)
	} else {
		b = syntheticPNG(w, h, seed)
	}
	return "data:image/" + format + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// firstRow is the first row of a synthetic image (grayscale): the seed's
// bytes, then black.
func firstRow(w int, seed uint64) []byte {
	row := make([]byte, w)
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	copy(row, s[:])
	return row
}

// blackRows caches, per size, the deflate stream of a PNG's rows after
// the first (each a filter byte and w black pixels: all zeros), so that
// a large image costs its first row only.
var blackRows sync.Map // [2]int{w, h} → []byte

func blackRowsDeflate(w, h int) []byte {
	key := [2]int{w, h}
	if v, ok := blackRows.Load(key); ok {
		return v.([]byte)
	}
	var b bytes.Buffer
	zw, _ := flate.NewWriter(&b, flate.BestCompression)
	zeros := make([]byte, w+1)
	for range h - 1 {
		zw.Write(zeros)
	}
	zw.Close() // the final block
	v, _ := blackRows.LoadOrStore(key, b.Bytes())
	return v.([]byte)
}

// syntheticPNG writes an 8-bit grayscale PNG: one IDAT holding a zlib
// stream of the first row (flushed to a byte boundary) followed by the
// cached stream of the black rows. Deflate blocks concatenate, and the
// cached stream's back-references stay within its own output.
func syntheticPNG(w, h int, seed uint64) []byte {
	row := append([]byte{0}, firstRow(w, seed)...) // filter type 0
	var idat bytes.Buffer
	idat.Write([]byte{0x78, 0xda}) // zlib header: deflate, 32K window, best compression
	zw, _ := flate.NewWriter(&idat, flate.BestSpeed)
	zw.Write(row)
	zw.Flush()
	idat.Write(blackRowsDeflate(w, h))
	// Adler-32 of the raw data: the first row, then (h-1)·(w+1) zeros,
	// which leave its low sum as it is and add it to the high sum once
	// per byte.
	sum := adler32.Checksum(row)
	a, hi := uint64(sum&0xffff), uint64(sum>>16)
	n := uint64(h-1) * uint64(w+1)
	hi = (hi + (n%65521)*a) % 65521
	binary.Write(&idat, binary.BigEndian, uint32(hi<<16|a))

	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 0 // bit depth 8, grayscale
	writeChunk(&out, "IHDR", ihdr[:])
	writeChunk(&out, "IDAT", idat.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes()
}

func writeChunk(out *bytes.Buffer, typ string, data []byte) {
	binary.Write(out, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	out.WriteString(typ)
	out.Write(data)
	binary.Write(out, binary.BigEndian, crc.Sum32())
}

// syntheticJPEG encodes the same picture with image/jpeg (quality 90).
func syntheticJPEG(w, h int, seed uint64) []byte {
	img := image.NewGray(image.Rect(0, 0, w, h))
	copy(img.Pix, firstRow(w, seed))
	var b bytes.Buffer
	jpeg.Encode(&b, img, &jpeg.Options{Quality: 90})
	return b.Bytes()
}

// imageTokens is the tokens a turn's images add, for the first guess of
// its text's length (the count itself renders the request).
func imageTokens(p vision.Processor, images []records.Image) int {
	n := 0
	for _, im := range images {
		e, err := p.Expand(im.Width, im.Height, vision.Overrides{})
		if err != nil {
			continue // the render refuses it with the reason
		}
		if t := e.Tokens(); t >= 0 {
			n += t
		} else {
			n += e.Special
		}
	}
	return n
}
