package runtime

import (
	"encoding/json"
	"testing"
)

func TestDropStrictNulls(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"account":{"type":"string"},
		"limit":{"type":"integer"},
		"note":{"type":["string","null"]},
		"filter":{"type":"object","properties":{"since":{"type":"string"}}},
		"tags":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string"},"v":{"type":"string"}},"required":["k"]}}
	},"required":["account","limit"]}`)
	tests := []struct{ in, want string }{
		{`{"account":"A","limit":3}`, `{"account":"A","limit":3}`},
		{`{"account":"A","limit":null}`, `{"account":"A","limit":null}`}, // required: kept, so validation reports it
		{`{"account":"A","limit":3,"note":null}`, `{"account":"A","limit":3,"note":null}`},
		{`{"account":"A","limit":3,"filter":{"since":null}}`, `{"account":"A","filter":{},"limit":3}`},
		{`{"account":"A","limit":3,"filter":null}`, `{"account":"A","limit":3}`},
		{`{"account":"A","limit":3,"tags":[{"k":"a","v":null},{"k":null}]}`, `{"account":"A","limit":3,"tags":[{"k":"a"},{"k":null}]}`},
		{`not json`, `not json`},
		// Dropping a null must not touch the rest: a number keeps its
		// text (the gateway refuses one a double cannot hold), and a
		// member given twice stays for the gateway's strict parse to refuse.
		{`{"account":"A","limit":12345678901234567890,"filter":null}`, `{"account":"A","limit":12345678901234567890}`},
		{`{"account":"A","limit":1.0000000000000000001,"filter":null}`, `{"account":"A","limit":1.0000000000000000001}`},
		{`{"account":"A","account":"B","limit":3,"filter":null}`, `{"account":"A","account":"B","limit":3,"filter":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := string(dropStrictNulls(schema, json.RawMessage(tt.in)))
			if got != tt.want {
				t.Errorf("dropStrictNulls(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}
