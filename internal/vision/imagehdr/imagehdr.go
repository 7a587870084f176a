// Package imagehdr reads an image's format and pixel size from its first
// bytes, without decoding it, for counting the tokens a vision-language
// model spends on it.
//
// The readers are written here rather than taken from image.DecodeConfig
// (with golang.org/x/image/webp registered) because the standard JPEG
// reader refuses the lossless and arithmetic-coded frames (SOF3, SOF9–SOF15)
// that Pillow, and so the servers, open and size; x/image would be a new
// module dependency for the WebP header alone; and DecodeConfig gives no
// EXIF orientation. Each reader consumes at most the bytes up to the size
// field (a JPEG's segments before its frame header are skipped, not held),
// so time is linear in the bytes before the size and memory constant. The
// tests check every reader against image.DecodeConfig where the standard
// library reads the format.
package imagehdr

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Format names an image container as its media type's subtype does.
type Format string

const (
	PNG  Format = "png"
	JPEG Format = "jpeg"
	GIF  Format = "gif"
	WebP Format = "webp"
)

// MediaType is the format's IANA media type.
func (f Format) MediaType() string { return "image/" + string(f) }

// MaxSide bounds a declared side. Pillow refuses images above
// Image.MAX_IMAGE_PIXELS*2 (≈179 Mpx) as a decompression bomb; a side
// above 65 535 is past what JPEG, WebP and GIF can declare, and servers'
// resize rules would reject it long before. A header beyond it is refused
// rather than trusted.
const MaxSide = 65535

// MaxPixels is Pillow's decompression-bomb error limit
// (2 × Image.MAX_IMAGE_PIXELS = 2 × 89 478 485): Image.open raises
// DecompressionBombError above it, so the server refuses such an image.
const MaxPixels = 2 * 89478485

// MaxPrefix bounds how many bytes a header may take before the size is
// known: a JPEG's metadata segments (EXIF, ICC profiles, thumbnails) come
// before its frame header and are skipped, up to this much.
const MaxPrefix = 16 << 20

// Header is what a reader learns from the first bytes.
type Header struct {
	Format Format
	// Width and Height are the stored pixel size, as Pillow's Image.size
	// reports it (before any EXIF rotation).
	Width, Height int
	// Orientation is the EXIF orientation tag of a JPEG (1–8; 0 when
	// absent). Pillow and transformers' processors do not apply it unless
	// asked (ImageOps.exif_transpose); 5–8 swap the sides when applied.
	Orientation int
}

// Oriented returns the size after applying the EXIF orientation.
func (h Header) Oriented() (w, ht int) {
	if h.Orientation >= 5 && h.Orientation <= 8 {
		return h.Height, h.Width
	}
	return h.Width, h.Height
}

// Error is a refused image, with the reason.
type Error struct {
	Reason string
	// MediaTypeMismatch marks a data URL whose declared media type is not
	// its image's format: the header was read, and vLLM would take it.
	MediaTypeMismatch bool
}

func (e *Error) Error() string { return "image: " + e.Reason }

func fail(format string, args ...any) error { return &Error{Reason: fmt.Sprintf(format, args...)} }

// Sniff names the format from the first bytes, or "" when none matches.
func Sniff(b []byte) Format {
	switch {
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		return PNG
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return JPEG
	case len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		return GIF
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return WebP
	}
	return ""
}

// Read reads the header of the image r starts with. It never reads more
// than MaxPrefix bytes and never holds more than a few hundred.
func Read(r io.Reader) (Header, error) {
	return readBuffered(bufio.NewReaderSize(&limited{r: r, n: MaxPrefix}, 512))
}

// readBuffered is Read of a reader already bounded to MaxPrefix.
func readBuffered(br *bufio.Reader) (Header, error) {
	magic, err := br.Peek(12)
	if len(magic) < 3 {
		if err == nil || err == io.EOF {
			return Header{}, fail("empty or truncated image (%d bytes)", len(magic))
		}
		return Header{}, err
	}
	var h Header
	switch f := Sniff(magic); f {
	case PNG:
		h, err = readPNG(br)
	case JPEG:
		h, err = readJPEG(br)
	case GIF:
		h, err = readGIF(br)
	case WebP:
		h, err = readWebP(br)
	default:
		return Header{}, fail("not a PNG, JPEG, GIF or WebP image (first bytes % x)", magic[:min(len(magic), 8)])
	}
	if err != nil {
		return Header{}, err
	}
	return h, h.check()
}

