package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// frameSeeds are frames of every class checkFrame sorts.
var frameSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"a","result":{}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}`,
	`null`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `garbage`, `{"jsonrpc":"1.0","id":3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":4,"id":5,"method":"ping"}`, `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, `{"jsonrpc":"2.0","id":6}`,
}

func TestCheckFrame(t *testing.T) {
	for _, tc := range []struct {
		frame string
		ok    bool
		code  int
		id    string
	}{
		{frameSeeds[0], true, 0, ""},
		{frameSeeds[1], true, 0, ""},
		{frameSeeds[2], true, 0, ""},
		{frameSeeds[3], true, 0, ""},
		{`null`, false, jsonrpc.CodeInvalidRequest, "null"},
		{`[]`, false, jsonrpc.CodeInvalidRequest, "null"},
		{frameSeeds[6], false, jsonrpc.CodeInvalidRequest, "null"},
		{`garbage`, false, jsonrpc.CodeParseError, "null"},
		{`{"jsonrpc":"2.0"`, false, jsonrpc.CodeParseError, "null"},
		{frameSeeds[8], false, jsonrpc.CodeInvalidRequest, "3"},
		{frameSeeds[9], false, jsonrpc.CodeInvalidRequest, "5"},
		{frameSeeds[10], false, jsonrpc.CodeInvalidRequest, "null"},
		{frameSeeds[11], false, jsonrpc.CodeInvalidRequest, "6"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, false, jsonrpc.CodeInvalidRequest, "null"},
		{`{"jsonrpc":"2.0","id":"q","result":1,"error":{"code":1,"message":"m"}}`, false, jsonrpc.CodeInvalidRequest, `"q"`},
	} {
		t.Run(tc.id, func(t *testing.T) {
			reply, ok := checkFrame([]byte(tc.frame))
			if ok != tc.ok {
				t.Errorf("checkFrame(%s) ok = %v, want %v (reply %s)", tc.frame, ok, tc.ok, reply)
				return
			}
			if ok {
				return
			}
			var r struct {
				Version string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct{ Code int }
			}
			if err := json.Unmarshal(reply, &r); err != nil || r.Version != "2.0" || r.Error.Code != tc.code || string(r.ID) != tc.id {
				t.Errorf("checkFrame(%s) = %s, want error %d with id %s", tc.frame, reply, tc.code, tc.id)
			}
		})
	}
}

// pump runs pumpFrames over in and returns what it forwarded and replied.
func pump(in string, max int) (forwarded, replies string) {
	pr, pw := io.Pipe()
	var out bytes.Buffer
	go pumpFrames(strings.NewReader(in), pw, &out, max)
	b, _ := io.ReadAll(pr)
	return string(b), out.String()
}

func TestPumpFrames(t *testing.T) {
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	big := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"p":"` + strings.Repeat("x", 300) + `"}}`
	huge := strings.Repeat("y", 200000) // beyond the reader's buffer too
	for _, tc := range []struct {
		name, in, forwarded string
		replies             int
	}{
		{"one frame", ping + "\n", ping + "\n", 0},
		{"CRLF and blank lines", "\r\n" + ping + "\r\n\n  \n", ping + "\n", 0},
		{"a last frame without a newline", ping, ping + "\n", 0},
		{"a bad frame between good ones", ping + "\nnull\n" + ping + "\n", ping + "\n" + ping + "\n", 1},
		{"a frame over the limit", big + "\n" + ping + "\n", ping + "\n", 1},
		{"a huge frame", huge + "\n" + ping + "\n", ping + "\n", 1},
		{"a huge last frame", ping + "\n" + huge, ping + "\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fwd, rep := pump(tc.in, 256)
			n := strings.Count(rep, "\n")
			if fwd != tc.forwarded || n != tc.replies {
				t.Errorf("%s: forwarded %.80q with %d replies %.200q; want %.80q and %d", tc.name, fwd, n, rep, tc.forwarded, tc.replies)
			}
		})
	}
}

func FuzzCheckFrame(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		frame = bytes.TrimSpace(frame)
		if len(frame) == 0 || bytes.ContainsRune(frame, '\n') {
			return
		}
		reply, ok := checkFrame(frame)
		if ok {
			if _, err := jsonrpc.DecodeMessage(frame); err != nil {
				t.Fatalf("checkFrame passed %q, which the SDK cannot decode: %v", frame, err)
			}
			return
		}
		var r struct {
			Version string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct{ Code int }
		}
		if !bytes.HasSuffix(reply, []byte("\n")) || bytes.Count(reply, []byte("\n")) != 1 ||
			json.Unmarshal(reply, &r) != nil || r.Version != "2.0" || r.Error == nil ||
			(r.Error.Code != jsonrpc.CodeParseError && r.Error.Code != jsonrpc.CodeInvalidRequest) {
			t.Fatalf("checkFrame(%q) replied %q, not one JSON-RPC error line", frame, reply)
		}
	})
}

// FuzzPumpFrames: whatever arrives, every forwarded line passes checkFrame,
// every reply is one JSON-RPC error line, and the pump ends with its input.
func FuzzPumpFrames(f *testing.F) {
	f.Add(strings.Join(frameSeeds, "\n"))
	f.Add("null\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}")
	f.Fuzz(func(t *testing.T, in string) {
		fwd, rep := pump(in, 64)
		sc := bufio.NewScanner(strings.NewReader(fwd))
		for sc.Scan() {
			if _, ok := checkFrame(sc.Bytes()); !ok || len(sc.Bytes()) > 64 {
				t.Fatalf("forwarded %q", sc.Bytes())
			}
		}
		sc = bufio.NewScanner(strings.NewReader(rep))
		for sc.Scan() {
			var r struct{ Error *struct{ Code int } }
			if json.Unmarshal(sc.Bytes(), &r) != nil || r.Error == nil {
				t.Fatalf("replied %q", sc.Bytes())
			}
		}
	})
}
