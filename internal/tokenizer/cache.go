package tokenizer

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	json "github.com/goccy/go-json"
)

// The load cache keeps a BPE tokenizer's parsed form — its vocabulary by
// id and its merge table as laid out in memory — in one file per model
// file, named by the SHA-256 of the model file's bytes, so that a model
// used before loads without parsing megabytes of JSON (a 28 MB
// tokenizer.json: about 1.2 s parsed, a few tens of ms from the cache).
// The rest of tokenizer.json (normalizer, pre-tokenizer, added tokens,
// ...) is small and kept as JSON, built by the same code as a fresh load.
//
// A cache file is untrusted input: anyone who can write the folder can
// write it. It is read with every size checked before allocating, every
// id checked against the vocabulary, every merge checked to make its
// token from its pair's and to be found where the table looks for it, and
// a CRC of the whole; a file that fails any check is ignored with a
// warning and rewritten from the model file.

// CacheEnv names the environment variable that sets the cache folder;
// "off" turns the cache off.
const CacheEnv = "ISLKIT_CACHE"

// cacheFormat is bumped whenever the layout or what it stores changes;
// files of another format are not read (and get rewritten).
const cacheFormat = 1

var cacheMagic = [8]byte{'I', 'S', 'L', 'K', 'T', 'O', 'K', 'C'}

// cacheHeaderLen: magic, format, source SHA-256, payload length, CRC-32C.
const cacheHeaderLen = 8 + 4 + 32 + 8 + 4

