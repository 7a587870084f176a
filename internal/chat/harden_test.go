package chat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// TestEmptyTemplateSaysSo: an empty chat template (chat_template "", an
// empty chat_template.jinja or --chat-template file) is refused with a
// message that says it is empty, instead of rendering nothing and letting
// probe report an implausible overhead (issue 11, item 13).
func TestEmptyTemplateSaysSo(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.jinja")
	os.WriteFile(empty, []byte(" \n"), 0o644)
	for name, c := range map[string]struct {
		fs       fstest.MapFS
		override string
	}{
		"config":    {fs: fstest.MapFS{"tokenizer_config.json": {Data: []byte(`{"chat_template": ""}`)}}},
		"jinja":     {fs: fstest.MapFS{"chat_template.jinja": {Data: []byte("")}}},
		"override":  {fs: fstest.MapFS{}, override: empty},
		"list item": {fs: fstest.MapFS{"tokenizer_config.json": {Data: []byte(`{"chat_template": [{"name":"default","template":""}]}`)}}},
	} {
		_, err := LoadFS(c.fs, c.override)
		if !errors.Is(err, ErrEmptyTemplate) || !strings.Contains(err.Error(), "empty") {
			t.Errorf("%s: %v, want ErrEmptyTemplate", name, err)
		}
	}
}

// TestResolveNowRefusesZeroTime: --now 0001-01-01T00:00:00 is the zero
// time, which means "the clock" inside; it must not silently become the
// clock (issue 11, item 16).
func TestResolveNowRefusesZeroTime(t *testing.T) {
	for _, flag := range []string{"0001-01-01T00:00:00", "0001-01-01"} {
		if now, err := ResolveNow(flag); err == nil {
			t.Errorf("ResolveNow(%s) = %v, want an error", flag, now)
		}
	}
	if now, err := ResolveNow("0001-01-02T00:00:00"); err != nil || now.IsZero() {
		t.Errorf("a day later: %v, %v", now, err)
	}
}
