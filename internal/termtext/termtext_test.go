package termtext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	tests := []struct {
		name, in, line, text string
	}{
		{"plain", "create_issue: Create an issue", "create_issue: Create an issue", "create_issue: Create an issue"},
		{"CSI color", "\x1b[31mred\x1b[0m", `\u001b[31mred\u001b[0m`, `\u001b[31mred\u001b[0m`},
		{"OSC title with BEL", "\x1b]0;pwned\x07", `\u001b]0;pwned\u0007`, `\u001b]0;pwned\u0007`},
		{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\x1b\\", `\u001b]52;c;cm0gLXJmIH4=\u001b\`, `\u001b]52;c;cm0gLXJmIH4=\u001b\`},
		{"C1 CSI as UTF-8", "a\u009b31mb", `a\u009b31mb`, `a\u009b31mb`},
		{"C1 CSI as a raw byte", "a\x9b31mb", `a\x9b31mb`, `a\x9b31mb`},
		{"DEL and backspace", "ab\b\x7f", `ab\u0008\u007f`, `ab\u0008\u007f`},
		{"line breaks and tabs", "a\tb\nc", `a\tb\nc`, "a\tb\nc"},
		{"CRLF kept in text", "a\r\nb", `a\r\nb`, "a\r\nb"},
		{"lone CR overwrites the line", "safe\rEVIL", `safe\rEVIL`, `safe\rEVIL`},
		{"CR at the end", "a\r", `a\r`, `a\r`},
		{"RLO reorders the line", "balance\u202etxt.exe", `balance\u202etxt.exe`, `balance\u202etxt.exe`},
		{"isolates", "\u2066x\u2069\u200e\u200f\u061c", `\u2066x\u2069\u200e\u200f\u061c`, `\u2066x\u2069\u200e\u200f\u061c`},
		{"line separator", "a\u2028b\u2029c", `a\u2028b\u2029c`, `a\u2028b\u2029c`},
		{"tag characters hide text", "ok\U000E0041\U000E0042", `ok\udb40\udc41\udb40\udc42`, `ok\udb40\udc41\udb40\udc42`},
		{"letters of every script stay", "zażółć ⚙ 日本 café", "zażółć ⚙ 日本 café", "zażółć ⚙ 日本 café"},
		{"U+FFFD stays", "a\uFFFDb", "a\uFFFDb", "a\uFFFDb"},
		{"truncated UTF-8", "a\xe2\x82", `a\xe2\x82`, `a\xe2\x82`},
		{"backslashes are left alone", `C:\u001b`, `C:\u001b`, `C:\u001b`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.line {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
			}
			if got := Text(tc.in); got != tc.text {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
			}
		})
	}
}

// A JSON document written through a Writer decodes to the same value.
func TestWriterKeepsJSON(t *testing.T) {
	v := map[string]any{"description": "\x1b[2J\u009b31m\u202e\x7f\U000E0041 \u2028 ok\n\t", "n": 1.5}
	data, err := json.MarshalIndent(v, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write(data)
	w.Flush()
	var got map[string]any
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out.Bytes())
	}
	if got["description"] != v["description"] {
		t.Errorf("description = %q, want %q", got["description"], v["description"])
	}
	checkSafe(t, out.Bytes(), true)
}

// A character split between two Writes is written whole; Flush writes an
// unfinished tail escaped.
func TestWriterSplits(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"rune split", []string{"a\xe2\x80", "\xaeb"}, `a\u202eb`},
		{"letter split", []string{"\xc5", "\xbc"}, "ż"},
		{"CR then LF", []string{"a\r", "\nb"}, "a\r\nb"},
		{"CR then text", []string{"a\r", "b"}, `a\rb`},
		{"unfinished at the end", []string{"a\xe2\x80"}, `a\xe2\x80`},
		{"CR at the end", []string{"a\r"}, `a\r`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			w := NewWriter(&out)
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("writes %q = %q, want %q", tc.writes, out.String(), tc.want)
			}
		})
	}
}

func TestRaw(t *testing.T) {
	var out bytes.Buffer
	if Raw(NewWriter(&out)) != &out || Raw(&out) != &out {
		t.Error("Raw does not return the underlying writer")
	}
}

// checkSafe fails when out holds what a terminal acts on.
func checkSafe(t *testing.T, out []byte, keepLines bool) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatalf("output is not valid UTF-8: %q", out)
	}
	for i, r := range string(out) {
		switch {
		case keepLines && (r == '\n' || r == '\t'):
		case keepLines && r == '\r' && strings.HasPrefix(string(out[i+1:]), "\n"):
		case Escaped(r):
			t.Fatalf("output holds %U at byte %d: %q", r, i, out)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31mred", "\x1b]0;t\x07", "a\u009bb", "a\x9bb", "\u202e", "a\r\nb\r", "\xe2\x80", "\U000E0041", "ż\t\n"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, cut uint8) {
		line, text := Line(string(in)), Text(string(in))
		checkSafe(t, []byte(line), false)
		checkSafe(t, []byte(text), true)
		if strings.ContainsAny(line, "\n\t\r") {
			t.Fatalf("Line(%q) = %q holds a line break or tab", in, line)
		}
		if Text(text) != text || Line(line) != line {
			t.Fatalf("escaping twice changes %q", in)
		}
		// A Writer given in as two Writes writes what Text does.
		k := int(cut) % (len(in) + 1)
		var out bytes.Buffer
		w := NewWriter(&out)
		w.Write(in[:k])
		w.Write(in[k:])
		w.Flush()
		if out.String() != text {
			t.Fatalf("Writer(%q | %q) = %q, Text = %q", in[:k], in[k:], out.String(), text)
		}
		if isPlain(string(in), true) && text != string(in) {
			t.Fatalf("Text changed plain %q", in)
		}
	})
}
