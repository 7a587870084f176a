// Package testserver is an OpenAI-compatible server (/v1/chat/completions,
// /v1/completions and /v1/responses, streamed or not) for
// tests and demos. It accounts prompt tokens the way the server of its
// profile does (internal/serverprofile, default vLLM: the body
// preprocessed as vLLM does, rendered through the model's chat template,
// then counted; a request that server refuses gets a 400 naming the rule),
// streams synthetic tokens at a set rate, and injects faults on request.
package testserver

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/endpoint"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/model"
	"github.com/islkit/islkit/internal/modelsrc"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/tokenizer"
)

// Fault kinds, also the values of the FaultHeader request header.
const (
	Fault500      = "500"      // HTTP 500 with an OpenAI error body
	Fault429      = "429"      // HTTP 429
	FaultReset    = "reset"    // TCP reset before any response byte
	FaultStall    = "stall"    // silence until the client gives up (streams send headers and one chunk first)
	FaultTruncate = "truncate" // the response stops mid-stream, no [DONE]
)

// FaultIgnoreMinTokens answers as a server that ignores ignore_eos and
// min_tokens (and llama.cpp's n_predict floor): the reply stops where it
// would without them (NaturalLength, RandomStop). Not drawn when Faults
// is empty: it is a server's misbehaviour, not a transport fault.
const FaultIgnoreMinTokens = "ignore_min_tokens"

// FaultKinds lists every fault.
func FaultKinds() []string {
	return []string{Fault500, Fault429, FaultReset, FaultStall, FaultTruncate}
}

// FaultHeader, set on a request, forces that fault for it.
const FaultHeader = "X-Islkit-Fault"

// Config configures a Server.
type Config struct {
	// Model is the model folder whose tokenizer and template account
	// prompt tokens; nil with NoTokenize.
	Model *modelsrc.Source
	// NoTokenize skips prompt accounting (prompt_tokens is 0): a cheap
	// server for benchmarking the client.
	NoTokenize bool
	// Renderer is -renderer: "" renders as the profile's server chooses
	// for the model (config.json's model_type), else jinja or harmony.
	Renderer string
	// TokensPerSecond paces streamed tokens; 0 sends them at once.
	TokensPerSecond float64
	// TTFT delays the first token.
	TTFT time.Duration
	// PrefillPerToken adds to TTFT per prompt token (a prefill time that
	// grows with the prompt); MaxConcurrency, when > 0, serves that many
	// requests at once and queues the others in arrival order
	// (capacity.go): a server of known capacity for load sweeps.
	PrefillPerToken time.Duration
	MaxConcurrency  int
	// DefaultMaxTokens applies when a request sets no max_tokens.
	DefaultMaxTokens int
	// NaturalLength, when > 0, ends a completion after that many tokens
	// (finish_reason "stop") unless ignore_eos is set; min_tokens raises it.
	NaturalLength int
	// RandomStop ends each completion, like a real model's, at a length
	// drawn uniformly from 1..max_tokens (finish_reason "stop" below
	// max_tokens) from a generator seeded with Seed and the request's
	// body, unless ignore_eos is set; min_tokens raises it. Replies then
	// fall short of their budget by a different amount every time, and
	// the same request gets the same reply whatever the order requests
	// arrive in (a live run's replies do not depend on its timing).
	RandomStop bool
	// FaultRate is the fraction of requests that get a fault drawn from
	// Faults (all kinds when empty), from a generator seeded with Seed.
	FaultRate float64
	Faults    []string
	Seed      uint64
	// Now is what the template's strftime_now sees (zero: the clock).
	Now time.Time
	// PrefixCacheBlock, when > 0, turns on an unbounded automatic prefix
	// cache of blocks of that many tokens (vLLM's default is 16):
	// usage.prompt_tokens_details.cached_tokens then reports its hits.
	PrefixCacheBlock int
	// CloseAfterStream closes the TCP connection right after each streamed
	// response while still advertising Keep-Alive, as llama.cpp's
	// llama-server does: a client that reuses the connection sees it die.
	CloseAfterStream bool
	// NoDone ends every chat and completions stream after its usage
	// chunk without data: [DONE], and closes the connection: the answer
	// is complete, its end marker missing.
	NoDone bool
	// Profile is the server whose preprocessing prompt accounting follows
	// (serverprofile.Default when empty).
	Profile serverprofile.Profile
	// Vision counts the images of requests as vLLM does for a
	// vision-language model (serverprofile.LoadVision); nil refuses them
	// as a text-only model's server does.
	Vision *serverprofile.Vision
	// OutputServer is the server whose output-length parameters are
	// honoured (serverprofile.OutputServers; Profile's when empty): vLLM,
	// SGLang, TensorRT-LLM and Dynamo read ignore_eos and min_tokens;
	// llama.cpp n_predict (the length) and ignore_eos, and has no minimum;
	// openai ignores them all, and so does every server on /v1/responses
	// (vLLM's reads neither). A parameter not given is not applied, as on
	// the real server.
	OutputServer string
	// Metrics serves GET /metrics: the server's counters under vLLM's
	// names (vllm:prompt_tokens_total, ..., counted from the requests it
	// served; metrics.go), for send --scrape-metrics.
	Metrics bool
	// Reasoning makes the first Reasoning tokens of every reply
	// reasoning (chat: delta.reasoning_content), counted inside
	// completion_tokens and reported as
	// completion_tokens_details.reasoning_tokens, as a reasoning model's
	// server does.
	Reasoning int
}

