package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		dir     string // below the test's folder; "" is the folder itself
		write   func(io.Writer) error
		wantErr error
		want    string // the file's content after; "old" is the old file kept
	}{
		{"writes", "", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, nil, "new"},
		{"write fails", "", func(w io.Writer) error { io.WriteString(w, "half"); return boom }, boom, "old"},
		{"missing folder", "no/such", func(w io.Writer) error { return nil }, os.ErrNotExist, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, tt.dir)
			path := filepath.Join(dir, "f")
			if tt.dir == "" {
				if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := Write(path, tt.write)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Write: %v, want %v", err, tt.wantErr)
			}
			if tt.dir != "" {
				return
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != tt.want {
				t.Fatalf("after: %q, %v; want %q", got, err, tt.want)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".f.*")); len(left) != 0 {
				t.Fatalf("temporary files left: %v", left)
			}
		})
	}
}
