// Package version reports the islkit version: in provenance fields, in
// each tool's --version and in send's User-Agent.
package version

import "runtime/debug"

// Version is set at link time (-ldflags "-X .../version.Version=v1.2.3");
// otherwise it falls back to the module version or VCS revision.
var Version = ""

// String returns the best-known version of this build in one word: the
// link-time Version, the module version (go install ...@v1.2.3),
// "dev-<revision>" for a build from a checkout, else "dev".
func String() string {
	bi, _ := debug.ReadBuildInfo()
	return short(Version, bi)
}

// Full is String with the VCS revision and whether the checkout had local
// changes, for --version: "dev (revision 0123456789ab, modified)".
func Full() string {
	bi, _ := debug.ReadBuildInfo()
	return full(Version, bi)
}

func short(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if v := module(bi); v != "" {
		return v
	}
	if rev, _ := vcs(bi); rev != "" {
		return "dev-" + rev
	}
	return "dev"
}

func full(linked string, bi *debug.BuildInfo) string {
	v := linked
	if v == "" {
		v = module(bi)
	}
	if v == "" {
		v = "dev"
	}
	rev, modified := vcs(bi)
	switch {
	case rev != "" && modified:
		return v + " (revision " + rev + ", modified)"
	case rev != "":
		return v + " (revision " + rev + ")"
	}
	return v
}

// module is the main module's version, "" for a development build.
func module(bi *debug.BuildInfo) string {
	if bi == nil || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return ""
	}
	return bi.Main.Version
}

// vcs is the VCS revision (12 digits) the binary was built from, if the
// go command recorded one.
func vcs(bi *debug.BuildInfo) (rev string, modified bool) {
	if bi == nil {
		return "", false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return rev, modified
}
