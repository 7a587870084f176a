package imagehdr

import (
	"encoding/base64"
	"strings"
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
	rest, ok := cutPrefixFold(url, "data:")
	if !ok {
		return Header{}, fail("not a data URL (%s)", clip(url))
	}
	spec, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return Header{}, fail("data URL without a comma before its data")
	}
	i := strings.LastIndexByte(spec, ';')
	if i < 0 || spec[i+1:] != "base64" {
		return Header{}, fail("data URL not marked ;base64 (vLLM takes only base64 data URLs)")
	}
	mediaType, _, _ := strings.Cut(spec[:i], ";")
	if err := strictBase64(payload); err != nil {
		return Header{}, err
	}
	h, err := Read(base64.NewDecoder(base64.StdEncoding, strings.NewReader(payload)))
	if err != nil {
		return Header{}, err
	}
	mt := strings.ToLower(strings.TrimSpace(mediaType))
	if want := h.Format.MediaType(); mt != want && !(h.Format == JPEG && mt == "image/jpg") {
		return h, &Error{Reason: "data URL says " + quoteType(mediaType) + " but holds a " + string(h.Format) + " image", MediaTypeMismatch: true}
	}
	return h, nil
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
func strictBase64(s string) error {
	if len(s)%4 != 0 {
		return fail("data URL's base64 is %d characters, not a multiple of 4 (unpadded or cut)", len(s))
	}
	pad := 0
	if strings.HasSuffix(s, "==") {
		pad = 2
	} else if strings.HasSuffix(s, "=") {
		pad = 1
	}
	for i := 0; i < len(s)-pad; i++ {
		if c := s[i]; !base64Alphabet[c] {
			return fail("data URL's base64 has %q at offset %d, which strict base64 decoding refuses", c, i)
		}
	}
	return nil
}

// base64Alphabet marks the standard alphabet's bytes: a table lookup per
// byte keeps the check of a large image's URL cheap (measure reads every
// image of a payload log).
var base64Alphabet = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = true
	}
	return t
}()

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
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
