package testserver

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestConfigValidate: values the server cannot honour are refused, with
// the field named, instead of being read as something else.
func TestConfigValidate(t *testing.T) {
	for field, cfg := range map[string]Config{
		"FaultRate":       {FaultRate: 2},
		"TokensPerSecond": {TokensPerSecond: -5},
		"TTFT":            {TTFT: -time.Second},
		"PrefillPerToken": {PrefillPerToken: -time.Millisecond},
		"MaxConcurrency":  {MaxConcurrency: -1},
		"Faults":          {Faults: []string{"fire"}},
	} {
		cfg.NoTokenize = true
		var ce *ConfigError
		if _, err := New(cfg); !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%+v: err %v, want a ConfigError on %s", cfg, err, field)
		}
	}
	for _, cfg := range []Config{{FaultRate: math.NaN()}, {TokensPerSecond: math.Inf(1)}} {
		if cfg.Validate() == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
	if err := (Config{FaultRate: 1, TokensPerSecond: 0, Faults: FaultKinds()}).Validate(); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
}
