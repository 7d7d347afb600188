package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/atomicfile/atomicfiletest"
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

// TestNotRegular: a path naming a named pipe, a device or a folder is
// refused by Open at once (an open of a pipe waits for a writer: one
// that has none hung it forever) and left alone by Write (replacing
// /dev/null, run as root, would be a disaster), which writes nothing
// beside it.
func TestNotRegular(t *testing.T) {
	for _, tt := range atomicfiletest.NotFiles(t) {
		t.Run(tt.Name, func(t *testing.T) {
			checkOpen(t, tt.Path, ErrNotRegular)
			err := Write(tt.Path, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tt.Path) {
				t.Fatalf("Write: %v, want an error naming %s and wrapping ErrNotRegular", err, tt.Path)
			}
			if st, err := os.Stat(tt.Path); err != nil || st.Mode().IsRegular() {
				t.Fatalf("%s replaced: %v, %v", tt.Path, st, err)
			}
			if dir := filepath.Dir(tt.Path); dir != filepath.Dir(os.DevNull) {
				if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
					t.Fatalf("temporary files left: %v", left)
				}
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		wantErr error // nil: opened, and reads "data"
	}{
		{"regular file", file, nil},
		{"symbolic link to one", link, nil},
		{"missing", filepath.Join(dir, "missing"), os.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkOpen(t, tt.path, tt.wantErr)
		})
	}
}

// checkOpen checks that Open(path) fails with wantErr, or, when wantErr
// is nil, opens a file that reads "data".
func checkOpen(t *testing.T, path string, wantErr error) {
	t.Helper()
	f, err := Open(path)
	if wantErr != nil {
		if !errors.Is(err, wantErr) {
			t.Fatalf("Open(%s) = %v, want %v", path, err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || string(b) != "data" {
		t.Fatalf("read %q, %v; want %q", b, err, "data")
	}
}
