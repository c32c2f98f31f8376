package version

import (
	"runtime"
	"runtime/debug"
)

// Set at link time by the Makefile: -X github.com/braidwf/braid/internal/version.version=...
var (
	version   = "dev"
	gitCommit = ""
	buildDate = ""
)

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	BuildDate string `json:"buildDate"`
	GitCommit string `json:"gitCommit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the build information of this binary.
func Get() Info {
	info := Info{
		Version:   version,
		BuildDate: buildDate,
		GitCommit: gitCommit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if info.GitCommit == "" {
		if bi, ok := debug.ReadBuildInfo(); ok {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" {
					info.GitCommit = s.Value
				}
			}
		}
	}
	return info
}
