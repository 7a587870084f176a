package tokenizer

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/islkit/islkit/internal/testutil"
)

// cachedLoad loads model's tokenizer.json through a cache in dir.
func cachedLoad(t testing.TB, c *Cache, model string) *Tokenizer {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.RefDir(t), "models", model, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	tk, err := c.LoadJSON(data, sha256.Sum256(data))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// warnings collects a cache's warnings.
type warnings []string

func (w *warnings) add(msg string) { *w = append(*w, msg) }

// TestGoldenTokensWarmCache loads every conformance model twice through a
// cache, the second time from the cache file alone, and requires the
// Rust library's golden ids from it.
func TestGoldenTokensWarmCache(t *testing.T) {
	shared := testutil.RefDir(t)
	var warned warnings
	c := &Cache{Dir: t.TempDir(), Warn: warned.add}
	for _, model := range goldenModels {
		t.Run(model, func(t *testing.T) {
			cachedLoad(t, c, model) // cold: parses, writes the file
			data, _ := os.ReadFile(filepath.Join(shared, "models", model, "tokenizer.json"))
			if _, err := os.Stat(c.path(sha256.Sum256(data))); err != nil {
				t.Fatalf("no cache file written: %v", err)
			}
			tk, err := readCacheFile(c.path(sha256.Sum256(data)), sha256.Sum256(data))
			if err != nil {
				t.Fatalf("reading the cache file: %v", err)
			}
			lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(shared, "golden", "tokens", model+".jsonl"))
			bad := 0
			for i, g := range lines {
				if got := tk.Encode(g.Text); !slices.Equal(got, g.IDs) {
					bad++
					if bad <= 3 {
						t.Errorf("line %d %q:\n got %v\nwant %v", i+1, truncate(g.Text), got, g.IDs)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d/%d lines differ from the Rust library when loaded from the cache", bad, len(lines))
			}
			for _, id := range []int{0, 1, 100, 1000} {
				if a, b := tk.Decode([]int{id}, false), loadShared(t, model).Decode([]int{id}, false); a != b {
					t.Errorf("Decode(%d) = %q from the cache, %q parsed", id, a, b)
				}
			}
		})
	}
	if len(warned) > 0 {
		t.Errorf("warnings: %q", warned)
	}
}

// TestCacheBadEntries: a corrupt, truncated, foreign, other-format or
// oversized cache file is ignored with one warning, the model file is
// parsed instead and the cache file rewritten, after which it loads clean.
func TestCacheBadEntries(t *testing.T) {
	const model = "mistral7b-metaspace"
	data, err := os.ReadFile(filepath.Join(testutil.RefDir(t), "models", model, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	lines := testutil.ReadJSONL[goldenLine](t, filepath.Join(testutil.RefDir(t), "golden", "tokens", model+".jsonl"))
	var warned warnings
	c := &Cache{Dir: t.TempDir(), Warn: warned.add}
	if _, err := c.LoadJSON(data, sum); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.path(sum))
	if err != nil {
		t.Fatal(err)
	}
	otherSum := sha256.Sum256([]byte("another model"))
	foreign := slices.Clone(good)
	copy(foreign[12:44], otherSum[:])
	flipped := slices.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	format := slices.Clone(good)
	format[8]++
	cases := map[string][]byte{
		"empty":     {},
		"truncated": good[:len(good)-100],
		"header":    good[:cacheHeaderLen-1],
		"flipped":   flipped,
		"foreign":   foreign,
		"format":    format,
		"text":      []byte("not a cache file at all, but long enough to hold a header or two...."),
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			warned = nil
			if err := os.WriteFile(c.path(sum), bad, 0o644); err != nil {
				t.Fatal(err)
			}
			tk, err := c.LoadJSON(data, sum)
			if err != nil {
				t.Fatal(err)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "ignoring the tokenizer cache file") || strings.Contains(warned[0], "\n") {
				t.Errorf("warnings %q, want one line ignoring the file", warned)
			}
			for i, g := range lines[:200] {
				if got := tk.Encode(g.Text); !slices.Equal(got, g.IDs) {
					t.Fatalf("line %d: %v, want %v", i+1, got, g.IDs)
				}
			}
			if again, _ := os.ReadFile(c.path(sum)); !bytes.Equal(again, good) {
				t.Errorf("the cache file was not rewritten")
			}
			warned = nil
			if _, err := c.LoadJSON(data, sum); err != nil || len(warned) != 0 {
				t.Errorf("after the rewrite: %v, warnings %q", err, warned)
			}
		})
	}
}

// TestCacheEnv: ISLKIT_CACHE names the folder, "off" turns it off, and a
// test binary without it uses none (tests never write the user's cache).
func TestCacheEnv(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheEnv, dir)
	if c := DefaultCache(nil); c == nil || c.Dir != dir {
		t.Errorf("ISLKIT_CACHE=%s: %+v", dir, c)
	}
	t.Setenv(CacheEnv, "off")
	if c := DefaultCache(nil); c != nil {
		t.Errorf("ISLKIT_CACHE=off: %+v", c)
	}
	os.Unsetenv(CacheEnv)
	if c := DefaultCache(nil); c != nil {
		t.Errorf("in a test binary without ISLKIT_CACHE: %+v", c)
	}
}

// TestCacheUnwritable: a cache folder that cannot be written costs one
// warning, not the load.
func TestCacheUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var warned warnings
	c := &Cache{Dir: filepath.Join(file, "sub"), Warn: warned.add}
	data := []byte(loadSeeds[2])
	if _, err := c.LoadJSON(data, sha256.Sum256(data)); err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "cannot write the tokenizer cache") {
		t.Errorf("warnings %q", warned)
	}
}

// FuzzDecodeCache feeds cache files, which anyone who can write the cache
// folder can write: decodeCache refuses a file or returns a tokenizer that
// encodes without panicking, and never allocates past what the file's
// size allows (checked before allocating).
func FuzzDecodeCache(f *testing.F) {
	sum := sha256.Sum256([]byte("seed"))
	for _, s := range loadSeeds {
		tk, fj, err := fromJSON([]byte(s), buildModel)
		if err != nil {
			continue
		}
		if b, ok := encodeCache(tk, fj, sum); ok {
			f.Add(b)
			f.Add(b[:len(b)/2])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The checksum would stop nearly every mutation before the
		// structure is read: fix it up, so the fuzzer tests the checks past it.
		data = slices.Clone(data) // decodeCache keeps it
		if len(data) >= cacheHeaderLen {
			copy(data[12:44], sum[:])
			binary.LittleEndian.PutUint64(data[44:], uint64(len(data)-cacheHeaderLen))
			binary.LittleEndian.PutUint32(data[52:], crc32.Checksum(data[cacheHeaderLen:], castagnoli))
		}
		tk, err := decodeCache(data, sum)
		if err != nil {
			return
		}
		ids := tk.Encode("ab abc A1 12! [X] é")
		tk.Decode(ids, false)
	})
}
