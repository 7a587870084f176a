// Package jsonl is the one JSON Lines reader and writer that every islkit
// filter (probe, compose, send, measure) uses on stdin and stdout.
//
// Reading splits records on '\n' only: U+2028 and U+2029 are legal inside
// JSON strings, so a line splitter that honours Unicode line breaks would cut
// records apart. A final line without '\n' is accepted, a trailing '\r' is
// dropped (CRLF files), and lines holding only spaces, tabs or '\r' are
// skipped. Lines longer than a documented maximum (DefaultMaxLineSize,
// configurable with SetMaxLineSize) are an error that names the file and
// line, never a silent truncation as with bufio.Scanner's 64 KiB default.
//
// Every error about input reads "FILE:LINE: ..." (see LineError), and
// decoding errors name the JSON field path:
// `in.jsonl:3: field "turns.0.isl": cannot unmarshal string into int`.
//
// Writing marshals a record completely before any byte of it reaches the
// output, and hands the output only whole lines, so a consumer never sees a
// partial record. A closed downstream pipe (`islkit ... | head`) surfaces
// as ErrClosedPipe, which commands treat as a quiet, successful exit.
package jsonl
