package jsonsyntax

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validCases are inputs on which encoding/json.Valid's answer is easy to
// get wrong: Valid must give the same one.
var validCases = []struct {
	name, in string
}{
	{"empty", ""},
	{"space only", " \t\r\n"},
	{"null", "null"},
	{"literals in an array", `[true,false,null]`},
	{"short literal", "nul"},
	{"literal with a tail", "nullx"},
	{"capital literal", "True"},
	{"numbers", `[0,-0,1.5,-2e10,3E+2,4e-3,10]`},
	{"leading zero", "01"},
	{"minus alone", "-"},
	{"point without digits", "1."},
	{"exponent without digits", "1e+"},
	{"plus sign", "+1"},
	{"empty object and array", `{"a":{},"b":[]}`},
	{"spaces everywhere", " { \"a\" : [ 1 , 2 ] , \"b\" : { } } "},
	{"trailing comma in array", "[1,]"},
	{"trailing comma in object", `{"a":1,}`},
	{"missing colon", `{"a" 1}`},
	{"key not a string", `{1:2}`},
	{"unclosed array", "[1"},
	{"unclosed object", `{"a":1`},
	{"wrong closer", `[1}`},
	{"two values", "1 2"},
	{"escapes", `"\" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"`},
	{"lone surrogate escape", `"\ud800"`},
	{"bad escape", `"\x"`},
	{"short unicode escape", `"\u12"`},
	{"non-hex unicode escape", `"\u12g4"`},
	{"backslash at the end", `"\`},
	{"control byte in a string", "\"a\x01b\""},
	{"tab in a string", "\"a\tb\""},
	{"DEL and high bytes", "\"\x7f\xff\xfe\""},
	{"invalid UTF-8 outside a string", "\xff"},
	{"unterminated string", `"abc`},
	{"comment", "/* */ 1"},
	{"NUL after the value", "1\x00"},
	{"a schema", `{"type":"object","properties":{"q":{"type":"string","description":"the \"query\""}},"required":["q"]}`},
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		t.Run(c.name, func(t *testing.T) {
			if got, want := Valid([]byte(c.in)), json.Valid([]byte(c.in)); got != want {
				t.Errorf("Valid(%q) = %v, encoding/json says %v", c.in, got, want)
			}
		})
	}
}

// nest wraps inner in depth pairs of open and close.
func nest(open, inner, close string, depth int) []byte {
	return []byte(strings.Repeat(open, depth) + inner + strings.Repeat(close, depth))
}

func TestValidDepth(t *testing.T) {
	cases := map[string]struct {
		in   []byte
		want bool
	}{
		"arrays at the limit":  {nest("[", "1", "]", MaxDepth), true},
		"arrays past it":       {nest("[", "1", "]", MaxDepth+1), false},
		"objects at the limit": {nest(`{"a":`, "1", "}", MaxDepth), true},
		"objects past it":      {nest(`{"a":`, "1", "}", MaxDepth+1), false},
		"empty array past it":  {nest("[", "", "]", MaxDepth+1), false},
		"empty object at it":   {nest("[", "{}", "]", MaxDepth-1), true},
		"empty object past it": {nest("[", "{}", "]", MaxDepth), false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Valid(c.in); got != c.want {
				t.Errorf("Valid = %v, want %v", got, c.want)
			}
			if got := json.Valid(c.in); got != c.want {
				t.Errorf("encoding/json.Valid = %v: MaxDepth no longer matches it", got)
			}
		})
	}
}

// FuzzValid holds Valid to encoding/json.Valid on any input.
func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c.in))
	}
	f.Add([]byte(strings.Repeat("[", 70) + strings.Repeat("]", 70)))
	f.Fuzz(func(t *testing.T, in []byte) {
		if got, want := Valid(in), json.Valid(in); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", in, got, want)
		}
	})
}

// BenchmarkValid compares Valid with encoding/json.Valid on the input
// schemas of the real MCP catalogs, one tools/list file after another.
func BenchmarkValid(b *testing.B) {
	files, _ := filepath.Glob("../../examples/transfer/catalog/*.json")
	var docs [][]byte
	size := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, data)
		size += len(data)
	}
	if len(docs) == 0 {
		b.Fatal("no catalog files")
	}
	for _, bc := range []struct {
		name  string
		valid func([]byte) bool
	}{{"jsonsyntax", Valid}, {"encoding-json", json.Valid}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, d := range docs {
					if !bc.valid(d) {
						b.Fatal("invalid")
					}
				}
			}
		})
	}
}
