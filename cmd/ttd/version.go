package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version and commit may be set at link time (-ldflags "-X
// main.version=... -X main.commit=..."); otherwise commit comes from the
// build's VCS stamp (debug.ReadBuildInfo) when Go recorded one.
var (
	version = "devel"
	commit  = ""
)

// printVersion writes "ttd VERSION (commit C[, modified]) GOVERSION".
func printVersion(w io.Writer) {
	c, modified := commit, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if c == "" {
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					c = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
		}
		if version == "devel" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
	}
	if c == "" {
		c = "unknown (built without VCS stamping: go build -buildvcs=true, or make build)"
	} else if modified {
		c += ", modified"
	}
	fmt.Fprintf(w, "ttd %s\ncommit %s\n%s %s/%s\n", version, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
