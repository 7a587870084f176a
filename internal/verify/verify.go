// Package verify asks a live OpenAI-compatible server to count the probe
// conversations (max_tokens 1) and compares its usage.prompt_tokens with
// our templated counts: the quickest way for a user to learn that their
// tokenizer or template differs from the server's.
package verify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/islkit/islkit/internal/budget"
	"github.com/islkit/islkit/internal/chat"
	"github.com/islkit/islkit/internal/extract"
	"github.com/islkit/islkit/internal/records"
	"github.com/islkit/islkit/internal/request"
	"github.com/islkit/islkit/internal/serverprofile"
	"github.com/islkit/islkit/internal/wire"
)

// Options say where to send and how to count on our side.
type Options struct {
	URL, APIKey, Model string
	// Template renders the messages; nil counts them bare (the texts
	// joined by one space), as for a model without a chat template.
	Template *chat.Template
	Counter  serverprofile.Counter
	Now      time.Time
	Timeout  time.Duration
	// Profile is the server whose preprocessing our count assumes
	// (serverprofile.Default when empty); the result names it.
	Profile serverprofile.Profile
}

// Run sends the six probe conversations and compares the counts.
func Run(ctx context.Context, o Options) (*records.ProbeVerify, error) {
	client := &http.Client{Timeout: o.Timeout}
	endpoint, err := wire.EndpointURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("--verify-url %w", err)
	}
	if o.Profile == "" {
		o.Profile = serverprofile.Default
	}
	res := &records.ProbeVerify{URL: o.URL, Model: o.Model, Profile: string(o.Profile), Agree: true}
	for i, s := range budget.ProbeSamples() {
		for _, msgs := range [][]request.Message{
			{{Role: "user", Content: s}},
			{{Role: "user", Content: s}, {Role: "assistant", Content: s}, {Role: "user", Content: s}},
		} {
			body, err := requestBody(o, msgs)
			if err != nil {
				return nil, err
			}
			ours, err := count(o, body)
			if err != nil {
				return nil, fmt.Errorf("our count of probe sample %d: %w", i, err)
			}
			server, err := ask(ctx, client, endpoint, o, body)
			if err != nil {
				return nil, err
			}
			r := records.ProbeVerifyRequest{Sample: i, Messages: len(msgs), Ours: ours, Server: server, Diff: server - ours}
			res.Agree = res.Agree && r.Diff == 0
			res.Requests = append(res.Requests, r)
		}
	}
	return res, nil
}

// requestBody is the chat body sent for one probe conversation.
func requestBody(o Options, msgs []request.Message) ([]byte, error) {
	return json.Marshal(map[string]any{"model": o.Model, "messages": msgs, "max_tokens": 1, "stream": false})
}

// count is our count of the body: as the profile's server counts it, or
// bare for a model without a chat template (serverprofile.CountRequest).
func count(o Options, body []byte) (int, error) {
	ex, err := extract.Body(body)
	if err != nil {
		return 0, err
	}
	return serverprofile.CountRequest(o.Profile, ex, o.Template, o.Counter, o.Now)
}

// ask posts one chat body and returns usage.prompt_tokens.
func ask(ctx context.Context, client *http.Client, endpoint string, o Options, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("--verify-url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("--verify-url %s: %w", o.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("--verify-url %s: reading the response: %w", o.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("--verify-url %s: HTTP %d: %s", o.URL, resp.StatusCode, excerpt(data))
	}
	var out struct {
		Usage *struct {
			PromptTokens *int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(data, &out); err != nil || out.Usage == nil || out.Usage.PromptTokens == nil {
		return 0, fmt.Errorf("--verify-url %s: the response has no usage.prompt_tokens: %s", o.URL, excerpt(data))
	}
	return *out.Usage.PromptTokens, nil
}

func excerpt(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
