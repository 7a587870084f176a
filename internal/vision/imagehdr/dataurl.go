package imagehdr

import (
	"encoding/base64"
	"io"
	"strings"
)

// DataURL reads the header of the image in a data URL
// ("data:image/png;base64,..."). The base64 payload is decoded lazily, so
// only the bytes up to the size are decoded whatever the URL's length. The
// declared media type must name the format the magic bytes show: vLLM
// opens the bytes with Pillow whatever the type says, but a mismatch is
// almost always a broken writer, and counting it would hide that.
func DataURL(url string) (Header, error) {
	rest, ok := cutPrefixFold(url, "data:")
	if !ok {
		return Header{}, fail("not a data URL (%s)", clip(url))
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return Header{}, fail("data URL without a comma before its data")
	}
	params := strings.Split(meta, ";")
	mediaType := strings.ToLower(strings.TrimSpace(params[0]))
	isBase64 := false
	for _, p := range params[1:] {
		if strings.EqualFold(strings.TrimSpace(p), "base64") {
			isBase64 = true
		}
	}
	if !strings.HasPrefix(mediaType, "image/") {
		return Header{}, fail("data URL of media type %q, not an image", clip(mediaType))
	}
	if !isBase64 {
		// vLLM's data-URL loader decodes only base64 payloads.
		return Header{}, fail("data URL of %s is not base64", mediaType)
	}
	h, err := Read(base64.NewDecoder(base64.StdEncoding, &spaceless{s: payload}))
	if err != nil {
		return Header{}, err
	}
	if want := h.Format.MediaType(); mediaType != want && !(h.Format == JPEG && mediaType == "image/jpg") {
		return Header{}, fail("data URL says %s but holds a %s image", mediaType, h.Format)
	}
	return h, nil
}

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

// spaceless reads a string without the line breaks some writers wrap
// base64 in (Python's base64.b64decode ignores them too, validate=False).
type spaceless struct{ s string }

func (r *spaceless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.s) > 0 {
		c := r.s[0]
		r.s = r.s[1:]
		if c == '\n' || c == '\r' || c == ' ' || c == '\t' {
			continue
		}
		p[n] = c
		n++
	}
	if n == 0 && len(r.s) == 0 {
		return 0, io.EOF
	}
	return n, nil
}
