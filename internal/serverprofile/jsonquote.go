package serverprofile

import "strings"

// quoteJSON writes s as a JSON string the way both serde_json (Harmony's
// renderer) and Python's json.dumps(s, ensure_ascii=False) (mistral-common)
// write it: '"', '\\' and \n \r \t \b \f escaped, other control characters
// as \u00XX, everything else, non-ASCII included, as it is. s comes from a
// decoded JSON document, so it is valid UTF-8 and byte-wise is rune-wise.
func quoteJSON(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
