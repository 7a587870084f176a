package records

import "github.com/islkit/islkit/internal/jsonl"

// producers names the tool that writes each kind, for error messages.
var producers = map[string]string{KindProbe: "probe", KindConversation: "compose", KindRequest: "send"}

// Decode reads one record of the given kind into v. The kind and schema
// version are checked first, so a record of another kind or of a newer
// schema gets that message rather than an unknown-field error; then v is
// decoded strictly (an unknown field means a newer producer).
func Decode(line jsonl.Line, kind string, v any) error {
	if err := line.CheckUTF8(); err != nil {
		return err
	}
	var head struct {
		Kind          string `json:"kind"`
		SchemaVersion int    `json:"schema_version"`
	}
	if err := line.Decode(&head); err != nil {
		return err
	}
	if head.Kind != kind {
		return line.FieldErrorf("kind", "got %q, want %q (is this %s's output?)", head.Kind, kind, producers[kind])
	}
	if head.SchemaVersion != SchemaVersion {
		return line.FieldErrorf("schema_version", "unknown schema version %d (this release reads version %d; use %s and its readers from the same release)", head.SchemaVersion, SchemaVersion, producers[kind])
	}
	return line.DecodeStrict(v)
}
