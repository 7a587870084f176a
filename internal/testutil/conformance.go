package testutil

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// The conformance reference data (model folders, golden token ids, template
// renders, wire cases) is checked in compressed under testdata/conformance,
// so that a fresh clone tests itself. scripts/conformance.sh packs, checks
// and regenerates it.
const conformanceDir = "testdata/conformance"

// conformanceArchives are unpacked, in this order, into one tree laid out
// as models/, golden/, templates/ and reference/.
var conformanceArchives = []string{"models.tar.zst", "golden.tar.zst"}

// The Qwen3 reference model is the embedded default model, byte for byte,
// so the repository keeps one copy of it.
var defaultModelFiles = []string{"tokenizer.json", "tokenizer_config.json"}

const defaultModelDir = "internal/modelsrc/defaultmodel"

var refDir struct {
	once sync.Once
	dir  string
	err  error
}

// RefDir returns the reference tree, unpacked once per machine into a
// folder named after the archives' hash (so test binaries running at once,
// and later runs, share it), and once per test binary checked for.
func RefDir(t testing.TB) string {
	t.Helper()
	refDir.once.Do(func() { // no t.Fatal in here: it would leave the once done and dir empty
		root, err := FindRoot()
		if err != nil {
			refDir.err = err
			return
		}
		refDir.dir, refDir.err = UnpackConformance(root)
	})
	if refDir.err != nil {
		t.Fatalf("conformance data: %v", refDir.err)
	}
	return refDir.dir
}

// RefModel returns the folder of one reference model (deepseek_v3, gptoss,
// llama3, llama3_1, mistral7b, mistral7b-metaspace, qwen3).
func RefModel(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(RefDir(t), "models", name)
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		t.Fatalf("no reference model %q: %v", name, err)
	}
	return dir
}

// RefModels lists the reference models, sorted.
func RefModels(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(RefDir(t), "models"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// UnpackConformance unpacks the reference tree of the repository at root
// (see RefDir) and returns its folder.
func UnpackConformance(root string) (string, error) {
	sum := sha256.New()
	inputs := []string{}
	for _, a := range conformanceArchives {
		inputs = append(inputs, filepath.Join(root, conformanceDir, a))
	}
	for _, f := range defaultModelFiles {
		inputs = append(inputs, filepath.Join(root, defaultModelDir, f+".gz"))
	}
	for _, p := range inputs {
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		_, err = io.Copy(sum, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", p, err)
		}
	}
	key := hex.EncodeToString(sum.Sum(nil))[:16]
	final := filepath.Join(os.TempDir(), "islkit-conformance-"+key)
	if complete(final) {
		return final, nil
	}
	// A tree a temp cleaner has thinned out is unpacked anew.
	os.RemoveAll(final)
	tmp, err := os.MkdirTemp(os.TempDir(), ".islkit-conformance-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // gone after the rename; cleans up a failed unpack
	for _, a := range conformanceArchives {
		if err := untarZstd(filepath.Join(root, conformanceDir, a), tmp); err != nil {
			return "", fmt.Errorf("%s: %w", a, err)
		}
	}
	qwen := filepath.Join(tmp, "models", "qwen3")
	if err := os.MkdirAll(qwen, 0o755); err != nil {
		return "", err
	}
	for _, f := range defaultModelFiles {
		if err := gunzipTo(filepath.Join(root, defaultModelDir, f+".gz"), filepath.Join(qwen, f)); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), []byte(key+"\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	// Another process may have won the race; its tree is the same bytes.
	if err := os.Rename(tmp, final); err != nil && !complete(final) {
		return "", err
	}
	return final, nil
}

// complete reports whether an unpacked tree is whole: its marker and a
// file of each archive and of the embedded model are there.
func complete(dir string) bool {
	for _, f := range []string{".complete", "models/llama3/tokenizer.json", "models/qwen3/tokenizer.json", "golden/templates.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// untarZstd unpacks a zstd-compressed tar of regular files and folders
// into dir, refusing any name that would land outside it.
func untarZstd(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	// The archives are packed with zstd --long=27: a 128 MiB window.
	zr, err := zstd.NewReader(f, zstd.WithDecoderMaxWindow(1<<27), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return err
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if !filepath.IsLocal(name) || strings.HasPrefix(name, ".") {
			return fmt.Errorf("unsafe name %q", h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := writeFrom(target, tr); err != nil {
				return fmt.Errorf("%s: %w", h.Name, err)
			}
		default:
			return fmt.Errorf("%s: not a file or folder", h.Name)
		}
	}
}

func gunzipTo(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return writeFrom(dst, zr)
}

func writeFrom(dst string, r io.Reader) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
