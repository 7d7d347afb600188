package storeurl_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
)

func TestOpen(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, spec string
		noDir      bool
		wantErr    string // "" : opens
		wantFile   string // a file Open must create in the data folder
	}{
		{name: "sqlite by default", spec: "", wantFile: "gateway.db"},
		{name: "memory", spec: "memory"},
		{name: "sqlite without a folder", spec: "", noDir: true, wantErr: "needs a data folder"},
		{name: "unknown scheme, password hidden", spec: "mysql://root:hunter2@db/x", wantErr: "mysql://root:xxxxx@db/x"},
		{name: "not a URL", spec: "gateway.db", wantErr: `store "gateway.db"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.noDir {
				dir = ""
			}
			st, err := storeurl.Open(ctx, tc.spec, dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("Open(%q) error = %v, want one with %q and no password", tc.spec, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q) = %v", tc.spec, err)
			}
			defer st.Close()
			if tc.wantFile != "" {
				if _, err := os.Stat(filepath.Join(dir, tc.wantFile)); err != nil {
					t.Errorf("Open(%q) created no %s: %v", tc.spec, tc.wantFile, err)
				}
			}
		})
	}
}

func TestName(t *testing.T) {
	tests := []struct{ spec, want string }{
		{"", "sqlite (gateway.db in the data folder)"},
		{"redis://:s3cret@localhost:6379/0", "redis://:xxxxx@localhost:6379/0"},
		{"postgres://u:pw@db/gw", "postgres://u:xxxxx@db/gw"},
		{"memory", "memory"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			if got := storeurl.Name(tc.spec); got != tc.want {
				t.Errorf("Name(%q) = %q, want %q", tc.spec, got, tc.want)
			}
		})
	}
	if !storeurl.IsPostgres("postgresql://db/x") || storeurl.IsPostgres("redis://x") {
		t.Error("IsPostgres does not tell postgresql:// from redis://")
	}
}
