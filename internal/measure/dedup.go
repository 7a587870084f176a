package measure

import (
	"fmt"
	"hash/maphash"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/jsonl"
	"github.com/islkit/islkit/internal/jsonobj"
)

// RecordKey identifies the request of a send record within all runs: the
// benchmark id (one per run, shared by its shards), the conversation, the
// recycle pass, the turn, and whether it was a warmup request (a warmup
// request may repeat a measured one's conversation and turn). Shards of
// one run hold different conversations, so their keys never meet.
type RecordKey struct {
	BenchmarkID       string
	ConversationID    string
	ConversationIndex int
	Pass, Turn        int
	Warmup            bool
}

func (k RecordKey) String() string {
	s := fmt.Sprintf("benchmark %q, conversation %q (index %d), pass %d, turn %d", k.BenchmarkID, k.ConversationID, k.ConversationIndex, k.Pass, k.Turn)
	if k.Warmup {
		s += ", warmup"
	}
	return s
}

// recordKey reads a send record's key; ok is false when the record lacks
// one (a dry run's records are keyed too: `cat` of two dry runs doubles
// them as well).
func recordKey(obj jsonobj.Object) (key RecordKey, ok bool) {
	var k struct {
		BenchmarkID       *string `json:"benchmark_id"`
		ConversationID    *string `json:"conversation_id"`
		ConversationIndex int     `json:"conversation_index"`
		Pass              int     `json:"pass"`
		Turn              *int    `json:"turn"`
		Warmup            bool    `json:"warmup"`
	}
	for _, f := range []struct {
		name string
		v    any
	}{{"benchmark_id", &k.BenchmarkID}, {"conversation_id", &k.ConversationID}, {"conversation_index", &k.ConversationIndex},
		{"pass", &k.Pass}, {"turn", &k.Turn}, {"warmup", &k.Warmup}} {
		if raw, found := obj.Get(f.name); found && json.Unmarshal(raw, f.v) != nil {
			return key, false
		}
	}
	if k.BenchmarkID == nil || k.ConversationID == nil || k.Turn == nil {
		return key, false
	}
	return RecordKey{*k.BenchmarkID, *k.ConversationID, k.ConversationIndex, k.Pass, *k.Turn, k.Warmup}, true
}

// Dedup tells repeated send records apart, in input order: an exact
// duplicate (same key, same bytes: `cat s.jsonl s.jsonl`) is dropped and
// counted; the same key with other content is an error naming both lines.
// It is not safe for concurrent use (measure calls it in input order).
type Dedup struct {
	seen map[RecordKey]seenRecord
}

type seenRecord struct {
	digest uint64
	at     string // FILE:LINE
}

// digestSeed keys lineDigest for this process: the digests are compared
// within one run only.
var digestSeed = maphash.MakeSeed()

// lineDigest tells two lines apart: a 64-bit hash (two different records
// of one key agree with a chance of 2⁻⁶⁴) at memory speed; SHA-256 of
// each whole line cost a few per cent of measuring records with images.
func lineDigest(line []byte) uint64 { return maphash.Bytes(digestSeed, line) }

// Check says whether res (a line's Result) is to be kept: false for an
// exact duplicate of an earlier record.
func (d *Dedup) Check(res Result) (keep bool, err error) {
	if !res.keyed {
		return true, nil
	}
	if d.seen == nil {
		d.seen = map[RecordKey]seenRecord{}
	}
	at := fmt.Sprintf("%s:%d", res.line.File, res.line.Num)
	prev, found := d.seen[res.key]
	if !found {
		d.seen[res.key] = seenRecord{res.digest, at}
		return true, nil
	}
	if prev.digest == res.digest {
		return false, nil
	}
	return true, &jsonl.LineError{File: res.line.File, Line: res.line.Num,
		Err: fmt.Errorf("the request of %s was recorded already at %s with other content: two runs share a benchmark id (give each its own --benchmark-id) or a record was edited", res.key, prev.at)}
}