// Limits a cache file must respect; a real one is far below each.
const (
	maxCacheFile   = 1 << 30
	maxCacheVocab  = 1 << 24
	maxCacheTable  = 1 << 26 // slots of the merge table
	maxCacheJSON   = 64 << 20
	maxCacheTokLen = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Cache is a folder of parsed tokenizers. The zero Dir, or a nil *Cache,
// caches nothing.
type Cache struct {
	Dir string
	// Warn receives the one-line warning for a cache file that is ignored
	// or cannot be written; nil: none.
	Warn func(msg string)
}

// DefaultCache is the cache the tools use: $ISLKIT_CACHE, else the user
// cache folder's islkit/tokenizers. "off" turns it off. Test binaries use
// none unless ISLKIT_CACHE names one, so tests never write to the user's.
func DefaultCache(warn func(string)) *Cache {
	dir, set := os.LookupEnv(CacheEnv)
	switch {
	case strings.EqualFold(dir, "off"):
		return nil
	case set && dir != "":
		return &Cache{Dir: dir, Warn: warn}
	case flag.Lookup("test.v") != nil:
		return nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return nil
	}
	return &Cache{Dir: filepath.Join(base, "islkit", "tokenizers"), Warn: warn}
}

// path is where the parsed form of the file with this SHA-256 is kept.
func (c *Cache) path(sum [32]byte) string {
	return filepath.Join(c.Dir, fmt.Sprintf("%s.v%d.bin", hex.EncodeToString(sum[:]), cacheFormat))
}

func (c *Cache) warn(format string, args ...any) {
	if c.Warn != nil {
		c.Warn(fmt.Sprintf(format, args...))
	}
}

// LoadJSON is FromJSON through the cache: data is a tokenizer.json and
// sum its SHA-256.
func (c *Cache) LoadJSON(data []byte, sum [32]byte) (*Tokenizer, error) {
	return c.load(sum, func() (*Tokenizer, *fileJSON, error) { return fromJSON(data, buildModel) })
}

// load returns the cached tokenizer for sum, or builds it with build and
// stores it.
func (c *Cache) load(sum [32]byte, build func() (*Tokenizer, *fileJSON, error)) (*Tokenizer, error) {
	if c == nil || c.Dir == "" {
		t, _, err := build()
		return t, err
	}
	path := c.path(sum)
	// A file that cannot be opened (none yet, or an unusable folder, which
	// the write below reports) is no warning; one that is not right is.
	var pathErr *fs.PathError
	if t, err := readCacheFile(path, sum); err == nil {
		return t, nil
	} else if !errors.As(err, &pathErr) {
		c.warn("ignoring the tokenizer cache file %s (%v); rebuilding it", path, err)
	}
	t, f, err := build()
	if err != nil {
		return nil, err
	}
	if data, ok := encodeCache(t, f, sum); ok {
		if err := writeAtomic(path, data); err != nil {
			c.warn("cannot write the tokenizer cache (%v); set %s=off to stop trying", err, CacheEnv)
		}
	}
	return t, nil
}

// writeAtomic writes data to path through a temporary file in the same
// folder renamed over it, so a reader sees a whole file or none.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// encodeCache lays out t's parsed form; ok is false for a tokenizer whose
// model the cache does not store (only BPE models are slow to load).
func encodeCache(t *Tokenizer, f *fileJSON, sum [32]byte) ([]byte, bool) {
	m, ok := t.model.(*bpe)
	if !ok || f == nil {
		return nil, false
	}
	opts := m.opts
	if opts.Type == "" {
		opts.Type = "BPE"
	}
	model, err := json.Marshal(opts)
	if err != nil {
		return nil, false
	}
	top := *f
	top.Model = model
	js, err := json.Marshal(top)
	if err != nil {
		return nil, false
	}
	ids := vocabIDs(m)
	size := 4 + len(js) + 4 + 4 + 16*len(m.merges.keys)
	for _, e := range ids {
		size += 8 + len(e.tok)
	}
	// The header and payload in one buffer sized once: a first load pays
	// for this on top of the parse.
	out := make([]byte, cacheHeaderLen, cacheHeaderLen+size)
	p := out[cacheHeaderLen:]
	p = binary.LittleEndian.AppendUint32(p, uint32(len(js)))
	p = append(p, js...)
	p = binary.LittleEndian.AppendUint32(p, uint32(len(ids)))
	for _, e := range ids {
		p = binary.LittleEndian.AppendUint32(p, uint32(e.id))
		p = binary.LittleEndian.AppendUint32(p, uint32(len(e.tok)))
		p = append(p, e.tok...)
	}
	p = binary.LittleEndian.AppendUint32(p, uint32(len(m.merges.keys)))
	for _, k := range m.merges.keys {
		p = binary.LittleEndian.AppendUint64(p, k)
	}
	for _, v := range m.merges.vals {
		p = binary.LittleEndian.AppendUint32(p, uint32(v.rank))
		p = binary.LittleEndian.AppendUint32(p, uint32(v.newID))
	}
	if len(p) != size {
		return nil, false // p outgrew out: a miscount here, never a bad file
	}
	h := out[:0]
	h = append(h, cacheMagic[:]...)
	h = binary.LittleEndian.AppendUint32(h, cacheFormat)
	h = append(h, sum[:]...)
	h = binary.LittleEndian.AppendUint64(h, uint64(len(p)))
	binary.LittleEndian.AppendUint32(h, crc32.Checksum(p, castagnoli))
	return out[:cacheHeaderLen+len(p)], true
}

type vocabEntry struct {
	id  int
	tok string
}

func vocabIDs(m *bpe) []vocabEntry {
	out := make([]vocabEntry, 0, len(m.vocab))
	if m.byID != nil {
		for id, tok := range m.byID {
			if m.known[id] {
				out = append(out, vocabEntry{id, tok})
			}
		}
		return out
	}
	for tok, id := range m.vocab {
		out = append(out, vocabEntry{id, tok})
	}
	return out
}

func readCacheFile(path string, sum [32]byte) (*Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxCacheFile || st.Size() < cacheHeaderLen {
		return nil, fmt.Errorf("size %d is not that of a cache file", st.Size())
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("reading: %v", err) // not a PathError: warned about
	}
	return decodeCache(data, sum)
}

// cacheReader reads the payload, every length checked against what is
// left.
type cacheReader struct {
	b   []byte
	err error
}

func (r *cacheReader) u32(what string) uint32 {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 4 {
		r.err = fmt.Errorf("truncated at %s", what)
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *cacheReader) bytes(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = fmt.Errorf("truncated at %s", what)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// decodeCache checks and reads a cache file's bytes, which it takes
// ownership of (the tokenizer's strings point into them); sum is the
// SHA-256 of the model file it must have been made from.
func decodeCache(data []byte, sum [32]byte) (*Tokenizer, error) {
	if len(data) < cacheHeaderLen || !bytes.Equal(data[:8], cacheMagic[:]) {
		return nil, errors.New("not an islkit tokenizer cache file")
	}
	if v := binary.LittleEndian.Uint32(data[8:]); v != cacheFormat {
		return nil, fmt.Errorf("format %d, not %d", v, cacheFormat)
	}
	if !bytes.Equal(data[12:44], sum[:]) {
		return nil, errors.New("made from another model file")
	}
	n := binary.LittleEndian.Uint64(data[44:])
	payload := data[cacheHeaderLen:]
	if n != uint64(len(payload)) {
		return nil, fmt.Errorf("payload of %d bytes, header says %d", len(payload), n)
	}
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(data[52:]) {
		return nil, errors.New("checksum mismatch")
	}
	// The tokens are strings over data itself (no copy): decodeCache owns
	// data and nothing writes it after this.
	r := &cacheReader{b: payload}
	jsLen := r.u32("json length")
	if jsLen > maxCacheJSON {
		return nil, fmt.Errorf("json of %d bytes", jsLen)
	}
	js := r.bytes(int(jsLen), "json")
	nv := r.u32("vocabulary size")
	if r.err != nil {
		return nil, r.err
	}
	if nv > maxCacheVocab || uint64(nv)*8 > uint64(len(r.b)) {
		return nil, fmt.Errorf("vocabulary of %d tokens in %d bytes", nv, len(r.b))
	}
	byID, known := make([]string, 0, nv), make([]bool, 0, nv)
	for i := 0; i < int(nv); i++ {
		id := r.u32("vocabulary id")
		l := r.u32("token length")
		if r.err != nil {
			return nil, r.err
		}
		if id >= maxCacheVocab || l > maxCacheTokLen {
			return nil, fmt.Errorf("vocabulary entry %d: id %d, length %d", i, id, l)
		}
		tokb := r.bytes(int(l), "token")
		if r.err != nil {
			return nil, r.err
		}
		if int(id) >= len(byID) {
			if int(id) >= 2*int(nv)+256 {
				return nil, fmt.Errorf("vocabulary entry %d: id %d far past the vocabulary's size", i, id)
			}
			byID = append(byID, make([]string, int(id)+1-len(byID))...)
			known = append(known, make([]bool, int(id)+1-len(known))...)
		}
		if known[id] {
			return nil, fmt.Errorf("vocabulary entry %d: id %d twice", i, id)
		}
		byID[id], known[id] = unsafe.String(unsafe.SliceData(tokb), len(tokb)), true
	}
	size := r.u32("merge table size")
	if r.err != nil {
		return nil, r.err
	}
	if size < 16 || size > maxCacheTable || size&(size-1) != 0 || uint64(len(r.b)) != uint64(size)*16 {
		return nil, fmt.Errorf("merge table of %d slots in %d bytes", size, len(r.b))
	}
	mt := newMergeTable(int(size) / 2)
	if len(mt.keys) != int(size) {
		return nil, fmt.Errorf("merge table of %d slots", size)
	}
	kb, vb := r.b[:size*8], r.b[size*8:]
	used := 0
	for i := range mt.keys {
		k := binary.LittleEndian.Uint64(kb[8*i:])
		if k == 0 {
			continue
		}
		used++
		mt.keys[i] = k
		mt.vals[i] = mergeValue{rank: int32(binary.LittleEndian.Uint32(vb[8*i:])), newID: int32(binary.LittleEndian.Uint32(vb[8*i+4:]))}
	}
	// At least one empty slot ends every probe.
	if used > int(size)/2 {
		return nil, fmt.Errorf("merge table of %d slots holds %d merges", size, used)
	}
	var build func(json.RawMessage) (model, error) = func(raw json.RawMessage) (model, error) {
		var o bpeOptions
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, fmt.Errorf("BPE: %w", err)
		}
		// The map and the merge check are independent: built side by side.
		var mergeErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			mergeErr = checkMerges(byID, known, o, mt)
		}()
		vocab := make(map[string]int, nv)
		for id, tok := range byID {
			if known[id] {
				vocab[tok] = id
			}
		}
		wg.Wait()
		if len(vocab) != int(nv) {
			return nil, errors.New("a token is in the vocabulary twice")
		}
		if mergeErr != nil {
			return nil, mergeErr
		}
		var vocabR map[int]string
		if 2*len(vocab)+256 <= len(byID) {
			byID, known = nil, nil // sparse: the map form, as a fresh load has it
			vocabR = invert(vocab)
		}
		m, err := newBPEWith(o, vocab, vocabR, byID, known)
		if err != nil {
			return nil, err
		}
		m.merges = mt
		return m, nil
	}
	t, _, err := fromJSON(js, build)
	return t, err
}

// checkMerges checks every merge of a cached table: its ids are tokens,
// the new token is its pair's tokens joined (as newBPE makes it) and the
// table finds it where it sits.
func checkMerges(byID []string, known []bool, o bpeOptions, mt *mergeTable) error {
	prefix := ""
	if o.ContinuingSubwordPrefix != nil {
		prefix = *o.ContinuingSubwordPrefix
	}
	tok := func(id int) (string, bool) {
		if id < 0 || id >= len(byID) || !known[id] {
			return "", false
		}
		return byID[id], true
	}
	for i, k := range mt.keys {
		if k == 0 {
			continue
		}
		pair, v := k-1, mt.vals[i]
		a, okA := tok(int(pair >> 32))
		b, okB := tok(int(uint32(pair)))
		merged, okM := tok(int(v.newID))
		if !okA || !okB || !okM || v.rank < 0 || len(b) < len(prefix) ||
			len(merged) != len(a)+len(b)-len(prefix) ||
			merged[:len(a)] != a || merged[len(a):] != b[len(prefix):] {
			return fmt.Errorf("merge table slot %d is not a merge of the vocabulary", i)
		}
		if got, ok := mt.get(pair); !ok || got != v {
			return fmt.Errorf("merge table slot %d is not where the table looks for it", i)
		}
	}
	return nil
}
