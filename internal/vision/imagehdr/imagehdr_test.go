package imagehdr

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPillowFixtures reads every fixture written by Pillow
// (scripts/vision/image_headers_ref.py) and expects the size and EXIF
// orientation Pillow's Image.open reported for it.
func TestPillowFixtures(t *testing.T) {
	raw, err := os.ReadFile("testdata/sizes.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		Format        string
		Width, Height int
		Orientation   int
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 15 {
		t.Fatalf("only %d fixtures", len(want))
	}
	for name, w := range want {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		h, err := Read(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(h.Format) != w.Format || h.Width != w.Width || h.Height != w.Height || h.Orientation != w.Orientation {
			t.Errorf("%s: got %+v, Pillow says %+v", name, h, w)
		}
		// The same image as a data URL.
		url := "data:image/" + w.Format + ";base64," + base64.StdEncoding.EncodeToString(b)
		if d, err := DataURL(url); err != nil || d != h {
			t.Errorf("%s as a data URL: %+v, %v", name, d, err)
		}
		// Every truncation fails cleanly (or still finds the size, when
		// the cut is past it).
		for n := range len(b) {
			th, err := Read(bytes.NewReader(b[:n]))
			if err == nil && th != h {
				t.Errorf("%s cut to %d bytes: %+v", name, n, th)
			}
			var e *Error
			if err != nil && !errors.As(err, &e) {
				t.Errorf("%s cut to %d bytes: error %v is not an image error", name, n, err)
			}
		}
	}
}

// TestAgainstStandardLibrary: images the standard encoders write, read by
// image.DecodeConfig and by Read.
func TestAgainstStandardLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 60 {
		w, h := 1+r.IntN(700), 1+r.IntN(700)
		if i%10 == 0 {
			w = 1 + r.IntN(5000)
		}
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		img.Set(w/2, h/2, color.White)
		var buf bytes.Buffer
		var err error
		switch i % 3 {
		case 0:
			err = png.Encode(&buf, img)
		case 1:
			err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 10})
		case 2:
			err = gif.Encode(&buf, img, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		hd, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil || string(hd.Format) != format || hd.Width != cfg.Width || hd.Height != cfg.Height {
			t.Errorf("%s %d×%d: %+v, %v; image.DecodeConfig %+v", format, w, h, hd, err, cfg)
		}
	}
}

func pngHeader(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	b = binary.BigEndian.AppendUint32(b, w)
	b = binary.BigEndian.AppendUint32(b, h)
	b = append(b, 8, 2, 0, 0, 0)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[12:]))
}

// TestHostile: declared sizes beyond what Pillow opens, truncations, a
// non-image, and megabytes of metadata before a JPEG's frame header, each
// refused with its reason in bounded time.
func TestHostile(t *testing.T) {
	jpegHuge := []byte{0xFF, 0xD8}
	for range 300 { // 300 APP2 segments of 64 KiB: 19 MiB before the frame
		jpegHuge = append(jpegHuge, 0xFF, 0xE2, 0xFF, 0xFF)
		jpegHuge = append(jpegHuge, make([]byte, 0xFFFD)...)
	}
	jpegHuge = append(jpegHuge, 0xFF, 0xC0, 0, 11, 8, 0, 10, 0, 10, 1, 1, 0x11, 0)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"100000×100000 png", pngHeader(100000, 100000), "a side above 65535"},
		{"20000×20000 png (a decompression bomb)", pngHeader(20000, 20000), "decompression bomb"},
		{"0×5 png", pngHeader(0, 5), "empty size"},
		{"png without IHDR", append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIDAT"), make([]byte, 13)...), "IHDR"},
		{"text", []byte("hello, world"), "not a PNG, JPEG, GIF or WebP"},
		{"empty", nil, "truncated"},
		{"jpeg without frame", []byte{0xFF, 0xD8, 0xFF, 0xDA, 0, 2}, "no frame header"},
		{"jpeg with DNL height", []byte{0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0, 0, 0, 10, 1, 1, 0x11, 0}, "DNL"},
		{"19 MiB of jpeg metadata", jpegHuge, "no size within the first"},
		{"webp of another chunk", []byte("RIFF\x00\x00\x00\x00WEBPALPH\x00\x00\x00\x00"), "not VP8"},
		{"vp8 without start code", append([]byte("RIFF\x00\x00\x00\x00WEBPVP8 \x00\x00\x00\x00"), 0, 0, 0, 1, 2, 3, 10, 0, 10, 0), "start code"},
	}
	for _, c := range cases {
		start := time.Now()
		h, err := Read(bytes.NewReader(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %+v, %v; want an error with %q", c.name, h, err, c.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s took %v", c.name, d)
		}
	}
}

