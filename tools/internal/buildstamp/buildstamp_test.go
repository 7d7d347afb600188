package buildstamp

import (
	"runtime/debug"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"main module", debug.BuildInfo{Main: debug.Module{Path: "github.com/toolgate/toolgate", Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "-trimpath", Value: "true"}, {Key: "vcs.modified", Value: "false"}}},
			"toolgate (devel) vcs.revision=abc vcs.modified=false"},
		{"a dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9"},
			Deps: []*debug.Module{{Path: "github.com/other/x", Version: "v2"}, {Path: "github.com/toolgate/toolgate", Version: "v1.2.3"}}},
			"toolgate v1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := of(&tt.info); got != tt.want {
				t.Errorf("of = %q, want %q", got, tt.want)
			}
		})
	}
}
