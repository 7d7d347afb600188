package jcs

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestNumbers checks ECMAScript number serialization against
// testdata/numbers.txt: RFC 8785 Appendix B's samples and 3,000 random
// doubles, each with the string V8's Number.prototype.toString gives
// (testdata/gen_numbers.js).
func TestNumbers(t *testing.T) {
	f, err := os.Open("testdata/numbers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		hexBits, want, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("bad line %q", sc.Text())
		}
		bits, err := strconv.ParseUint(hexBits, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		v := math.Float64frombits(bits)
		got, err := AppendNumber(nil, v)
		if err != nil || string(got) != want {
			t.Errorf("AppendNumber(%s = %v) = %s, %v; want %s", hexBits, v, got, err, want)
		}
		// The canonical text parses back to the same double and is a fixed point.
		again, err := Canonicalize([]byte(want))
		if err != nil || string(again) != want {
			t.Errorf("Canonicalize(%s) = %s, %v; want itself", want, again, err)
		}
		n++
	}
	if n < 3000 {
		t.Fatalf("read %d number vectors, want at least 3000", n)
	}
}

func TestNumberRejects(t *testing.T) {
	for i, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if _, err := AppendNumber(nil, v); !errors.Is(err, ErrUnsupported) {
				t.Errorf("AppendNumber(%v) error = %v, want ErrUnsupported", v, err)
			}
		})
	}
}

