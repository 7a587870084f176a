// Command sendbench measures send as a client against a control client
// (control.go: a minimal net/http SSE client) and vegeta, side by side in
// one run on loopback, each client in its own process so its peak RSS and
// CPU time (getrusage) are its own, against a fast server (server.go) in a
// third process. `make bench-send` runs it; it prints every ratio of issue
// 14 with the min, median and max over -repeats runs (the two clients of a
// comparison one after the other, in alternating order):
//
//   - peak RSS at 1000 streams (4 requests each, both clients starting
//     them spread over one stream's time), send / control (goal <= 1.25)
//   - CPU time per chunk at 1000 streams, send / control (goal <= 1.05)
//   - TTFT error p99 at 1000 streams (measured TTFT minus the server's, on
//     each stream's requests after its first, which include the dial),
//     send minus control (goal <= 5 ms)
//   - re-dials at 4000 streams: connections the server accepted beyond one
//     per stream (goal 0)
//   - non-streamed req/s at concurrency 16, 64 and 256, send / vegeta
//     (goal >= 1.0), and CPU time per request, send / vegeta, which the
//     load of a shared machine moves less
//
// It is a module of its own (bench/send/go.mod) so that vegeta is not a
// dependency of islkit.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/islkit/islkit/internal/cachebust"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/send"
)

// result is what one client process reports.
type result struct {
	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	Chunks   int     `json:"chunks"`
	ElapsedS float64 `json:"elapsed_s"`
	CPUS     float64 `json:"cpu_s"`
	MaxRSSKB int64   `json:"max_rss_kb"`
	TTFTNs   []int64 `json:"ttft_ns,omitempty"`
}

func main() {
	role := flag.String("role", "bench", "bench | server | client")
	kind := flag.String("client", "send", "client: send | control | vegeta")
	url := flag.String("url", "", "client: chat-completions URL")
	conc := flag.Int("c", 16, "client: concurrency")
	requests := flag.Int("requests", 0, "client: requests (streaming)")
	duration := flag.Duration("duration", 0, "client: run time (non-streaming)")
	stream := flag.Bool("stream", true, "client: streamed requests")
	chunks := flag.Int("chunks", 10, "server: content chunks per stream; client: max_tokens")
	ttft := flag.Duration("ttft", 100*time.Millisecond, "server: time to the first chunk")
	gap := flag.Duration("gap", 100*time.Millisecond, "server: time between chunks")
	repeats := flag.Int("repeats", 3, "bench: runs of each comparison")
	streams := flag.Int("streams", 1000, "bench: streams of the memory, CPU and TTFT comparison")
	redial := flag.Int("redial-streams", 4000, "bench: streams of the re-dial check")
	profile := flag.String("cpuprofile", "", "client: write a CPU profile to FILE")
	only := flag.String("only", "streams,redials,rps", "bench: the comparisons to run")
	stagger := flag.Duration("stagger", 0, "client: start the c workers spread over this time (worker k at k/(c-1) of it)")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sendbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var err error
	switch *role {
	case "server":
		err = runServer(*ttft, *gap, *chunks)
	case "client":
		var r result
		r, err = runClient(*kind, *url, *conc, *requests, *duration, *stagger, *stream, *chunks)
		if err == nil {
			err = json.NewEncoder(os.Stdout).Encode(r)
		}
	default:
		err = bench(*repeats, *streams, *redial, *only)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "sendbench:", err)
		os.Exit(1)
	}
}

// conversations are n single-turn conversations of a short prompt.
func conversations(n, maxTokens int) []records.Conversation {
	convs := make([]records.Conversation, n)
	for i := range convs {
		convs[i] = records.Conversation{Kind: records.KindConversation, SchemaVersion: records.SchemaVersion,
			ID: fmt.Sprintf("b%d", i), Index: i, BenchmarkID: "bench", CacheBust: cachebust.FirstTurnPrefix, Model: "m",
			Landing: cachebust.Route(cachebust.FirstTurnPrefix, false),
			Turns:   []records.Turn{{TargetISL: 40, Text: "Say hello to the benchmark, please.", MaxTokens: maxTokens}}}
	}
	return convs
}

