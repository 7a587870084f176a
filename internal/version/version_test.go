package version

import (
	"runtime/debug"
	"testing"
)

func TestVersions(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name         string
		linked       string
		bi           *debug.BuildInfo
		short, fully string
	}{
		{"no build info", "", nil, "dev", "dev"},
		{"go test", "", &debug.BuildInfo{}, "dev", "dev"},
		{"checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev},
			"dev-0123456789ab", "dev (revision 0123456789ab, modified)"},
		{"clean checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev[:1]},
			"dev-0123456789ab", "dev (revision 0123456789ab)"},
		{"go install @v1.2.3", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3", "v1.2.3"},
		{"ldflags", "v9.9.9", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev},
			"v9.9.9", "v9.9.9 (revision 0123456789ab, modified)"},
	} {
		if got := short(c.linked, c.bi); got != c.short {
			t.Errorf("%s: String = %q, want %q", c.name, got, c.short)
		}
		if got := full(c.linked, c.bi); got != c.fully {
			t.Errorf("%s: Full = %q, want %q", c.name, got, c.fully)
		}
	}
}
