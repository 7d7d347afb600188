package grammar

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// toAny converts a decoded value into what encoding/json produces with
// UseNumber.
func toAny(v *jsonValue) any {
	switch v.kind {
	case jsonNull:
		return nil
	case jsonBool:
		return v.b
	case jsonNumber:
		return json.Number(v.s)
	case jsonString:
		return v.s
	case jsonArray:
		out := make([]any, len(v.arr))
		for i, e := range v.arr {
			out[i] = toAny(e)
		}
		return out
	}
	out := make(map[string]any, len(v.keys))
	for i, k := range v.keys {
		out[k] = toAny(v.vals[i])
	}
	return out
}

var decodeCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e-3`, `-12E+4`, `"a"`, ` {"a" : [1, "x", null, {"b":false}] } `,
	`"\u00e9\ud83d\ude00\n\t\"\\\/"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, "\"\xff\xfe\"", "\"a\xc3\"",
	`{"a":1,"a":2}`, `[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `-`, `1e`, `tru`, `nul`, `"abc`, "\"a\x01\"", `"\x"`,
	`{"a" 1}`, `{1:2}`, `[1 2]`, `{} {}`, `  `, `"\u12"`, `[` + strings.Repeat(`[`, 600) + strings.Repeat(`]`, 601),
}

// TestDecodeJSONAgreesWithEncodingJSON: the schema decoder accepts what
// encoding/json accepts, except repeated member names and nesting beyond
// maxJSONDepth, and decodes to the same values.
func TestDecodeJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range decodeCases {
		checkDecode(t, []byte(in))
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, in := range decodeCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		checkDecode(t, data)
	})
}

func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	got, err := decodeJSON(data)
	valid := json.Valid(data)
	if err != nil {
		if valid && !strings.Contains(err.Error(), "appears twice") && !strings.Contains(err.Error(), "nested more than") {
			t.Errorf("decodeJSON(%q) = %v; encoding/json accepts it", data, err)
		}
		return
	}
	if !valid {
		t.Fatalf("decodeJSON(%q) accepted what encoding/json refuses", data)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if g := toAny(got); !reflect.DeepEqual(g, want) {
		t.Errorf("decodeJSON(%q) = %#v, encoding/json = %#v", data, g, want)
	}
}

// TestDecodeJSONNamesTheCharacter: an unexpected character is named as
// written, not by its first byte read as Latin-1 ('ï' for a byte order
// mark, 'Ã' for an é).
func TestDecodeJSONNamesTheCharacter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"byte order mark", "\uFEFF{\"type\":\"object\"}", "invalid JSON at byte 0: unexpected byte order mark (U+FEFF)"},
		{"accented", `{"a":é}`, "invalid JSON at byte 5: unexpected character 'é'"},
		{"escape", `{"a":"\x"}`, "invalid JSON at byte 8: invalid escape \\x"},
		{"escaped newline", "{\"a\":\"\\\n\"}", "invalid JSON at byte 8: invalid escape: '\\' before byte 0x0a"},
		{"escaped non-ASCII", "{\"a\":\"\\\xff\"}", "invalid JSON at byte 8: invalid escape: '\\' before byte 0xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeJSON([]byte(tc.in)); err == nil || err.Error() != tc.want {
				t.Errorf("decodeJSON(%q) = %v, want %q", tc.in, err, tc.want)
			}
		})
	}
}
