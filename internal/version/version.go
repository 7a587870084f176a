// Package version reports the islkit version recorded in provenance fields.
package version

import "runtime/debug"

// Version is set at link time (-ldflags "-X .../version.Version=v1.2.3");
// otherwise it falls back to the module version or VCS revision.
var Version = ""

// String returns the best-known version of this build.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return "dev"
}