// check refuses sizes no server would take.
func (h Header) check() error {
	switch {
	case h.Width < 1 || h.Height < 1:
		return fail("%s declares an empty size %d×%d", h.Format, h.Width, h.Height)
	case h.Width > MaxSide || h.Height > MaxSide:
		return fail("%s declares %d×%d, a side above %d", h.Format, h.Width, h.Height, MaxSide)
	case int64(h.Width)*int64(h.Height) > MaxPixels:
		return fail("%s declares %d×%d = %d pixels, above the %d Pillow opens (a decompression bomb)", h.Format, h.Width, h.Height, int64(h.Width)*int64(h.Height), MaxPixels)
	}
	return nil
}

// limited is io.LimitedReader with an error naming the limit.
type limited struct {
	r io.Reader
	n int64
}

var errPrefix = fail("no size within the first %d bytes", MaxPrefix)

func (l *limited) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errPrefix
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// full reads exactly len(b) bytes, naming what was truncated.
func full(r io.Reader, b []byte, what string) error {
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fail("truncated %s", what)
		}
		return err
	}
	return nil
}

func skip(br *bufio.Reader, n int, what string) error {
	if d, err := br.Discard(n); d < n {
		if err == nil || errors.Is(err, io.EOF) {
			return fail("truncated %s", what)
		}
		return err
	}
	return nil
}

// readPNG reads IHDR, which the PNG specification requires first.
func readPNG(br *bufio.Reader) (Header, error) {
	var b [24]byte
	if err := full(br, b[:], "PNG header"); err != nil {
		return Header{}, err
	}
	if string(b[12:16]) != "IHDR" || binary.BigEndian.Uint32(b[8:12]) != 13 {
		return Header{}, fail("PNG does not start with an IHDR chunk")
	}
	w, h := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24])
	if w > MaxSide || h > MaxSide {
		return Header{}, fail("png declares %d×%d, a side above %d", w, h, MaxSide)
	}
	return Header{Format: PNG, Width: int(w), Height: int(h)}, nil
}

// readGIF reads the logical screen size, which Pillow reports as the
// image's size (every frame is drawn on it).
func readGIF(br *bufio.Reader) (Header, error) {
	var b [10]byte
	if err := full(br, b[:], "GIF header"); err != nil {
		return Header{}, err
	}
	return Header{Format: GIF, Width: int(binary.LittleEndian.Uint16(b[6:8])), Height: int(binary.LittleEndian.Uint16(b[8:10]))}, nil
}