// Server is an http.Handler; Start runs it on a loopback port.
type Server struct {
	cfg   Config
	tok   *tokenizer.Tokenizer
	tmpl  *chat.Template
	cache *blockTrie // nil without PrefixCacheBlock

	mu  sync.Mutex
	rng *rand.Rand

	requests atomic.Int64
	// slots hold a place per request served (MaxConcurrency; nil: no
	// limit); running and waiting count them and the queue.
	slots            chan struct{}
	running, waiting atomic.Int64
	faults           sync.Map // kind -> *atomic.Int64
	stops            sync.Map // request body -> Stop
	store            responseStore
	metrics          serverMetrics

	// Observe, when set before serving, sees each request body and the
	// prompt tokens counted for it.
	Observe func(body []byte, promptTokens int)

	srv *http.Server
	url string
}

// ConfigError is a Config value the server cannot honour; Field names
// the Config field.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Validate refuses values that would be silently misread: a fault rate
// outside 0..1, a negative or non-finite token rate or delay, an unknown
// fault kind.
func (c Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	switch {
	case !(c.FaultRate >= 0 && c.FaultRate <= 1): // NaN fails both
		return bad("FaultRate", "%v: want a fraction from 0 to 1", c.FaultRate)
	case !(c.TokensPerSecond >= 0) || math.IsInf(c.TokensPerSecond, 0):
		return bad("TokensPerSecond", "%v: want 0 (at once) or a positive rate", c.TokensPerSecond)
	case c.TTFT < 0:
		return bad("TTFT", "%v: want >= 0", c.TTFT)
	case c.PrefillPerToken < 0:
		return bad("PrefillPerToken", "%v: want >= 0", c.PrefillPerToken)
	case c.MaxConcurrency < 0:
		return bad("MaxConcurrency", "%d: want 0 (no limit) or the requests served at once", c.MaxConcurrency)
	case c.NaturalLength < 0:
		return bad("NaturalLength", "%d: want >= 0", c.NaturalLength)
	case c.PrefixCacheBlock < 0:
		return bad("PrefixCacheBlock", "%d: want 0 (no cache) or a block size in tokens", c.PrefixCacheBlock)
	case c.PrefixCacheBlock > 0 && c.NoTokenize:
		return bad("PrefixCacheBlock", "a prefix cache needs the prompt's tokens: drop NoTokenize")
	}
	if c.OutputServer != "" {
		if _, err := serverprofile.ParseOutputServer(c.OutputServer); err != nil {
			return bad("OutputServer", "%v", err)
		}
	}
	if c.Reasoning < 0 {
		return bad("Reasoning", "%d: want >= 0", c.Reasoning)
	}
	for _, f := range c.Faults {
		if !validFault(f) {
			return bad("Faults", "%q: unknown fault (want one of %s)", f, strings.Join(FaultKinds(), ", "))
		}
	}
	return nil
}

