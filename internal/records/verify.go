package records

// ProbeVerify is what `probe --verify-url` found: the server's
// usage.prompt_tokens for the probe conversations next to our templated
// counts. Any difference means the server tokenizes or templates
// differently from the model folder probe read.
type ProbeVerify struct {
	URL   string `json:"url"`
	Model string `json:"model"`
	// Profile is the server profile our counts assumed (probe --server).
	Profile string `json:"profile"`
	// Agree is true when every request's counts are equal.
	Agree    bool                 `json:"agree"`
	Requests []ProbeVerifyRequest `json:"requests"`
}

// ProbeVerifyRequest is one probe conversation sent with max_tokens 1.
type ProbeVerifyRequest struct {
	// Sample is the probe text's index (AIPerf's three samples).
	Sample int `json:"sample"`
	// Messages is 1 ([user]) or 3 ([user, assistant, user]).
	Messages int `json:"messages"`
	Ours     int `json:"ours"`
	Server   int `json:"server"`
	// Diff is Server − Ours.
	Diff int `json:"diff"`
}
