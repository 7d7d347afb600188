package mcp

import (
	"bufio"
	"cmp"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// filterSSE passes stream through an sseFilter of at most max bytes an
// event, whose filter awaits the answers to tools/list requests of the
// IDs lists, read one byte at a time through a 16-byte buffer (lines
// longer than it arrive in pieces); it returns what came out and the
// tools left out.
func filterSSE(t testing.TB, stream string, max int, lists ...int64) (string, []error) {
	t.Helper()
	rejects := &listRejects{}
	f := newListFilter("s", rejects)
	for _, n := range lists {
		id, err := jsonrpc.MakeID(float64(n))
		if err != nil {
			t.Fatal(err)
		}
		f.sent(&jsonrpc.Request{ID: id, Method: "tools/list"})
	}
	s := &sseFilter{src: bufio.NewReaderSize(strings.NewReader(stream), 16), body: io.NopCloser(nil), filter: f, max: max}
	out, err := io.ReadAll(iotest.OneByteReader(s))
	if err != nil {
		t.Fatalf("reading the filtered stream: %v", err)
	}
	return string(out), rejects.take()
}

// TestSSEFilter: in a text/event-stream, the event answering a pending
// tools/list request gets its data rewritten without the tools the SDK
// would refuse (one data line, its other lines kept), whether its data
// comes on one line or several, ends in "\r\n", or ends the stream
// without an empty line; every other byte of the stream passes as it
// came: comments, other events and messages, an event of another name
// (which the SDK ignores), and an event over the bound with what follows.
func TestSSEFilter(t *testing.T) {
	const (
		bad  = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":2}]}}`
		good = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`
		note = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	)
	for _, tc := range []struct {
		name, in, want string
		max            int
		lists          []int64
		rejects        int
	}{
		{name: "no list pending", in: ": hi\nid: 1\ndata: " + bad + "\r\n\r\n", want: ": hi\nid: 1\ndata: " + bad + "\r\n\r\n"},
		{
			name: "answer of a pending list", lists: []int64{1}, rejects: 1,
			in:   ": hi\nid: 7\nevent: message\ndata: " + bad + "\r\n\r\ndata: " + note + "\n\n",
			want: ": hi\nid: 7\nevent: message\ndata: " + good + "\n\r\ndata: " + note + "\n\n",
		},
		{
			name: "data over several lines", lists: []int64{1}, rejects: 1,
			in:   "data: " + strings.Replace(bad, `"result":`, "\"result\":\ndata:", 1) + "\nid: 3\n\n",
			want: "data: " + good + "\nid: 3\n\n",
		},
		{name: "at the end of the stream", lists: []int64{1}, rejects: 1, in: "data: " + bad, want: "data: " + good + "\n"},
		{name: "answer of another request", lists: []int64{2}, in: "data: " + bad + "\n\n", want: "data: " + bad + "\n\n"},
		{name: "event of another name", lists: []int64{1}, in: "event: ping\ndata: " + bad + "\n\n", want: "event: ping\ndata: " + bad + "\n\n"},
		{
			name: "event over the bound", lists: []int64{1}, max: 40,
			in: "data: " + bad + "\n\ndata: " + bad + "\n\n", want: "data: " + bad + "\n\ndata: " + bad + "\n\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rejects := filterSSE(t, tc.in, cmp.Or(tc.max, maxListBody), tc.lists...)
			if got != tc.want || len(rejects) != tc.rejects {
				t.Errorf("filter(%q) = %q, %d tools left out; want %q, %d", tc.in, got, len(rejects), tc.want, tc.rejects)
			}
		})
	}
}

// FuzzSSEFilter: whatever a server streams, the filter passes it on byte
// for byte unless it left a tool out of a pending listing's answer.
func FuzzSSEFilter(f *testing.F) {
	f.Add(": hi\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"a\"},{\"name\":2}]}}\r\n\r\n")
	f.Add("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n\nevent: x\ndata: 1\n")
	f.Add("data\n\ndata:\n\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		got, rejects := filterSSE(t, in, 256, 1)
		if len(rejects) == 0 && got != in {
			t.Fatalf("filter(%q) = %q, with no tool left out", in, got)
		}
	})
}
