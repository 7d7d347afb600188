package fileline

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func ExampleError() {
	fmt.Println(&Error{File: "cat.jsonl", Line: 3, Reason: `missing "name"`})
	fmt.Println(&Error{File: "cat.jsonl", Reason: "larger than 256 MiB"})
	// Output:
	// cat.jsonl:3: missing "name"
	// cat.jsonl: larger than 256 MiB
}

// Blank lines are skipped but counted, so Line names the line an editor
// shows; a line over the limit stops the scan at its own number.
func TestScanner(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   []string // "LINE:text"
		reason string   // after the scan; "" for none
		line   int      // Line after the scan stopped on an error
	}{
		{"", nil, "", 0},
		{"a\n\n  b  \n\t\n c", []string{"1:a", "3:b", "5:c"}, "", 0},
		{"a\r\nb\r\n", []string{"1:a", "2:b"}, "", 0},
		{"\xef\xbb\xbfa\nb", []string{"1:a", "2:b"}, "", 0},
		{"\xef\xbb\xbf\nb", []string{"2:b"}, "", 0},
		{"a\n\xef\xbb\xbfb", []string{"1:a", "2:\xef\xbb\xbfb"}, "", 0},
		{"a\n\n" + strings.Repeat("x", 9) + "\nb", []string{"1:a"}, "line longer than 8 bytes", 3},
	} {
		t.Run(tc.in, func(t *testing.T) {
			sc := NewScanner(strings.NewReader(tc.in), 8)
			var got []string
			for sc.Scan() {
				got = append(got, fmt.Sprintf("%d:%s", sc.Line(), sc.Bytes()))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("Scan(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if tc.reason == "" {
				if sc.Err() != nil {
					t.Errorf("Scan(%q): Err = %v, want nil", tc.in, sc.Err())
				}
				return
			}
			if sc.Err() == nil || sc.Reason() != tc.reason || sc.Line() != tc.line {
				t.Errorf("Scan(%q): Err %v, Reason %q at line %d, want %q at line %d", tc.in, sc.Err(), sc.Reason(), sc.Line(), tc.reason, tc.line)
			}
		})
	}
}

// Open's error is the cause without the path, so that a message naming
// the file does not name it twice.
func TestOpenErrorIsTheCause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.jsonl")
	_, err := Open(path)
	if !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), path) {
		t.Errorf("Open(%s) error = %v, want fs.ErrNotExist without the path", path, err)
	}
}
