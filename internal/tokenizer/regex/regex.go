// Package regex runs the regular expressions of HuggingFace tokenizers' Split and ByteLevel
// pre-tokenizers with the exact semantics of the Rust library, which uses Oniguruma: backtracking,
// lookahead, (?i) with Unicode case folding, and \p{..}/\s classes from Unicode 16.0.
//
// The patterns found in real tokenizer.json files (cl100k/Llama-3, Qwen, o200k/gpt-oss, the three
// DeepSeek-V3 splits, GPT-2's ByteLevel regex) get hand-written scanners, keyed by the exact
// pattern string. Any other pattern runs on github.com/dlclark/regexp2 after a rewrite that pins
// every class to the Unicode 16 sets; constructs whose Oniguruma meaning that rewrite cannot
// reproduce are refused with an error rather than run differently.
package regex

// Matcher finds the successive non-overlapping leftmost matches of one pattern, exactly as
// Oniguruma (via Rust onig find_iter) does in HF tokenizers.
type Matcher interface {
	// FindAll appends [start,end) byte offsets of each match in s (valid UTF-8) to dst and returns it.
	FindAll(s string, dst [][2]int) [][2]int
}

// Compile returns an exact Matcher for a Split `Regex` pattern string as it appears in
// tokenizer.json (after JSON unescaping). Known patterns get hand-written scanners; others go
// through CompileFallback.
func Compile(pattern string) (Matcher, error) {
	if m, ok := scanners[pattern]; ok {
		return m, nil
	}
	return CompileFallback(pattern)
}

// Whitespace returns the matcher of the Whitespace pre-tokenizer. Its pattern reads
// `\w+|[^\w\s]+`, but the Rust library runs it on the regex crate, not Oniguruma, and that
// crate's \w also holds Join_Control (U+200C, U+200D): "👨\u200d👩" is three pieces there and one
// match for a Split with the same pattern.
func Whitespace() Matcher { return scanFunc(scanRegexWhitespace) }

// Forward reports whether m is one of the hand-written scanners. Each of them decides the match
// at a position from the text at and after it only (no look-behind, no anchors), and, where the
// character before a space is printable ASCII (an ASCII letter in particular) or punctuation of
// U+2010–U+2027, no match starting
// before that space looks past it, nor tells it from the end of the text (runs stop at the space;
// contractions and optional prefixes read at most two characters ahead, and a space is none of
// what they look for): the tokenizer's span counts (EncodeSpan) and seams (Seam) rely on both
// (TestForwardCut).
func Forward(m Matcher) bool {
	_, ok := m.(scanFunc)
	return ok
}
