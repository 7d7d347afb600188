// Package buildstamp names the toolgate build a program runs, for the
// fingerprints of files that one build writes and only the same build may
// trust (the discovery index file, the catalog cache).
package buildstamp

import (
	"runtime/debug"
	"strings"
	"sync"
)

// String returns "toolgate VERSION" with the VCS revision and whether the
// tree was modified ("vcs.revision=… vcs.modified=…") when the build
// recorded them, the version being toolgate's module version in the
// program that imports it (or the main module's when toolgate is the
// main module); empty when the program has no build information.
func String() string { return stamp() }

var stamp = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return of(info)
})

func of(info *debug.BuildInfo) string {
	v := info.Main.Version
	for _, dep := range info.Deps {
		if dep.Path == "github.com/toolgate/toolgate" {
			v = dep.Version
		}
	}
	var sb strings.Builder
	sb.WriteString("toolgate ")
	sb.WriteString(v)
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			sb.WriteString(" " + s.Key + "=" + s.Value)
		}
	}
	return sb.String()
}