// countingReader counts what Read consumed.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestReadsOnlyTheHeader: a PNG followed by 8 MB is read only to its
// header; a data URL of 11 MB decodes only its first bytes.
func TestReadsOnlyTheHeader(t *testing.T) {
	body := append(pngHeader(640, 480), make([]byte, 8<<20)...)
	cr := &countingReader{r: bytes.NewReader(body)}
	if h, err := Read(cr); err != nil || h.Width != 640 || h.Height != 480 {
		t.Fatalf("%+v, %v", h, err)
	}
	if cr.n > 4096 {
		t.Errorf("read %d bytes for a 33-byte header", cr.n)
	}
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(body)
	allocs := testing.AllocsPerRun(3, func() {
		if _, err := DataURL(url); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Errorf("%v allocations per data URL", allocs)
	}
}

// TestDataURL: data URLs parsed as vLLM's MediaConnector does (encoding
// exactly "base64" after the last ";", strict base64), the media type
// checked against the magic bytes.
func TestDataURL(t *testing.T) {
	png1 := base64.StdEncoding.EncodeToString(pngHeader(3, 4))
	cases := []struct {
		url, want string // want: "" for success
		mismatch  bool
	}{
		{"data:image/png;base64," + png1, "", false},
		{"DATA:image/PNG;base64," + png1, "", false},
		{"data:image/png;charset=x;base64," + png1, "", false},
		{"data:image/png;BASE64," + png1, "not marked ;base64", false},
		{"data:image/png;base64," + png1[:10] + "\n" + png1[11:], "offset 10", false},
		{"data:image/png;base64," + png1[:len(png1)-1], "not a multiple of 4", false},
		{"data:image/jpeg;base64," + png1, "says image/jpeg but holds a png image", true},
		{"data:text/plain;base64," + png1, "says text/plain but holds a png image", true},
		{"data:;base64," + png1, "says no media type but holds a png image", true},
		{"data:image/png," + png1, "not marked ;base64", false},
		{"data:image/png;base64", "without a comma", false},
		{"https://example.com/a.png", "not a data URL", false},
		{"data:image/png;base64,!!!!", "strict base64", false},
		{"data:image/png;base64,aGVsbG8gd29ybGQ=", "not a PNG", false},
	}
	for _, c := range cases {
		h, err := DataURL(c.url)
		var e *Error
		switch {
		case c.want == "" && (err != nil || h.Width != 3 || h.Height != 4):
			t.Errorf("%.40q: %+v, %v", c.url, h, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%.40q: %v; want %q", c.url, err, c.want)
		case c.mismatch && (!errors.As(err, &e) || !e.MediaTypeMismatch || h.Width != 3):
			t.Errorf("%.40q: %+v, %v; want the header and a media type mismatch", c.url, h, err)
		}
	}
}

// FuzzRead: no input panics, allocates past the header or reads past
// MaxPrefix; where Pillow's magic bytes match and image.DecodeConfig reads a PNG, JPEG or GIF within the
// limits, Read gives the same size.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".json") {
			f.Add(b[:min(len(b), 4096)])
		}
	}
	f.Add(pngHeader(100000, 100000))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Read(bytes.NewReader(b))
		if err == nil {
			if h.Width < 1 || h.Height < 1 || h.Width > MaxSide || h.Height > MaxSide || int64(h.Width)*int64(h.Height) > MaxPixels {
				t.Fatalf("accepted %+v", h)
			}
		}
		if Sniff(b) == "" {
			// Pillow's magic checks (a JPEG starts FF D8 FF) refuse what the
			// standard library may still read.
			return
		}
		cfg, format, serr := image.DecodeConfig(bytes.NewReader(b))
		if serr != nil || cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxSide || cfg.Height > MaxSide || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
			return
		}
		if err != nil {
			t.Fatalf("image.DecodeConfig reads %s %d×%d, Read fails: %v", format, cfg.Width, cfg.Height, err)
		}
		if string(h.Format) != format || h.Width != cfg.Width || h.Height != cfg.Height {
			t.Fatalf("Read %+v, image.DecodeConfig %s %+v", h, format, cfg)
		}
	})
}