// body is the request body send would send first, for the other clients.
func body(stream bool, maxTokens int) ([]byte, error) {
	b, err := send.NewBuilder(send.PayloadOptions{Stream: stream}, nil)
	if err != nil {
		return nil, err
	}
	convs := conversations(1, maxTokens)
	built, err := b.Build(&convs[0], 0, 0, nil)
	return built.Body, err
}

func runClient(kind, url string, c, requests int, duration, stagger time.Duration, stream bool, maxTokens int) (result, error) {
	var r result
	var err error
	switch kind {
	case "send":
		r, err = runSend(url, c, requests, duration, stagger, stream, maxTokens)
	case "control":
		var b []byte
		if b, err = body(true, maxTokens); err == nil {
			r = runControl(url, b, c, requests, stagger)
		}
	case "vegeta":
		r, err = runVegeta(url, c, duration, maxTokens)
	default:
		err = fmt.Errorf("unknown client %q", kind)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	r.CPUS = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	r.MaxRSSKB = ru.Maxrss
	if kind == "send" && err == nil && stream {
		r.TTFTNs, r.Chunks, r.Errors, err = readRecords(os.Getenv("SENDBENCH_RECORDS"))
	}
	return r, err
}

// runSend runs send.Run as the send command does, its records into a file
// (encoding and writing them is part of send's cost).
func runSend(url string, c, requests int, duration, stagger time.Duration, stream bool, maxTokens int) (result, error) {
	f, err := os.Create(os.Getenv("SENDBENCH_RECORDS"))
	if err != nil {
		return result{}, err
	}
	defer f.Close()
	b, err := send.NewBuilder(send.PayloadOptions{Stream: stream}, nil)
	if err != nil {
		return result{}, err
	}
	w := bufio.NewWriter(f)
	// --ramp-up with a concurrency starts worker k at k/(c-1) of it, as
	// the control's -stagger does.
	o := send.Config{URL: url, Concurrency: c, Requests: requests, Duration: duration, RampUp: stagger, Recycle: true,
		Timeout: time.Minute, Grace: 10 * time.Second, NoPayload: true}
	sum, err := send.Run(context.Background(), w, conversations(c, maxTokens), b, o, send.Wiring{})
	if err == nil {
		err = w.Flush()
	}
	return result{Requests: sum.Requests, Errors: sum.Failed, ElapsedS: sum.Elapsed.Seconds()}, err
}

func readRecords(path string) (ttfts []int64, chunks, failed int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var rec records.Request
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, 0, 0, err
		}
		if rec.Result == nil || !rec.Result.OK {
			failed++
			continue
		}
		chunks += rec.Result.Chunks
		// First requests (pass 0: one per worker) include the connection
		// storm of the start; the TTFT error is the client's own.
		if rec.Result.TTFTNs != nil && rec.Pass > 0 {
			ttfts = append(ttfts, *rec.Result.TTFTNs)
		}
	}
	return ttfts, chunks, failed, sc.Err()
}

// runVegeta attacks with c workers as fast as they go for d.
func runVegeta(url string, c int, d time.Duration, maxTokens int) (result, error) {
	b, err := body(false, maxTokens)
	if err != nil {
		return result{}, err
	}
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: http.MethodPost, URL: url, Body: b,
		Header: http.Header{"Content-Type": {"application/json"}}})
	atk := vegeta.NewAttacker(vegeta.Workers(uint64(c)), vegeta.MaxWorkers(uint64(c)), vegeta.KeepAlive(true), vegeta.Connections(c))
	var r result
	start := time.Now()
	for res := range atk.Attack(tr, vegeta.Rate{}, d, "bench") {
		r.Requests++
		if res.Code != http.StatusOK || res.Error != "" {
			r.Errors++
		}
	}
	r.ElapsedS = time.Since(start).Seconds()
	return r, nil
}

// proc is a child process of this binary.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func self() string {
	p, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return p
}

// startServer starts a fast server process; its URL base.
func startServer(args ...string) (*proc, string, error) {
	cmd := exec.Command(self(), append([]string{"-role", "server"}, args...)...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		return nil, "", fmt.Errorf("server: %q %v", line, err)
	}
	return &proc{cmd: cmd, stdin: in}, "http://" + addr, nil
}