// New builds a server without starting it.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x7e57))}
	if cfg.MaxConcurrency > 0 {
		s.slots = make(chan struct{}, cfg.MaxConcurrency)
	}
	if cfg.DefaultMaxTokens <= 0 {
		s.cfg.DefaultMaxTokens = 16
	}
	if s.cfg.Profile == "" {
		s.cfg.Profile = serverprofile.Default
	}
	if _, err := serverprofile.Parse(string(s.cfg.Profile)); err != nil {
		return nil, err
	}
	if len(s.cfg.Faults) == 0 {
		s.cfg.Faults = FaultKinds()
	}
	if cfg.NoTokenize {
		return s, nil
	}
	src := cfg.Model
	if src == nil {
		var err error
		if src, err = modelsrc.Default(); err != nil {
			return nil, err
		}
	}
	tok, err := src.Tokenizer()
	if err != nil {
		return nil, err
	}
	tmpl, mistral, err := model.MistralTemplate(src)
	if err != nil {
		return nil, err
	}
	if !mistral {
		if tmpl, err = chat.LoadFS(src.FS, ""); err != nil {
			return nil, fmt.Errorf("chat template of %s: %w", src.Name, err)
		}
		if tmpl.ModelType, err = model.ModelType(src); err != nil {
			return nil, err
		}
	}
	tmpl.Renderer = cfg.Renderer
	s.tok, s.tmpl = tok, tmpl
	if cfg.PrefixCacheBlock > 0 {
		s.cache = &blockTrie{size: cfg.PrefixCacheBlock}
	}
	return s, nil
}

func validFault(f string) bool {
	return f == FaultIgnoreMinTokens || f == FaultDoublePromptTokens || slices.Contains(FaultKinds(), f)
}

// Start serves on addr ("127.0.0.1:0" when empty) until Close.
func (s *Server) Start(addr string) error {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.url = "http://" + ln.Addr().String()
	go s.srv.Serve(ln)
	return nil
}

// URL is the base URL after Start.
func (s *Server) URL() string { return s.url }

// Close stops the server and drops open connections.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Requests is the number of chat requests received.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Faults returns how many of each fault were injected.
func (s *Server) Faults() map[string]int {
	out := map[string]int{}
	s.faults.Range(func(k, v any) bool {
		out[k.(string)] = int(v.(*atomic.Int64).Load())
		return true
	})
	return out
}