// FuzzDataURL: no data URL panics; a success is a sane size.
func FuzzDataURL(f *testing.F) {
	f.Add("data:image/png;base64," + base64.StdEncoding.EncodeToString(pngHeader(3, 4)))
	f.Add("data:image/gif;base64,R0lGODlhAQABAAAAACw=")
	f.Add("data:,")
	f.Fuzz(func(t *testing.T, url string) {
		h, err := DataURL(url)
		if err == nil && (h.Width < 1 || h.Height < 1 || h.Width > MaxSide || h.Height > MaxSide) {
			t.Fatalf("accepted %+v", h)
		}
	})
}

// TestDataURLBytesAllocs: a data URL's header is read without copying or
// decoding its payload and with pooled readers (measure reads every image
// of a payload log): no allocation beyond the header's few bytes, whatever
// the URL's length, and the size is the image's.
func TestDataURLBytesAllocs(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1280, 720))); err != nil {
		t.Fatal(err)
	}
	url := []byte("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes()))
	h, err := DataURLBytes(url)
	if err != nil || h.Width != 1280 || h.Height != 720 || h.Format != PNG {
		t.Fatalf("%+v %v", h, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = DataURLBytes(url) }); n > 1 {
		t.Errorf("%v allocations per data URL, want at most 1", n)
	}
}

// Every byte value, at every place of the eight-byte steps, is taken or
// refused as the standard alphabet says ("=" only as the last byte).
func TestStrictBase64EveryByte(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for c := 0; c < 256; c++ {
		for at := 0; at < 16; at++ {
			s := []byte("QUJDREVGR0hJSktM")
			s[at] = byte(c)
			err := strictBase64(s)
			want := strings.IndexByte(alphabet, byte(c)) >= 0 || c == '=' && at == 15
			if (err == nil) != want {
				t.Fatalf("byte %#02x at %d: strictBase64 %v, in the alphabet %v", c, at, err, want)
			}
		}
	}
}

// FuzzStrictBase64: the check a data URL's payload passes is the standard
// library's decoding of standard, padded base64 (without the line breaks
// it skips; Python's b64decode(validate=True), which vLLM's decoding
// follows, takes no line breaks either), on every length and at every
// offset of the eight-byte steps.
func FuzzStrictBase64(f *testing.F) {
	for _, s := range []string{"", "QQ==", "QUI=", "QUJD", "QUJDRA==", "QUJDREVGR0hJ", "QUJDREVGR0hJSktM", "QUJDREVGR0hJSkt=", "Q===", "QQ=A", "QUJD\nREVG", "QUJDREVGR0g*SktM", "QUJDREVGR0hJSkt-", "/+/+/+/+/+/+", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		_, stdErr := base64.StdEncoding.DecodeString(string(s))
		want := stdErr == nil && !bytes.ContainsAny(s, "\r\n")
		err := strictBase64(s)
		if (err == nil) != want {
			t.Fatalf("%q: strictBase64 %v, encoding/base64 %v", s, err, stdErr)
		}
	})
}
