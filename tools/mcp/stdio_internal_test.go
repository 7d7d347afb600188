package mcp

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestSkipNonJSON: lines that open no JSON value are dropped and reported,
// while every line of a message (one line, or pretty-printed over several
// whose continuation lines start with '"' or '}') passes through as written.
func TestSkipNonJSON(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		skipped        []string
	}{
		{
			name: "banner before a message",
			in:   "Server running on stdio\n{\"jsonrpc\":\"2.0\",\"id\":1}\n",
			want: "{\"jsonrpc\":\"2.0\",\"id\":1}\n", skipped: []string{"Server running on stdio\n"},
		},
		{
			name: "pretty-printed message",
			in:   "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\n    \"tools\": []\n  }\n}\nready\n",
			want: "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {\n    \"tools\": []\n  }\n}\n", skipped: []string{"ready\n"},
		},
		{
			name: "braces and escaped quotes in strings",
			in:   "{\"a\": \"} \\\" {\",\n\"b\": [\n1]}\nlog: done }\n",
			want: "{\"a\": \"} \\\" {\",\n\"b\": [\n1]}\n", skipped: []string{"log: done }\n"},
		},
		{
			name: "a stray closer does not keep what follows",
			in:   "{\"id\":1}\n}\nbanner\n[1]\n",
			want: "{\"id\":1}\n[1]\n", skipped: []string{"}\n", "banner\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var skipped []string
			r := skipNonJSON(strings.NewReader(tc.in), func(line []byte) { skipped = append(skipped, string(line)) })
			got, err := io.ReadAll(r)
			if err != nil || string(got) != tc.want || !slices.Equal(skipped, tc.skipped) {
				t.Errorf("skipNonJSON(%q) = %q, %v, skipped %q; want %q, skipped %q", tc.in, got, err, skipped, tc.want, tc.skipped)
			}
		})
	}
}

// FuzzSkipNonJSON: whatever a server writes, the lines passed on are
// input lines in their order, and every line that opens an object or an
// array is among them.
func FuzzSkipNonJSON(f *testing.F) {
	f.Add("banner\n{\"id\":1}\n")
	f.Add("{\n \"a\": \"}\\\"\",\n \"b\": [1,\n2]\n}\nx\n")
	f.Add("}}]]\n{\n\"x\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := io.ReadAll(skipNonJSON(strings.NewReader(in), func([]byte) {}))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(in, "\n")
		i := 0
		dropped := func(line string) {
			if first := strings.TrimLeft(line, " \t\r\n"); first != "" && (first[0] == '{' || first[0] == '[') {
				t.Fatalf("line %q opens a value and was dropped", line)
			}
		}
		for _, line := range strings.SplitAfter(string(got), "\n") {
			if line == "" {
				continue
			}
			for i < len(lines) && lines[i] != line {
				dropped(lines[i])
				i++
			}
			if i == len(lines) {
				t.Fatalf("output line %q is no input line in order; input %q, output %q", line, in, got)
			}
			i++
		}
		for ; i < len(lines); i++ {
			dropped(lines[i])
		}
	})
}

// FuzzListFilter: whatever a server answers to tools/list, the filter
// either passes the answer on as it came or returns one holding only
// tools of the answer; and it keeps each tool exactly when the SDK's
// client decodes a listing of it (sdkLists), so that a tool it keeps
// never fails the SDK's listing and one the SDK takes is never left out.
func FuzzListFilter(f *testing.F) {
	f.Add(`{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":1}],"nextCursor":"c"}`)
	f.Add(`{"tools":[{"name":"a","inputSchema":"x"}]}`)
	f.Add(`{"tools":[{"Name":"a","Title":1,"annotations":{"ReadOnlyHint":"x"}}]}`)
	f.Add(`{"tools":[{"name":"a","icons":[{"src":"i","sizes":[1]}],"_meta":{"k":1}}]}`)
	f.Add(`{"tools":null}`)
	f.Add(`[1]`)
	c := &listFilter{server: "s"}
	f.Fuzz(func(t *testing.T, in string) {
		out := c.validTools(json.RawMessage(in))
		listed := toolsOf(json.RawMessage(in)) // as validTools reads them
		for _, raw := range listed {
			_, err := sdkLists(t, `{"tools":[`+string(raw)+`]}`)
			if keep := keeps(string(raw)); keep != (err == nil) {
				t.Fatalf("listFilter keeps %s = %v, but the SDK's listing of it fails with %v", raw, keep, err)
			}
		}
		if string(out) == in {
			return
		}
		var res struct{ Tools []json.RawMessage }
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("validTools(%q) = %q, not a result: %v", in, out, err)
		}
		if len(res.Tools) >= len(listed) {
			t.Fatalf("validTools(%q) = %q: changed an answer without leaving a tool out", in, out)
		}
	})
}

// TestListFilterForgetsCancelledCalls: a tools/call the client cancels
// (its deadline passed: the SDK sends notifications/cancelled) is no
// longer noted, so a server that never answers cannot fill the filter's
// notes up to maxCallsNoted, past which results go unchecked; a call
// still running stays noted.
func TestListFilterForgetsCancelledCalls(t *testing.T) {
	f := newListFilter("s", nil)
	send := func(raw string) {
		t.Helper()
		m, err := jsonrpc.DecodeMessage([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		f.sent(m)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"act"}}`)
	send(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"act"}}`)
	send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"act"}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"context deadline exceeded"}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`)
	if len(f.calls) != 1 || !f.calls[int64(8)] {
		t.Errorf("noted calls = %v, want only 8: 7 and \"x\" were cancelled", f.calls)
	}
}