// rfcOutputs are the canonical forms RFC 8785 prints for its examples
// (§3.2.2 and §3.2.3), independent of the generated output files.
var rfcOutputs = map[string]string{
	"values.json":  `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
	"sorting.json": "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
}

// TestRFCExamples canonicalizes testdata/input/*.json (the RFC's examples
// and the test files of its reference implementations) and compares with
// testdata/output, which the RFC's ECMAScript reference algorithm produced
// (testdata/gen_objects.js), and with the RFC's printed outputs.
func TestRFCExamples(t *testing.T) {
	files, err := filepath.Glob("testdata/input/*.json")
	if err != nil || len(files) < 7 {
		t.Fatalf("found %d input files (%v), want 7", len(files), err)
	}
	for _, in := range files {
		name := filepath.Base(in)
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata/output", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Canonicalize(data)
		if err != nil || string(got) != string(want) {
			t.Errorf("Canonicalize(%s) = %s, %v\nwant %s", name, got, err, want)
		}
		if rfc, ok := rfcOutputs[name]; ok && string(got) != rfc {
			t.Errorf("Canonicalize(%s) = %s\nwant (RFC 8785) %s", name, got, rfc)
		}
	}
}

// TestRandomObjects compares with 300 random objects (astral-plane keys,
// control characters, numbers across the exponent borders) canonicalized
// by the RFC's ECMAScript reference algorithm.
func TestRandomObjects(t *testing.T) {
	data, err := os.ReadFile("testdata/objects.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 600 {
		t.Fatalf("objects.txt has %d lines, want 600", len(lines))
	}
	for i := 0; i < len(lines); i += 2 {
		got, err := Canonicalize([]byte(lines[i]))
		if err != nil || string(got) != lines[i+1] {
			t.Errorf("Canonicalize(%s) = %s, %v\nwant %s", lines[i], got, err, lines[i+1])
		}
	}
}

func TestCompareUTF16(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"a", "b", -1},
		{"a", "a", 0},
		{"a", "ab", -1},
		{"", "a", -1},
		{"\U0001F600", "\uFB33", -1}, // D83D < FB33, though U+1F600 > U+FB33
		{"\uFB33", "\U0001F600", 1},
		{"\uE000", "\U00010000", 1}, // E000 > D800
		{"\U00010000", "\U00010001", -1},
		{"\u20ac", "\U0001F600", -1},
	}
	for _, tc := range tests {
		t.Run(tc.a, func(t *testing.T) {
			if got := CompareUTF16(tc.a, tc.b); got != tc.want {
				t.Errorf("CompareUTF16(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"duplicate member", `{"a":1,"a":2}`, ErrSyntax},
		{"duplicate after unescape", `{"a":1,"\u0061":2}`, ErrSyntax},
		{"lone high surrogate", `"\ud800"`, ErrSyntax},
		{"lone low surrogate", `"\udc00x"`, ErrSyntax},
		{"high then non-low", `"\ud800\u0041"`, ErrSyntax},
		{"invalid UTF-8", "\"\xff\"", ErrSyntax},
		{"raw control character", "\"a\x01\"", ErrSyntax},
		{"trailing data", `{} {}`, ErrSyntax},
		{"leading zero", `01`, ErrSyntax},
		{"bare dot", `1.`, ErrSyntax},
		{"empty exponent", `1e`, ErrSyntax},
		{"plus sign", `+1`, ErrSyntax},
		{"NaN literal", `NaN`, ErrSyntax},
		{"single quotes", `{'a':1}`, ErrSyntax},
		{"trailing comma", `[1,]`, ErrSyntax},
		{"unterminated", `{"a":`, ErrSyntax},
		{"empty", ``, ErrSyntax},
		{"bad escape", `"\x"`, ErrSyntax},
		{"too deep", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), ErrSyntax},
		{"number out of range", `1e400`, ErrUnsupported},
		{"negative out of range", `[-1e309]`, ErrUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Canonicalize([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: Canonicalize(%.40q) error = %v, want %v", tc.name, tc.in, err, tc.want)
			}
		})
	}
	deep := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Canonicalize([]byte(deep)); err != nil {
		t.Errorf("Canonicalize(%d nested arrays) = %v, want ok", MaxDepth, err)
	}
}

func TestCanonicalizeSmall(t *testing.T) {
	tests := []struct{ in, want string }{
		{` { "b" : 1 , "a" : [ true , null , "x" ] } `, `{"a":[true,null,"x"],"b":1}`},
		{`-0`, `0`},
		{`1E2`, `100`},
		{`100.10`, `100.1`},
		{`1e-400`, `0`},
		{`"\u00e9\u2028/"`, "\"é\u2028/\""},
		{`"\b\f\n\r\t\u0001\u001F"`, `"\b\f\n\r\t\u0001\u001f"`},
		{`{"amount":"1000.00","source_account":"ACC-00001"}`, `{"amount":"1000.00","source_account":"ACC-00001"}`},
		{`12345678901234567890`, `12345678901234567000`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if err != nil || string(got) != tc.want {
				t.Errorf("Canonicalize(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestAppendGoValues(t *testing.T) {
	got, err := Append(nil, map[string]any{"f": 1.5, "i": 3, "n": int64(-4), "r": json.RawMessage(`{"z":1,"y":2}`), "g": float32(0.5)})
	want := `{"f":1.5,"g":0.5,"i":3,"n":-4,"r":{"y":2,"z":1}}`
	if err != nil || string(got) != want {
		t.Errorf("Append(Go values) = %s, %v; want %s", got, err, want)
	}
	if _, err := Append(nil, struct{}{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Append(struct{}{}) error = %v, want ErrUnsupported", err)
	}
}

// FuzzCanonicalize checks, for any input that canonicalizes: the output is
// a fixed point (canonicalizing it again is the identity), and it denotes
// the same JSON value as the input.
func FuzzCanonicalize(f *testing.F) {
	files, _ := filepath.Glob("testdata/input/*.json")
	for _, in := range files {
		data, _ := os.ReadFile(in)
		f.Add(data)
	}
	for _, s := range []string{`{}`, `[]`, `0`, `-0.0`, `1e21`, `1e-7`, `"\ud83d\ude00"`, `{"a":{"b":[1,2,{"c":null}]}}`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameCheck(t, data)
		out, err := Canonicalize(data)
		if err != nil {
			return
		}
		again, err := Canonicalize(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("Canonicalize(Canonicalize(%q)) = %q, %v; want %q", data, again, err, out)
		}
		var a, b any
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatalf("encoding/json rejects %q that jcs accepted: %v", data, err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("canonical output %q does not parse: %v", out, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("Canonicalize(%q) = %q: value %v differs from input %v", data, out, b, a)
		}
	})
}

// TestParseErrorMessages pins what follows a member or an element: the
// message and the offset of each way it can be wrong.
func TestParseErrorMessages(t *testing.T) {
	for _, c := range []struct {
		in, msg string
		offset  int
	}{
		{`{"a":1`, "unterminated object", 6},
		{`{"a":1 x`, "expected ',' or '}'", 7},
		{`[1`, "unterminated array", 2},
		{`[1 }`, "expected ',' or ']'", 3},
		{`x`, `unexpected character 'x'`, 0},
		{"\uFEFF{}", "unexpected byte order mark (U+FEFF)", 0},
		{`[1,é]`, `unexpected character 'é'`, 3},
		{"[1,\xff]", "unexpected byte 0xff, not UTF-8", 3},
		{`"\x"`, `invalid escape \x`, 3},
		{"\"\\\n\"", `invalid escape: '\' before byte 0x0a`, 3},
		{"\"\\\xff\"", `invalid escape: '\' before byte 0xff`, 3},
	} {
		t.Run(c.in, func(t *testing.T) {
			_, err := Parse([]byte(c.in))
			var se *SyntaxError
			if !errors.As(err, &se) || se.Msg != c.msg || se.Offset != c.offset {
				t.Errorf("Parse(%q) = %v, want offset %d: %s", c.in, err, c.offset, c.msg)
			}
		})
	}
}

// sameCheck fails t unless Check and [CheckMembers] report about data what
// Parse does, and [CheckMembers] gives a valid object's members as
// encoding/json decodes them into [json.RawMessage] values.
func sameCheck(t *testing.T, data []byte) {
	t.Helper()
	_, want := Parse(data)
	if got := Check(data); !reflect.DeepEqual(got, want) {
		t.Fatalf("Check(%q) = %v, Parse's error %v", data, got, want)
	}
	var names []string
	members := map[string]json.RawMessage{}
	got := CheckMembers(data, func(name, value []byte) error {
		names = append(names, string(name))
		members[string(name)] = append(json.RawMessage(nil), value...)
		return nil
	})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CheckMembers(%q) = %v, Parse's error %v", data, got, want)
	}
	var obj map[string]json.RawMessage
	if want != nil || json.Unmarshal(data, &obj) != nil {
		return
	}
	if len(names) != len(obj) || !reflect.DeepEqual(members, obj) {
		t.Fatalf("CheckMembers(%q) gave %q = %q; encoding/json %q", data, names, members, obj)
	}
}

// TestCheckMembers: the members of a top-level object only, in order,
// their values as written, and the callback's error returned as it is.
func TestCheckMembers(t *testing.T) {
	data := []byte(" { \"a\" : [1, {\"x\":2}] ,\"b\\u0021\":\"s\"\t,\"c\":{\"d\":null} } ")
	var got []string
	if err := CheckMembers(data, func(name, value []byte) error {
		got = append(got, string(name)+"="+string(value))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{`a=[1, {"x":2}]`, `b!="s"`, `c={"d":null}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("members %q, want %q", got, want)
	}
	stop := errors.New("stop")
	calls := 0
	err := CheckMembers(data, func(name, value []byte) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("a failing callback: %v after %d calls, want %v after 1", err, calls, stop)
	}
	if err := CheckMembers([]byte(`[{"a":1}]`), func(name, value []byte) error {
		t.Errorf("member %s of an array's object", name)
		return nil
	}); err != nil {
		t.Error(err)
	}
}

func TestCheckIsParse(t *testing.T) {
	files, _ := filepath.Glob("testdata/input/*.json")
	if len(files) == 0 {
		t.Fatal("no testdata/input/*.json")
	}
	var ins [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, data)
	}
	// Duplicates among few members and among more than Check compares
	// one by one, with and without escapes, at every depth; and each way
	// a document can be wrong.
	many := `"a0":0`
	for i := 1; i < 40; i++ {
		many += fmt.Sprintf(`,"a%d":%d`, i, i)
	}
	for _, s := range []string{
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":{"b":[{"c":1,"c":2}]}}`, `[{"a":1},{"a":1}]`,
		"{" + many + "}", "{" + many + `,"a39":1}`, "{" + many + `,"a3":1}`, "{" + many + `,"\u00613":1}`,
		`{"a":1`, `{"a":1 x`, `[1`, `[1 }`, `{1:2}`, `{"a" 1}`, `"\ud800"`, "\"\xff\"", `1.`, `1e`, `-`, `[1] 2`,
		`"a\qb"`, "\"a\x01\"", `{"a":tru}`, "", " ", strings.Repeat("[", MaxDepth+1),
	} {
		ins = append(ins, []byte(s))
	}
	for _, in := range ins {
		sameCheck(t, in)
	}
	if err := Check([]byte(`{"a":1,"b":{"a":2}}`)); err != nil {
		t.Errorf("Check of a valid document: %v", err)
	}
	if err := Check([]byte(`{"k":1,"k":2}`)); !errors.Is(err, ErrSyntax) {
		t.Errorf("Check of a duplicate = %v, want a syntax error", err)
	}
}

func BenchmarkCheck(b *testing.B) {
	data := []byte(`{"name":"create_issue","description":"Create a new issue in a repository","inputSchema":{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}}},"required":["owner","repo","title"]}}`)
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = Parse(data)
		}
	})
	b.Run("Check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Check(data)
		}
	})
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"duplicate", `{"a":1,"a":2}`, `at offset 10: duplicate member name "a"`},
		{"empty", ``, `at offset 0: unexpected end of input`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if got := Describe(err); got != tc.want {
				t.Errorf("Describe(Parse(%q)) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := Describe(ErrUnsupported); got != "" {
		t.Errorf("Describe(ErrUnsupported) = %q, want \"\"", got)
	}
}
