package grammar

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/internal/golden"
)

func financeTools(t testing.TB) []EnvelopeTool {
	var out []EnvelopeTool
	for _, n := range []string{"get_balance", "list_transactions", "transfer_funds", "issue_full_refund"} {
		data, err := os.ReadFile("testdata/schema/finance_" + n + ".json")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, EnvelopeTool{Name: n, Schema: data})
	}
	return out
}

func TestEnvelope(t *testing.T) {
	ts := append(financeTools(t), EnvelopeTool{Name: "broken", Schema: json.RawMessage(`{"type":`)},
		EnvelopeTool{Name: "impossible", Schema: json.RawMessage(`false`)})
	res, err := Envelope(ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Tools, ","); got != "get_balance,list_transactions,transfer_funds,issue_full_refund" {
		t.Errorf("Tools = %s", got)
	}
	if len(res.Excluded) != 2 || res.Excluded[0].Name != "broken" || !errors.Is(res.Excluded[0].Err, ErrInvalidSchema) ||
		res.Excluded[1].Name != "impossible" || !errors.Is(res.Excluded[1].Err, ErrUnsatisfiable) {
		t.Errorf("Excluded = %+v, want broken (invalid) and impossible (unsatisfiable)", res.Excluded)
	}
	golden.Check(t, "testdata/envelope/finance.gbnf", []byte(res.GBNF))
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"action":"call","tool":"transfer_funds","arguments":{"source_account":"ACC-00001","target_account":"ACC-00002","amount":12.5}}`, true},
		{`{"action": "call", "tool": "get_balance", "arguments": {"account": "ACC-00003"}}`, true},
		{`{"action":"answer","text":"Your balance is 1000.00 USD."}`, true},
		{`{"action":"find_tools","query":"refund a payment"}`, true},
		{`{"action":"call","tool":"get_balance","arguments":{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1}}`, false},
		{`{"action":"call","tool":"broken","arguments":{}}`, false},
		{`{"action":"call","tool":"delete_everything","arguments":{}}`, false},
		{`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00003","admin":true}}`, false},
		{`{"action":"answer"}`, false},
		{`{"tool":"get_balance","action":"call","arguments":{"account":"ACC-00003"}}`, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := accepts(t, res.GBNF, tc.in); got != tc.want {
				t.Errorf("envelope accepts %s = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestEnvelopeBranches(t *testing.T) {
	res, err := Envelope(financeTools(t)[:1], &Options{NoAnswer: true, NoFindTools: true})
	if err != nil {
		t.Fatal(err)
	}
	if accepts(t, res.GBNF, `{"action":"answer","text":"x"}`) || accepts(t, res.GBNF, `{"action":"find_tools","query":"x"}`) {
		t.Errorf("NoAnswer/NoFindTools envelope admits the disabled branches:\n%s", res.GBNF)
	}
	// No tool compiles: the call branch is absent, never unconstrained.
	res, err = Envelope([]EnvelopeTool{{Name: "bad", Schema: json.RawMessage(`false`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accepts(t, res.GBNF, `{"action":"call","tool":"bad","arguments":{}}`) || strings.Contains(res.GBNF, `"call"`) {
		t.Errorf("envelope without compiled tools has a call branch:\n%s", res.GBNF)
	}
	if _, err := Envelope([]EnvelopeTool{{Name: "bad", Schema: json.RawMessage(`false`)}}, &Options{NoAnswer: true, NoFindTools: true}); !errors.Is(err, ErrNoTools) {
		t.Errorf("Envelope with nothing left: error = %v, want ErrNoTools", err)
	}
	for _, name := range []string{"has space", "", strings.Repeat("x", 65), "ünï"} {
		t.Run(name, func(t *testing.T) {
			if _, err := Envelope([]EnvelopeTool{{Name: name}}, nil); !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("Envelope(name %q) error = %v, want ErrInvalidSchema", name, err)
			}
		})
	}
	if _, err := Envelope([]EnvelopeTool{{Name: "a"}, {Name: "a"}}, nil); !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("Envelope with a repeated name: error = %v, want ErrInvalidSchema", err)
	}
	// Strict mode leaves relaxed tools out.
	res, err = Envelope([]EnvelopeTool{{Name: "u", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"array","uniqueItems":true}}}`)}}, &Options{Strict: true})
	if err != nil || len(res.Excluded) != 1 || !errors.Is(res.Excluded[0].Err, ErrRelaxed) {
		t.Errorf("strict envelope = %+v, %v; want the relaxed tool excluded", res, err)
	}
}

func TestEnvelopeSchemaBindsArguments(t *testing.T) {
	ts := append(financeTools(t), EnvelopeTool{Name: "defs", Schema: json.RawMessage(`{"$defs":{"id":{"type":"integer"}},"type":"object","properties":{"id":{"$ref":"#/$defs/id"}},"required":["id"]}`)})
	spec, relax, err := EnvelopeSchema(ts, nil)
	if err != nil || len(relax) != 0 {
		t.Fatalf("EnvelopeSchema = %v, %v", relax, err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(spec)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("envelope.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("envelope.json")
	if err != nil {
		t.Fatalf("envelope schema does not compile: %v\n%s", err, spec)
	}
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"action":"call","tool":"get_balance","arguments":{"account":"ACC-00001"}}`, true},
		{`{"action":"call","tool":"transfer_funds","arguments":{"account":"ACC-00001"}}`, false},
		{`{"action":"call","tool":"defs","arguments":{"id":3}}`, true},
		{`{"action":"call","tool":"defs","arguments":{"id":"3"}}`, false},
		{`{"action":"answer","text":"hi"}`, true},
		{`{"action":"find_tools","query":"q"}`, true},
		{`{"action":"call","tool":"nope","arguments":{}}`, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v, _ := jsonschema.UnmarshalJSON(strings.NewReader(tc.in))
			if got := sch.Validate(v) == nil; got != tc.want {
				t.Errorf("envelope schema validates %s = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestOpenAIStrict(t *testing.T) {
	spec, relax, err := OpenAIStrict([]byte(`{"type":"object","properties":{
		"q":{"type":"string","minLength":3},
		"n":{"type":"integer","minimum":1},
		"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"}}}},
		"mode":{"oneOf":[{"const":"a"},{"const":"b"}]}
	},"required":["q"],"additionalProperties":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"q":{"type":"string","description":"minLength: 3"},"n":{"type":["integer","null"],"minimum":1},"tags":{"type":["array","null"],"items":{"type":"object","properties":{"k":{"type":["string","null"]}},"required":["k"],"additionalProperties":false}},"mode":{"anyOf":[{"const":"a"},{"const":"b"},{"type":"null"}]}},"required":["q","n","tags","mode"],"additionalProperties":false}`
	if string(spec) != want {
		t.Errorf("OpenAIStrict =\n%s\nwant\n%s", spec, want)
	}
	var kws []string
	for _, r := range relax {
		kws = append(kws, r.Keyword)
	}
	if got := strings.Join(kws, ","); got != "minLength,oneOf,additionalProperties" {
		t.Errorf("relaxations = %v", relax)
	}
	for _, tc := range []struct {
		name, schema string
	}{
		{"enum values", fmt.Sprintf(`{"type":"object","properties":{"e":{"enum":[%s]}}}`, strings.TrimSuffix(strings.Repeat(`1,`, 1001), ","))},
		{"nesting", `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"object","properties":{"a":`, 10) + `{"type":"string"}` + strings.Repeat(`}}`, 10) + `}}`},
		{"properties", func() string {
			var b strings.Builder
			b.WriteString(`{"type":"object","properties":{`)
			for i := 0; i < 5001; i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `"p%d":{"type":"string"}`, i)
			}
			b.WriteString(`}}`)
			return b.String()
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := OpenAIStrict([]byte(tc.schema)); !errors.Is(err, ErrLimit) {
				t.Errorf("OpenAIStrict over the %s limit: error = %v, want ErrLimit", tc.name, err)
			}
		})
	}
	if _, _, err := OpenAIStrict([]byte(`[1]`)); !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("OpenAIStrict([1]) error = %v, want ErrInvalidSchema", err)
	}
}

func ExampleEnvelope() {
	res, err := Envelope([]EnvelopeTool{
		{Name: "get_weather", Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
	}, &Options{Compact: true, NoFindTools: true})
	if err != nil {
		panic(err)
	}
	fmt.Print(res.GBNF)
	// Output:
	// root ::= "{\"action\":" (call | answer) "}"
	// call ::= "\"call\",\"tool\":\"get_weather\",\"arguments\":" get-weather-args
	// answer ::= "\"answer\",\"text\":" answer-text
	// get-weather-args ::= "{\"city\":" string "}"
	// answer-text ::= "\"" json-char{0,600} "\""
	// string ::= "\"" json-char{0,1000} "\""
	// json-char ::= [^\x00-\x1F"\\] | "\\" json-escape
	// json-escape ::= ["/\\bfnrt] | "u" ([0-9A-CEFa-cef] [0-9A-Fa-f] [0-9A-Fa-f] [0-9A-Fa-f] | [Dd] [0-7] [0-9A-Fa-f] [0-9A-Fa-f]) | "u" [Dd] [89ABab] [0-9A-Fa-f] [0-9A-Fa-f] "\\u" [Dd] [C-Fc-f] [0-9A-Fa-f] [0-9A-Fa-f]
}
