package fileline

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
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

// TestMembersNearMiss: a member that is a misspelt read member is named
// with the one meant; other unknown members pass.
func TestMembersNearMiss(t *testing.T) {
	m := NewMembers("scopes", "aliases", "read_only", "inputSchema")
	for _, tc := range []struct {
		name  string
		names []string
		want  string
	}{
		{"all read", []string{"scopes", "aliases", "read_only"}, ""},
		{"other members", []string{"outputSchema", "_meta", "icons"}, ""},
		{"singular", []string{"scope"}, `unknown member "scope": did you mean "scopes"? (it would be ignored)`},
		{"es plural", []string{"alias"}, `unknown member "alias": did you mean "aliases"? (it would be ignored)`},
		{"camel case", []string{"readOnly"}, `unknown member "readOnly": did you mean "read_only"? (it would be ignored)`},
		{"letter case", []string{"InputSchema"}, `unknown member "InputSchema": did you mean "inputSchema"? (it would be ignored)`},
		{"least of several", []string{"scope", "alias", "readOnly"}, `unknown member "alias": did you mean "aliases"? (it would be ignored)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.NearMiss(slices.Values(tc.names)); got != tc.want {
				t.Errorf("NearMiss(%q) = %q, want %q", tc.names, got, tc.want)
			}
		})
	}
	if !m.Reads("SCOPES") || m.Reads("scope") {
		t.Errorf(`Reads("SCOPES"), Reads("scope") = %v, %v; want true, false`, m.Reads("SCOPES"), m.Reads("scope"))
	}
}
