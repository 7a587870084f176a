package hub

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/islkit/islkit/internal/hub/hubtest"
)

// childEnv makes the test binary a downloader (TestMain), for the test
// with two processes.
const childEnv = "ISLKIT_HUB_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child resolves the model into $HF_HUB_CACHE from $HF_ENDPOINT and
// prints the snapshot folder.
func child() int {
	c := New()
	snap, err := c.Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(snap.Dir)
	return 0
}

// Several goroutines and two other processes download the same model into
// one cache at once (the CDN holds each download until all are in flight,
// so they overlap): all succeed with the same snapshot, whose files are
// complete, and the cache is consistent.
func TestConcurrentDownloadsLeaveAConsistentCache(t *testing.T) {
	files := qwenFiles(t)
	srv := hubtest.New(t)
	repo := srv.AddRepo("Qwen/Qwen3-8B", files)
	const goroutines, processes = 4, 2
	srv.HoldCDN = goroutines + processes
	cache := t.TempDir()

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		dir string
		err error
	}
	results := make(chan result, goroutines+processes)
	var wg sync.WaitGroup
	for range processes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), childEnv+"=1", "HF_ENDPOINT="+srv.URL(), "HF_HUB_CACHE="+cache, "HF_HUB_OFFLINE=", "HF_TOKEN=", "HF_TOKEN_PATH="+filepath.Join(cache, "no-token"))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				err = fmt.Errorf("child: %v: %s", err, stderr.Bytes())
			}
			results <- result{string(bytes.TrimSpace(out)), err}
		}()
	}
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap, err := newClient(srv, cache, nil).Snapshot(context.Background(), "Qwen/Qwen3-8B", "main", modelFiles)
			if err != nil {
				results <- result{"", err}
				return
			}
			results <- result{snap.Dir, nil}
		}()
	}
	wg.Wait()
	close(results)
	want := filepath.Join(cache, "models--Qwen--Qwen3-8B", "snapshots", repo.Head("main"))
	for r := range results {
		if r.err != nil {
			t.Error(r.err)
		} else if r.dir != want {
			t.Errorf("snapshot %s, want %s", r.dir, want)
		}
	}
	for name, data := range files {
		if got := mustRead(t, filepath.Join(want, name)); !bytes.Equal(got, data) {
			t.Errorf("%s differs after concurrent downloads", name)
		}
	}
	checkCache(t, filepath.Join(cache, "models--Qwen--Qwen3-8B"))
	if n := srv.Count("cdn", "GET"); n < 2 {
		t.Logf("only %d CDN downloads overlapped", n)
	}
}
