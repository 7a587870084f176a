package imagehdr

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"strings"
	"sync"
)

// DataURL reads the header of the image in a data URL
// ("data:image/png;base64,..."), parsed as vLLM parses it
// (MediaConnector._load_data_url): the encoding after the last ";" before
// the comma must be exactly "base64", and the payload must be strict base64
// (pybase64.b64decode(validate=True): no line breaks or spaces, padded).
// The payload is checked in one pass without copying and decoded lazily,
// so only the bytes up to the size are decoded whatever the URL's length.
//
// vLLM opens the bytes with Pillow whatever the media type says. A media
// type that is not the format the magic bytes show (or not an image type
// at all) is reported as an *Error with MediaTypeMismatch set, with the
// header still returned: the server would count the image, but the body
// is almost certainly written wrong.
func DataURL(url string) (Header, error) {
	return DataURLBytes([]byte(url))
}

// DataURLBytes is DataURL of a URL's bytes, which it neither copies nor
// keeps: measure hands it the URL as it lies in the body, so that a
// payload log's images are read without copying their base64.
func DataURLBytes(url []byte) (Header, error) {
	rest, ok := cutPrefixFold(url, "data:")
	if !ok {
		return Header{}, fail("not a data URL (%s)", clip(string(url[:min(len(url), 41)])))
	}
	spec, payload, ok := bytes.Cut(rest, []byte(","))
	if !ok {
		return Header{}, fail("data URL without a comma before its data")
	}
	i := bytes.LastIndexByte(spec, ';')
	if i < 0 || string(spec[i+1:]) != "base64" {
		return Header{}, fail("data URL not marked ;base64 (vLLM takes only base64 data URLs)")
	}
	mediaType, _, _ := bytes.Cut(spec[:i], []byte(";"))
	if err := strictBase64(payload); err != nil {
		return Header{}, err
	}
	d := decoders.Get().(*decoder)
	d.src.src, d.src.carry, d.src.next = payload, d.src.carry[:0], firstRead
	d.lim = limited{r: &d.src, n: MaxPrefix}
	d.br.Reset(&d.lim)
	h, err := readBuffered(d.br)
	d.src.src = nil
	d.br.Reset(nil)
	decoders.Put(d)
	if err != nil {
		return Header{}, err
	}
	mt := strings.ToLower(strings.TrimSpace(string(mediaType)))
	if want := h.Format.MediaType(); mt != want && !(h.Format == JPEG && mt == "image/jpg") {
		return h, &Error{Reason: "data URL says " + quoteType(string(mediaType)) + " but holds a " + string(h.Format) + " image", MediaTypeMismatch: true}
	}
	return h, nil
}

// decoder is what DataURLBytes reads a header with, pooled: a payload log
// has an image per request or more, and each reader would otherwise be
// allocated per image.
type decoder struct {
	src base64Reader
	lim limited
	br  *bufio.Reader
}

var decoders = sync.Pool{New: func() any { return &decoder{br: bufio.NewReaderSize(nil, 512)} }}

// base64Reader decodes strict, padded base64 (strictBase64 checked it) as
// it is read, a few quanta at a time.
type base64Reader struct {
	src   []byte
	carry []byte // decoded bytes a short read left over
	quad  [3]byte
	// next bounds the bytes the next Read decodes, doubling from
	// firstRead: bufio asks for its whole buffer at once, and a PNG's or
	// GIF's size lies in its first few dozen bytes, so decoding 512 for
	// every image was most of a header read's cost.
	next int
}

// firstRead is base64Reader's first decode: a PNG's signature, IHDR chunk
// and next chunk header (41 bytes) in one call.
const firstRead = 48

func (r *base64Reader) Read(p []byte) (int, error) {
	if len(r.carry) > 0 {
		n := copy(p, r.carry)
		r.carry = r.carry[n:]
		return n, nil
	}
	if len(r.src) == 0 {
		return 0, io.EOF
	}
	if len(p) < 3 {
		// Too short for a quantum: decode one into quad and hand it out.
		n, err := base64.StdEncoding.Decode(r.quad[:], r.src[:4])
		if err != nil {
			return 0, err
		}
		r.src = r.src[4:]
		r.carry = r.quad[:n]
		k := copy(p, r.carry)
		r.carry = r.carry[k:]
		return k, nil
	}
	want := len(p)
	if r.next >= 3 && r.next < want {
		want = r.next
	}
	r.next *= 2
	k := min(len(r.src), want/3*4)
	n, err := base64.StdEncoding.Decode(p, r.src[:k])
	r.src = r.src[k:]
	return n, err
}

func quoteType(t string) string {
	if t == "" {
		return "no media type"
	}
	return clip(t)
}

// strictBase64 is what base64 decoding with validation accepts: a length
// that is a multiple of 4, the standard alphabet, and "=" only as the last
// one or two characters.
func strictBase64(s []byte) error {
	if len(s)%4 != 0 {
		return fail("data URL's base64 is %d characters, not a multiple of 4 (unpadded or cut)", len(s))
	}
	pad := 0
	if bytes.HasSuffix(s, []byte("==")) {
		pad = 2
	} else if bytes.HasSuffix(s, []byte("=")) {
		pad = 1
	}
	body := s[:len(s)-pad]
	// Eight table lookups a step, OR-ed without a branch: the check of an
	// image's megabytes costs a fraction of the pass a byte-wise loop with
	// a test per byte took (measure reads every image of a payload log);
	// the offending byte is looked for only once one is known to be there.
	var bad byte
	i := 0
	for ; i+8 <= len(body); i += 8 {
		b := body[i : i+8 : i+8]
		bad |= notBase64[b[0]] | notBase64[b[1]] | notBase64[b[2]] | notBase64[b[3]] |
			notBase64[b[4]] | notBase64[b[5]] | notBase64[b[6]] | notBase64[b[7]]
	}
	for ; i < len(body); i++ {
		bad |= notBase64[body[i]]
	}
	if bad == 0 {
		return nil
	}
	for i, c := range body {
		if notBase64[c] != 0 {
			return fail("data URL's base64 has %q at offset %d, which strict base64 decoding refuses", c, i)
		}
	}
	return nil
}

// notBase64 is 1 for the bytes outside the standard alphabet.
var notBase64 = func() (t [256]byte) {
	for i := range t {
		t[i] = 1
	}
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = 0
	}
	return t
}()

func cutPrefixFold(s []byte, prefix string) ([]byte, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(string(s[:len(prefix)]), prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
