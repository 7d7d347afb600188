package discovery

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzAppendJSONString holds appendJSONString to [json.Marshal], appending
// after what dst already holds.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{
		"", "plain", `say "hi" \ back`, "a <b> & c", "tab\there\nnew\rline\b\f\x00\x1f\x7f",
		"zgłoszenie — 関数", "line\u2028para\u2029", "bad \xff\xfe utf8 \xe2\x82", "\xed\xa0\x80",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := appendJSONString([]byte("x"), s)
		if string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, json.Marshal gives %s", s, got[1:], want)
		}
	})
}

func TestAppendJSONStringAllocatesNothing(t *testing.T) {
	buf := make([]byte, 0, 256)
	s := "Create an <issue> & say \"hi\"\n in zgłoszenie"
	if n := testing.AllocsPerRun(100, func() { buf = appendJSONString(buf[:0], s) }); n != 0 {
		t.Errorf("appendJSONString allocates %v times, want 0", n)
	}
}

// FuzzDecodeAny holds decodeAny to [json.Unmarshal] into an any.
func FuzzDecodeAny(f *testing.F) {
	for _, s := range []string{
		``, ` `, `null`, `true`, `false`, `0`, `-0`, `1.5e3`, `1e400`, `-1e400`, `1e-400`, `[1,1e999]`,
		`"plain"`, `"esc \" \\ \/ \b \f \n \r \t"`, `"\u00e9\u20AC"`, `"\ud83d\ude00"`, `"\ud800"`,
		`"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud800\ud800\udc00"`, "\"bad \xff\xfe \xed\xa0\x80 \xef\xbf\xbd\"",
		`{"a":1,"a":{"b":[]},"c":[{},[],"x"]}`, ` { "k" : [ 1 , 2 ] } `, `{"a":1,}`, `[1 2]`, `{"\u0061":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want any
		wantErr := json.Unmarshal(data, &want)
		got, ok := decodeAny(data)
		if ok != (wantErr == nil) {
			t.Fatalf("decodeAny(%q) ok = %v, json.Unmarshal's error: %v", data, ok, wantErr)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeAny(%q) = %#v, json.Unmarshal gives %#v", data, got, want)
		}
	})
}

// FuzzSchemaInfo holds newSchemaInfo, which decodes a schema once, to the
// two functions it stands for: parametersJSON and schemaParams.
func FuzzSchemaInfo(f *testing.F) {
	for _, s := range []string{
		``, `null`, `[]`, `"x"`, `{}`, `{"type":"object"}`, `{"type":`,
		`{"type":"object","properties":{"b":{"type":"string","description":"a <b> & c\u2028"},"a":{"enum":["x",1.50,1e3]}}}`,
		`{"properties":{"repo":{"type":"object","properties":{"url":{"format":"uri","pattern":"^h"}},"items":{"format":"email"}}}}`,
		`{"a":1,"a":2}`, `{"x":"\ud800"}`,
		`{"n":[1e-7,1e-6,-0,0.1,1e20,1e21,123456789012345678901234,-2.5e-300,true,false,null,[],{}]}`,
		`{"z":{"b":{"d":1,"c":2},"a":[{"y":1,"x":2}]},"y":"<&>","é":1,"e":2,"E":3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got := newSchemaInfo(raw)
		params, accepts, err := schemaParams(raw)
		want := &schemaInfo{json: parametersJSON(raw), params: params, accepts: accepts, err: err}
		if string(got.json) != string(want.json) {
			t.Errorf("%q: json %q, parametersJSON gives %q", raw, got.json, want.json)
		}
		if !reflect.DeepEqual(got.params, want.params) || !reflect.DeepEqual(got.accepts, want.accepts) {
			t.Errorf("%q: params %+v accepts %+v, schemaParams gives %+v %+v", raw, got.params, got.accepts, want.params, want.accepts)
		}
		if fmt.Sprint(got.err) != fmt.Sprint(want.err) {
			t.Errorf("%q: error %v, schemaParams gives %v", raw, got.err, want.err)
		}
	})
}

// BenchmarkDecodeSchemas compares decodeAny with [json.Unmarshal] on the
// input schemas of the real MCP catalogs.
func BenchmarkDecodeSchemas(b *testing.B) {
	files, _ := filepath.Glob("../../examples/transfer/catalog/*.json")
	var schemas [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		var list struct {
			Tools []struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			b.Fatal(f, err)
		}
		for _, t := range list.Tools {
			schemas = append(schemas, t.InputSchema)
		}
	}
	if len(schemas) == 0 {
		b.Fatal("no schemas")
	}
	b.Run("decodeAny", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				if _, ok := decodeAny(s); !ok {
					b.Fatal("refused")
				}
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				var v any
				if err := json.Unmarshal(s, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