// readJPEG walks the marker segments to the first frame header (SOF0–SOF15
// but DHT, JPG and DAC), noting the EXIF orientation on the way.
func readJPEG(br *bufio.Reader) (Header, error) {
	if err := skip(br, 2, "JPEG header"); err != nil {
		return Header{}, err
	}
	h := Header{Format: JPEG}
	for {
		// Like Pillow, skip bytes other than 0xFF between segments, fill
		// bytes 0xFF before a marker, and stuffed 0xFF00 pairs.
		c, err := br.ReadByte()
		if err != nil {
			return Header{}, truncated(err, "JPEG before its frame header")
		}
		if c != 0xFF {
			continue
		}
		m := byte(0xFF)
		for m == 0xFF {
			if m, err = br.ReadByte(); err != nil {
				return Header{}, truncated(err, "JPEG marker")
			}
		}
		switch {
		case m == 0x00 || m == 0x01 || (m >= 0xD0 && m <= 0xD8): // stuffing, TEM, RSTn, SOI: no length
			continue
		case m == 0xD9 || m == 0xDA:
			return Header{}, fail("JPEG has no frame header before its scan")
		}
		var lb [2]byte
		if err := full(br, lb[:], "JPEG segment length"); err != nil {
			return Header{}, err
		}
		n := int(binary.BigEndian.Uint16(lb[:])) - 2
		if n < 0 {
			return Header{}, fail("JPEG segment %#02x has length %d", m, n+2)
		}
		if m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC {
			var f [5]byte
			if n < len(f) {
				return Header{}, fail("JPEG frame header too short (%d bytes)", n)
			}
			if err := full(br, f[:], "JPEG frame header"); err != nil {
				return Header{}, err
			}
			h.Height = int(binary.BigEndian.Uint16(f[1:3]))
			h.Width = int(binary.BigEndian.Uint16(f[3:5]))
			if h.Height == 0 {
				// A DNL segment after the first scan would give it; Pillow
				// refuses such files as well.
				return Header{}, fail("JPEG defers its height to a DNL marker")
			}
			return h, nil
		}
		if m == 0xE1 && h.Orientation == 0 && n >= 14 {
			seg, err := br.Peek(min(n, 4096))
			if err != nil && len(seg) < n && len(seg) < 4096 {
				return Header{}, truncated(err, "JPEG APP1 segment")
			}
			h.Orientation = exifOrientation(seg)
		}
		if err := skip(br, n, "JPEG segment"); err != nil {
			return Header{}, err
		}
	}
}

func truncated(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fail("truncated %s", what)
	}
	return err
}

// exifOrientation reads tag 0x0112 of IFD0 from an APP1 "Exif\0\0"
// segment, or 0.
func exifOrientation(seg []byte) int {
	if len(seg) < 14 || string(seg[:6]) != "Exif\x00\x00" {
		return 0
	}
	t := seg[6:]
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int(bo.Uint32(t[4:8]))
	if off < 8 || off+2 > len(t) {
		return 0
	}
	count := int(bo.Uint16(t[off:]))
	for i := 0; i < count; i++ {
		e := off + 2 + 12*i
		if e+12 > len(t) {
			return 0
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 {
			if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
				return v
			}
			return 0
		}
	}
	return 0
}

// readWebP reads the first chunk: VP8X (extended: the canvas size), VP8L
// (lossless) or VP8 (lossy key frame), as Pillow's WebP plugin sizes them.
func readWebP(br *bufio.Reader) (Header, error) {
	var b [30]byte
	if err := full(br, b[:20], "WebP header"); err != nil {
		return Header{}, err
	}
	h := Header{Format: WebP}
	switch string(b[12:16]) {
	case "VP8X":
		if err := full(br, b[20:30], "WebP VP8X chunk"); err != nil {
			return Header{}, err
		}
		h.Width = 1 + int(uint32(b[24])|uint32(b[25])<<8|uint32(b[26])<<16)
		h.Height = 1 + int(uint32(b[27])|uint32(b[28])<<8|uint32(b[29])<<16)
	case "VP8L":
		if err := full(br, b[20:25], "WebP VP8L chunk"); err != nil {
			return Header{}, err
		}
		if b[20] != 0x2F {
			return Header{}, fail("WebP VP8L chunk without its signature byte 0x2f")
		}
		bits := binary.LittleEndian.Uint32(b[21:25])
		h.Width = 1 + int(bits&0x3FFF)
		h.Height = 1 + int(bits>>14&0x3FFF)
	case "VP8 ":
		if err := full(br, b[20:30], "WebP VP8 chunk"); err != nil {
			return Header{}, err
		}
		if b[20]&1 != 0 {
			return Header{}, fail("WebP VP8 chunk does not start with a key frame")
		}
		if b[23] != 0x9D || b[24] != 0x01 || b[25] != 0x2A {
			return Header{}, fail("WebP VP8 key frame without its start code")
		}
		h.Width = int(binary.LittleEndian.Uint16(b[26:28]) & 0x3FFF)
		h.Height = int(binary.LittleEndian.Uint16(b[28:30]) & 0x3FFF)
	default:
		return Header{}, fail("WebP starts with chunk %q, not VP8, VP8L or VP8X", b[12:16])
	}
	return h, nil
}