func (p *proc) stop() { p.stdin.Close(); p.cmd.Wait() }

// client runs one client process.
func client(args ...string) (result, error) {
	tmp, err := os.CreateTemp("", "sendbench-*.jsonl")
	if err != nil {
		return result{}, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command(self(), append([]string{"-role", "client"}, args...)...)
	cmd.Env = append(os.Environ(), "SENDBENCH_RECORDS="+tmp.Name())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return result{}, fmt.Errorf("client %v: %w", args, err)
	}
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		return r, err
	}
	if r.Errors > 0 {
		return r, fmt.Errorf("client %v: %d of %d requests failed", args, r.Errors, r.Requests)
	}
	return r, nil
}

// pair runs clients a and b one after the other, each in its own process
// against the same server, a first on even runs and b first on odd ones,
// so neither always gets the warmer (or the quieter) machine. (Run at the
// same time they would compete for the server, and a client slower by a
// little would get a lot fewer requests through.)
func pair(run int, a, b string, args []string) (ra, rb result, err error) {
	first, second := &ra, &rb
	if run%2 == 1 {
		a, b, first, second = b, a, second, first
	}
	if *first, err = client(append([]string{"-client", a}, args...)...); err != nil {
		return ra, rb, err
	}
	*second, err = client(append([]string{"-client", b}, args...)...)
	return ra, rb, err
}

// p99 of vs (ns) in ms, by linear interpolation between closest ranks.
func p99(vs []int64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	rank := 0.99 * float64(len(s)-1)
	lo := int(rank)
	hi := min(lo+1, len(s)-1)
	return (float64(s[lo]) + (float64(s[hi])-float64(s[lo]))*(rank-float64(lo))) / 1e6
}

// spread is min, median and max.
func spread(vs []float64) string {
	s := slices.Clone(vs)
	slices.Sort(s)
	return fmt.Sprintf("min %.3f  median %.3f  max %.3f", s[0], s[len(s)/2], s[len(s)-1])
}

func bench(repeats, streams, redialStreams int, only string) error {
	run := func(name string) bool { return slices.Contains(strings.Split(only, ","), name) }
	const ttft = 100 * time.Millisecond
	var rss, cpu, ttftDiff, redials []float64
	conc := []int{16, 64, 256}
	rps, cpr := map[int][]float64{}, map[int][]float64{}
	if run("streams") {
		if err := benchStreams(repeats, streams, ttft, &rss, &cpu, &ttftDiff); err != nil {
			return err
		}
	}
	if run("redials") {
		if err := benchRedials(repeats, redialStreams, &redials); err != nil {
			return err
		}
	}
	if run("rps") {
		if err := benchRPS(repeats, conc, rps, cpr); err != nil {
			return err
		}
	}
	fmt.Printf("\n== ratios over %d runs (goal)\n", repeats)
	if run("streams") {
		fmt.Printf("peak RSS at %d streams, send / control (<= 1.25):  %s\n", streams, spread(rss))
		fmt.Printf("CPU per chunk at %d streams, send / control (<= 1.05):  %s\n", streams, spread(cpu))
		fmt.Printf("TTFT error p99 at %d streams, send - control, ms (<= 5):  %s\n", streams, spread(ttftDiff))
	}
	if run("redials") {
		fmt.Printf("re-dials at %d streams (0):  %s\n", redialStreams, spread(redials))
	}
	if run("rps") {
		for _, c := range conc {
			fmt.Printf("req/s at concurrency %d, send / vegeta (>= 1.0):  %s\n", c, spread(rps[c]))
		}
		for _, c := range conc {
			fmt.Printf("CPU per request at concurrency %d, send / vegeta:  %s\n", c, spread(cpr[c]))
		}
	}
	return nil
}