func (s *Server) countFault(kind string) {
	v, _ := s.faults.LoadOrStore(kind, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Request is the part of a request body (chat completions, completions or
// responses) the server reads.
type Request struct {
	Model               string          `json:"model"`
	Messages            json.RawMessage `json:"messages"`
	Prompt              json.RawMessage `json:"prompt"` // completions
	Input               json.RawMessage `json:"input"`  // responses
	Tools               json.RawMessage `json:"tools"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MaxOutputTokens     *int            `json:"max_output_tokens"` // responses
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
	MinTokens int  `json:"min_tokens"`
	NPredict  *int `json:"n_predict"` // llama.cpp
	// Responses state: previous_response_id names a stored answer whose
	// conversation this request continues; store (default true) keeps
	// this answer for the next.
	PreviousResponseID string          `json:"previous_response_id"`
	Store              *bool           `json:"store"`
	Instructions       json.RawMessage `json:"instructions"`
	ChatTemplateKwargs map[string]any  `json:"chat_template_kwargs"`
}

// CountBody is the prompt_tokens (input_tokens for a Responses body) the
// profile's server reports for a body of any endpoint
// (serverprofile.CountRequest); a request that server refuses is a
// *serverprofile.RefusalError.
func (s *Server) CountBody(body []byte) (int, error) {
	if s.tmpl == nil {
		return 0, errors.New("testserver: no tokenizer (NoTokenize)")
	}
	ex, err := extract.Body(body)
	if err != nil {
		return 0, err
	}
	return serverprofile.CountRequest(s.cfg.Profile, ex, s.tmpl, s.tok, s.cfg.Now)
}

// CountPrompt counts messages (and tools, kwargs, add_generation_prompt)
// sent as a chat body: CountBody of {"messages", "tools",
// "chat_template_kwargs", "add_generation_prompt"}. Messages and Tools are
// raw JSON so key order is kept.
func (s *Server) CountPrompt(messages, tools json.RawMessage, kwargs map[string]any, addGenerationPrompt bool) (int, error) {
	body := map[string]any{"model": "m", "messages": messages, "add_generation_prompt": addGenerationPrompt}
	if len(tools) > 0 && string(tools) != "null" {
		body["tools"] = tools
	}
	if kwargs != nil {
		body["chat_template_kwargs"] = kwargs
	}
	data, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	return s.CountBody(data)
}

// epResponses is endpoint.Responses (ServeHTTP's local endpoint hides the
// package there).
const epResponses = endpoint.Responses

// Paths of the endpoints served.
const (
	PathChat        = "/v1/chat/completions"
	PathCompletions = "/v1/completions"
	PathResponses   = "/v1/responses"
)

// endpointOf is the endpoint served at path ("" for none).
func endpointOf(path string) endpoint.Kind {
	switch path {
	case PathChat:
		return endpoint.Chat
	case PathCompletions:
		return endpoint.Completions
	case PathResponses:
		return endpoint.Responses
	}
	return ""
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint := endpointOf(r.URL.Path)
	switch {
	case r.URL.Path == "/v1/models" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"islkit-test","object":"model"}]}`)
		return
	case r.URL.Path == PathMetrics && r.Method == http.MethodGet && s.cfg.Metrics:
		s.serveMetrics(w)
		return
	case endpoint == "":
		apiErr(w, http.StatusNotFound, "no route "+r.URL.Path)
		return
	case r.Method != http.MethodPost:
		apiErr(w, http.StatusMethodNotAllowed, "POST only")
		return
	}
	s.requests.Add(1)
	arrived := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	if err != nil {
		return
	}
	forced := r.Header.Get(FaultHeader)
	if forced != "" && !validFault(forced) {
		// A mistyped fault in a test must not pass as "no fault".
		apiErr(w, http.StatusBadRequest, fmt.Sprintf("%s: unknown fault %q (have %v)", FaultHeader, forced, FaultKinds()))
		return
	}
	fault := s.pickFault(forced)
	if fault != "" {
		s.countFault(fault)
	}
	switch fault {
	case Fault500:
		apiErr(w, http.StatusInternalServerError, "injected fault")
		return
	case Fault429:
		apiErr(w, http.StatusTooManyRequests, "injected fault: rate limited")
		return
	case FaultReset:
		reset(w)
		return
	}
	var req Request
	if err := json.Unmarshal(body, &req); err != nil {
		apiErr(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	if msg := req.missing(endpoint); msg != "" {
		apiErr(w, http.StatusBadRequest, msg)
		return
	}
	counted := body // what the server prefills
	var conversation []json.RawMessage
	if endpoint == epResponses {
		if req.PreviousResponseID != "" {
			prev, ok := s.store.get(req.PreviousResponseID)
			if !ok {
				apiErr(w, http.StatusNotFound, "Response with id '"+req.PreviousResponseID+"' not found.")
				return
			}
			if conversation, counted, err = reconstruct(prev, &req); err != nil {
				apiErr(w, http.StatusBadRequest, err.Error())
				return
			}
		} else if conversation, err = inputItems(req.Input); err != nil {
			apiErr(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	prompt, cached, images := 0, 0, 0
	if !s.cfg.NoTokenize {
		if prompt, cached, images, err = s.countEndpoint(counted); err != nil {
			apiErr(w, http.StatusBadRequest, err.Error())
			return
		}
	}
	if s.Observe != nil {
		s.Observe(body, prompt)
	}
	s.metrics.prefilled(prompt, cached, s.cache != nil, fault)
	s.metrics.running.Add(1)
	defer s.metrics.running.Add(-1)
	n, finish, why := s.completionLength(&req, endpoint, body, fault == FaultIgnoreMinTokens)
	s.stops.Store(string(body), Stop{Tokens: n, Finish: finish, Why: why})
	out := &output{arrived: arrived, endpoint: endpoint, req: &req, prompt: prompt, cached: cached, images: images, n: n, finish: finish, fault: fault, reasoning: s.reasoningOf(endpoint, n)}
	if endpoint == epResponses {
		out.id = s.store.newID()
		if req.Store == nil || *req.Store {
			s.store.put(out.id, &stored{input: conversation, output: out.text(), at: time.Now()})
		}
	}
	release, ok := s.admit(r.Context())
	if !ok {
		return
	}
	defer release()
	if req.Stream {
		// Released before the stream's last event: a closed-loop client
		// sends its next request as soon as it has read it, and must find
		// the place free.
		out.release = release
		s.stream(w, r.Context(), out)
		return
	}
	if fault == FaultStall {
		<-r.Context().Done()
		return
	}
	if !sleep(r.Context(), s.prefill(prompt)+s.tokenDelay(n)) {
		return
	}
	s.metrics.firstToken(time.Since(arrived) - s.tokenDelay(n))
	release()
	data := out.body()
	if fault == FaultTruncate {
		// Promise the whole body, send half, drop the connection.
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	s.metrics.finished(out)
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// missing names what the endpoint's body lacks ("" when nothing).
func (r *Request) missing(ep endpoint.Kind) string {
	empty := func(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }
	switch ep {
	case endpoint.Completions:
		if empty(r.Prompt) {
			return "prompt is required"
		}
	case endpoint.Responses:
		if empty(r.Input) {
			return "input is required"
		}
	default:
		if empty(r.Messages) {
			return "messages is required"
		}
	}
	return ""
}

// countEndpoint counts a body of any endpoint through the profile
// (serverprofile.CountRequest) and, with a prefix cache, looks its
// prompts up (serverprofile.PromptIDs: the ids the server runs): a list of
// completions prompts is one engine request each, and their cached tokens
// add up as their counts do. images is the prompt's image tokens (with
// Config.Vision).
func (s *Server) countEndpoint(body []byte) (prompt, cached, images int, err error) {
	ex, err := extract.Body(body)
	if err != nil {
		return 0, 0, 0, err
	}
	prompt, per, err := serverprofile.CountRequestVision(s.cfg.Profile, ex, s.tmpl, s.cfg.Vision, s.tok, s.cfg.Now)
	for _, n := range per {
		images += n
	}
	if err != nil || s.cache == nil {
		return prompt, 0, images, err
	}
	prompts, err := serverprofile.PromptIDsVision(s.cfg.Profile, ex, s.tmpl, s.cfg.Vision, s.tok, s.cfg.Now)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, ids := range prompts {
		cached += s.cache.lookupInsert(ids)
	}
	return prompt, cached, images, nil
}

// pickFault returns the fault for a request: the forced one (valid), else
// one drawn at FaultRate.
func (s *Server) pickFault(forced string) string {
	if forced != "" {
		return forced
	}
	if s.cfg.FaultRate <= 0 {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rng.Float64() >= s.cfg.FaultRate {
		return ""
	}
	return s.cfg.Faults[s.rng.IntN(len(s.cfg.Faults))]
}

// reasoningOf is how many of a chat reply's n tokens are reasoning (the
// other endpoints have no reasoning here).
func (s *Server) reasoningOf(ep endpoint.Kind, n int) int {
	if ep != endpoint.Chat {
		return 0
	}
	return min(s.cfg.Reasoning, n)
}

// Why a reply stopped (Stop.Why).
const (
	StopMaxTokens = "max_tokens" // ran to its limit
	StopEOS       = "eos"        // NaturalLength or RandomStop: the model's own end
	// StopIgnoredMinTokens: the model's own end, below the min_tokens or
	// ignore_eos the request asked for (FaultIgnoreMinTokens).
	StopIgnoredMinTokens = "ignored_min_tokens"
)

// Stop is the server's own record of one reply's length and why.
type Stop struct {
	Tokens int
	Finish string // finish_reason
	Why    string // StopMaxTokens, StopEOS, StopIgnoredMinTokens
}

// StopOf is the Stop of the last request with this body.
func (s *Server) StopOf(body []byte) (Stop, bool) {
	v, ok := s.stops.Load(string(body))
	if !ok {
		return Stop{}, false
	}
	return v.(Stop), true
}

// lengthParams are the output-length parameters the server reads from
// req: its limit, whether EOS is ignored, the minimum.
func (s *Server) lengthParams(req *Request, ep endpoint.Kind) (limit int, ignoreEOS bool, minTokens int) {
	limit = s.cfg.DefaultMaxTokens
	if req.MaxCompletionTokens != nil {
		limit = *req.MaxCompletionTokens
	}
	if req.MaxTokens != nil {
		limit = *req.MaxTokens
	}
	if req.MaxOutputTokens != nil {
		limit = *req.MaxOutputTokens
	}
	server := s.cfg.OutputServer
	if server == "" {
		server = string(s.cfg.Profile)
	}
	switch {
	case server == serverprofile.OpenAI, ep == endpoint.Responses:
		// vLLM's Responses requests pass no ignore_eos or min_tokens
		// (serverprofile.ExactOutput).
		return max(limit, 0), false, 0
	case server == serverprofile.LlamaCpp:
		if req.NPredict != nil {
			limit = *req.NPredict
		}
		return max(limit, 0), req.IgnoreEOS, 0
	}
	return max(limit, 0), req.IgnoreEOS, req.MinTokens
}

// completionLength is the limit, cut to NaturalLength or a RandomStop
// length (but not below the minimum) unless EOS is ignored; with
// ignoreParams (FaultIgnoreMinTokens) the request's ignore_eos and
// minimum are not applied.
func (s *Server) completionLength(req *Request, ep endpoint.Kind, body []byte, ignoreParams bool) (int, string, string) {
	n, ignoreEOS, minTokens := s.lengthParams(req, ep)
	asked := ignoreEOS || minTokens > 0
	why := StopEOS
	if ignoreParams {
		ignoreEOS, minTokens = false, 0
		if asked {
			why = StopIgnoredMinTokens
		}
	}
	if s.cfg.NaturalLength > 0 && !ignoreEOS {
		if stop := max(s.cfg.NaturalLength, minTokens); stop < n {
			return stop, "stop", why
		}
	}
	if s.cfg.RandomStop && !ignoreEOS && n > 1 {
		h := fnv.New64a()
		h.Write(body)
		stop := max(1+rand.New(rand.NewPCG(s.cfg.Seed, h.Sum64())).IntN(n), minTokens)
		if stop < n {
			return stop, "stop", why
		}
	}
	return n, "length", StopMaxTokens
}

func (s *Server) tokenDelay(n int) time.Duration {
	if s.cfg.TokensPerSecond <= 0 || n <= 1 {
		return 0
	}
	return time.Duration(float64(n-1) / s.cfg.TokensPerSecond * float64(time.Second))
}

// words are the synthetic output; each is one "token" for accounting.
var words = [...]string{"lorem", " ipsum", " dolor", " sit", " amet", ",", " consectetur", " adipiscing", " elit", "."}

func word(i int) string { return words[i%len(words)] }

func usage(prompt, cached, completion int) map[string]any {
	return map[string]any{"prompt_tokens": prompt, "completion_tokens": completion,
		"total_tokens": prompt + completion, "prompt_tokens_details": map[string]any{"cached_tokens": cached}}
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func apiErr(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	m, _ := json.Marshal(msg)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":"%s","code":%d}}`, m, strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_"), status)
}

// closeAfterStream ends a chunked response whole (the terminating
// chunk) and closes the connection at once, without the
// "Connection: close" that would tell the client not to reuse it.
func closeAfterStream(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, rw, err := hj.Hijack() // flushes what the handler wrote
	if err != nil {
		return
	}
	rw.WriteString("0\r\n\r\n")
	rw.Flush()
	conn.Close()
}

// reset closes the connection with SO_LINGER 0, so the client gets a TCP
// RST instead of a response.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}