func benchStreams(repeats, streams int, ttft time.Duration, rss, cpu, ttftDiff *[]float64) error {
	srv, base, err := startServer("-ttft", ttft.String(), "-gap", "100ms", "-chunks", "10")
	if err != nil {
		return err
	}
	defer srv.stop()
	url := base + "/v1/chat/completions"
	// The streams start spread over one stream's time, as a steady load of
	// 1000 streams would be: started together, every stream's requests
	// come in bursts of 1000 at once, and the p99 TTFT is the time two
	// cores take to serve a burst, whichever the client.
	stagger := ttft + 10*100*time.Millisecond
	fmt.Printf("== %d streams started over %v, 4 requests each, 10 chunks 100 ms apart after a %v TTFT; %d runs\n", streams, stagger, ttft, repeats)
	for i := range repeats {
		args := []string{"-url", url, "-c", fmt.Sprint(streams), "-requests", fmt.Sprint(4 * streams), "-chunks", "10", "-stagger", stagger.String()}
		s, c, err := pair(i, "send", "control", args)
		if err != nil {
			return err
		}
		sp, cp := p99(s.TTFTNs)-float64(ttft)/1e6, p99(c.TTFTNs)-float64(ttft)/1e6
		*rss = append(*rss, float64(s.MaxRSSKB)/float64(c.MaxRSSKB))
		*cpu = append(*cpu, (s.CPUS/float64(s.Chunks))/(c.CPUS/float64(c.Chunks)))
		*ttftDiff = append(*ttftDiff, sp-cp)
		fmt.Printf("  run %d: peak RSS send %.1f MB, control %.1f MB; CPU per chunk send %.2f µs, control %.2f µs; TTFT error p99 send %.2f ms, control %.2f ms\n",
			i+1, float64(s.MaxRSSKB)/1024, float64(c.MaxRSSKB)/1024, s.CPUS/float64(s.Chunks)*1e6, c.CPUS/float64(c.Chunks)*1e6, sp, cp)
	}
	return nil
}

func benchRedials(repeats, redialStreams int, redials *[]float64) error {
	srv, base, err := startServer("-ttft", "50ms", "-gap", "50ms", "-chunks", "2")
	if err != nil {
		return err
	}
	defer srv.stop()
	url := base + "/v1/chat/completions"
	fmt.Printf("== %d streams, 3 requests each: re-dials = connections opened beyond one per stream\n", redialStreams)
	for i := range repeats {
		before, err := serverConns(base)
		if err != nil {
			return err
		}
		if _, err := client("-client", "send", "-url", url, "-c", fmt.Sprint(redialStreams), "-requests", fmt.Sprint(3*redialStreams), "-chunks", "2"); err != nil {
			return err
		}
		after, err := serverConns(base)
		if err != nil {
			return err
		}
		// Fewer connections than streams is no re-dial: a stream took one
		// another had freed before its own was dialled.
		n := max(after-before-int64(redialStreams), 0)
		*redials = append(*redials, float64(n))
		fmt.Printf("  run %d: %d connections for %d streams: %d re-dials\n", i+1, after-before, redialStreams, n)
	}
	return nil
}

func benchRPS(repeats int, conc []int, rps, cpr map[int][]float64) error {
	srv, base, err := startServer()
	if err != nil {
		return err
	}
	defer srv.stop()
	url := base + "/v1/chat/completions"
	fmt.Printf("== non-streamed requests for 2 s at concurrency %v: req/s and CPU per request, send vs vegeta\n", conc)
	for i := range repeats {
		for _, c := range conc {
			args := []string{"-url", url, "-c", fmt.Sprint(c), "-duration", "2s", "-stream=false"}
			s, v, err := pair(i, "send", "vegeta", args)
			if err != nil {
				return err
			}
			sr, vr := float64(s.Requests)/s.ElapsedS, float64(v.Requests)/v.ElapsedS
			sc, vc := s.CPUS/float64(s.Requests)*1e6, v.CPUS/float64(v.Requests)*1e6
			rps[c] = append(rps[c], sr/vr)
			cpr[c] = append(cpr[c], sc/vc)
			fmt.Printf("  run %d, c=%d: send %.0f req/s, %.1f µs CPU a request; vegeta %.0f req/s, %.1f µs\n", i+1, c, sr, sc, vr, vc)
		}
	}
	return nil
}
