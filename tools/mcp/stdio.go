package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"reflect"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"

	"github.com/toolgate/toolgate/internal/textcut"
)

// stdioTransport runs a stdio server as the SDK's CommandTransport does
// (the connection closes by closing the server's stdin, then SIGTERM and
// SIGKILL after terminate), except that a line of its stdout that is not
// a JSON-RPC message (a banner such as mcp-server-code-runner's "Code
// Runner MCP Server running on stdio") is skipped and logged, as the
// TypeScript SDK's client does, instead of ending the connection.
type stdioTransport struct {
	cmd       *exec.Cmd
	terminate time.Duration
	log       *slog.Logger
	server    string
	rejects   *listRejects // the tools its listings left out; nil: dropped unsaid
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	messages := skipNonJSON(stdout, func(line []byte) {
		t.log.Warn("mcp: upstream wrote a line that is not JSON on stdout; skipped", "server", t.server,
			"text", string(bytes.TrimSpace(line)))
	})
	conn, err := (&sdk.IOTransport{Reader: messages, Writer: &processStdin{cmd: t.cmd, stdin: stdin, terminate: t.terminate}}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	f := newListFilter(t.server, t.rejects)
	f.Connection = conn
	return f, nil
}

// listFilter leaves out each tool of a tools/list answer that is not a
// valid MCP tool (a number for its name, a string for its input schema),
// reporting it to rejects (the Upstream reports it as it reports any tool
// left out): otherwise the SDK refuses the whole answer and the server's
// valid tools are lost with it. It also replaces a tools/call result the
// SDK would not decode with one that says so ([invalidResult]): the
// server answered, so the tool ran, and the SDK's decoding error would
// make the outcome unknown; and it marks a JSON-RPC error the server
// answers a call with ([answeredMark]), telling it from the errors the
// SDK makes up. Over stdio it wraps the client's
// connection; over streamable HTTP, whose client connection takes session
// updates through an unexported method that a wrapper would hide, it
// reads the HTTP bodies instead (listTransport). Safe for concurrent use.
type listFilter struct {
	sdk.Connection // stdio only
	server         string
	rejects        *listRejects

	mu    sync.Mutex
	lists map[any]bool // the IDs of tools/list requests awaiting their answer
	calls map[any]bool // the IDs of tools/call requests awaiting their answer, at most maxCallsNoted
}

// maxCallsNoted bounds the tools/call requests a listFilter notes: a call
// the server never answers stays noted until the client cancels it (its
// deadline). A call sent while as many are noted is not checked; an
// undecodable result to it is the SDK's error, an unknown outcome.
const maxCallsNoted = 4096

func newListFilter(server string, rejects *listRejects) *listFilter {
	return &listFilter{server: server, rejects: rejects, lists: map[any]bool{}, calls: map[any]bool{}}
}

func (c *listFilter) Write(ctx context.Context, m jsonrpc.Message) error {
	c.sent(m)
	return c.Connection.Write(ctx, m)
}

func (c *listFilter) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.received(m)
	}
	return m, err
}

// sent notes m, a message to the server, when it is a tools/list or a
// tools/call request, so that received filters its answer; a
// notifications/cancelled forgets the call it cancels, whose answer may
// never come.
func (c *listFilter) sent(m jsonrpc.Message) {
	r, ok := m.(*jsonrpc.Request)
	if !ok {
		return
	}
	if r.Method == "notifications/cancelled" {
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(r.Params, &p) != nil {
			return
		}
		if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
			c.mu.Lock()
			delete(c.calls, id.Raw())
			c.mu.Unlock()
		}
		return
	}
	if !r.ID.IsValid() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case r.Method == "tools/list":
		c.lists[r.ID.Raw()] = true
	case r.Method == "tools/call" && len(c.calls) < maxCallsNoted:
		c.calls[r.ID.Raw()] = true
	}
}

// waiting reports whether a tools/list or tools/call request awaits its
// answer.
func (c *listFilter) waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lists) > 0 || len(c.calls) > 0
}

// received leaves the invalid tools out of m, a message from the server,
// when it answers a tools/list request sent, replaces its result when it
// answers a tools/call request with a result the SDK would not decode
// (validResult), marks its error with answeredMark when it answers a
// tools/call request with one, and reports whether it changed m.
func (c *listFilter) received(m jsonrpc.Message) bool {
	r, ok := m.(*jsonrpc.Response)
	if !ok || !r.ID.IsValid() {
		return false
	}
	c.mu.Lock()
	list, call := c.lists[r.ID.Raw()], c.calls[r.ID.Raw()]
	delete(c.lists, r.ID.Raw())
	delete(c.calls, r.ID.Raw())
	c.mu.Unlock()
	if r.Error != nil {
		var werr *jsonrpc.Error
		if !call || !errors.As(r.Error, &werr) {
			return false
		}
		werr.Data = answeredMark
		return true
	}
	var out json.RawMessage
	switch {
	case list:
		out = c.validTools(r.Result)
	case call:
		out = validResult(r.Result)
	default:
		return false
	}
	if bytes.Equal(out, r.Result) {
		return false
	}
	r.Result = out
	return true
}

// rewrite is received for a message in its wire form: data with the
// invalid tools left out when it answers a tools/list request sent, and
// true; else data and false. A message the SDK cannot decode is the
// SDK's to report.
func (c *listFilter) rewrite(data []byte) ([]byte, bool) {
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil || !c.received(m) {
		return data, false
	}
	out, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return data, false
	}
	return out, true
}

// validTools returns the tools/list result with the tools the SDK would
// not decode left out, each logged; result itself when all decode or it
// is not a result the filter reads (the SDK reports that).
func (c *listFilter) validTools(result json.RawMessage) json.RawMessage {
	var res map[string]json.RawMessage
	var listed []json.RawMessage
	if json.Unmarshal(result, &res) != nil || json.Unmarshal(res["tools"], &listed) != nil {
		return result
	}
	kept := listed[:0]
	for i, raw := range listed {
		var t sdk.Tool
		if err := sdkUnmarshal(raw, &t, toolDepth); err != nil {
			c.rejects.add(fmt.Errorf("mcp: %s: tool left out: the listing's tool %d is no valid MCP tool: %s", c.server, i, decodeProblem(err)))
			continue
		}
		kept = append(kept, raw)
	}
	if len(kept) == len(listed) {
		return result
	}
	res["tools"], _ = json.Marshal(kept) // raw messages that decoded: cannot fail
	out, err := json.Marshal(res)
	if err != nil {
		return result
	}
	return out
}

// answeredMark is the data a listFilter puts in a JSON-RPC error the
// server answered a tools/call with (its own data is not read). The SDK
// makes up JSON-RPC errors too, for a frame it cannot read (which ends
// the connection) or an HTTP status it keeps the connection for (500,
// 502, 503, 504, 429): those say nothing of whether the tool ran, and
// only a marked error means the server refused the call
// ([answeredByServer]).
var answeredMark = json.RawMessage(`{"io.toolgate/answered":true}`)

// answeredByServer reports whether err is an error a server answered a
// call with, as a listFilter marked it.
func answeredByServer(err *jsonrpc.Error) bool {
	return bytes.Equal(err.Data, answeredMark)
}

// validResult returns result, a tools/call result, when the SDK decodes
// it as a CallToolResult; else a tool error that says what is wrong with
// it, marked with [metaInvalidResult] for [invalidResult].
func validResult(result json.RawMessage) json.RawMessage {
	// CallToolResult decodes itself (its UnmarshalJSON, with the SDK's own
	// decoder), so only the depth is sdkUnmarshal's to add; calling it
	// directly spares a decoder's copy of every result.
	err := checkDepth(result, resultDepth)
	if err == nil {
		err = new(sdk.CallToolResult).UnmarshalJSON(result)
	}
	if err == nil {
		return result
	}
	problem := textcut.Shorten(decodeProblem(err), outputShown)
	out, err := json.Marshal(&sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: problem}},
		Meta: sdk.Meta{metaInvalidResult: problem}})
	if err != nil {
		return result
	}
	return out
}

// sdkMaxDepth is how deeply the SDK lets a message nest (its internal/json
// package), toolDepth how deep a tool of a tools/list answer stands in
// its message (message, result, tools array), and resultDepth a
// tools/call result (message).
const (
	sdkMaxDepth = 1000
	toolDepth   = 3
	resultDepth = 1
)

// sdkUnmarshal decodes data, a value that stands depth levels deep in
// its message, into v as the SDK (v1.8.0, its internal/json) decodes what
// a server sends: with segmentio/encoding's decoder, member names matched
// case-sensitively, and no message nested deeper than sdkMaxDepth. So
// listFilter keeps a tool exactly when the SDK decodes it: encoding/json
// matches names case-insensitively, and would leave out
// {"name":"x","Title":1}, whose "Title" the SDK ignores.
func sdkUnmarshal(data []byte, v any, depth int) error {
	if err := checkDepth(data, depth); err != nil {
		return err
	}
	dec := sjson.NewDecoder(bytes.NewReader(data))
	dec.DontMatchCaseInsensitiveStructFields()
	return dec.Decode(v)
}

// checkDepth refuses data, a value that stands depth levels deep in its
// message, when the message would nest deeper than the SDK reads.
func checkDepth(data []byte, depth int) error {
	var d jsonDepth
	if d.scan(data); depth+d.deepest > sdkMaxDepth {
		return fmt.Errorf("nested too deep: its message would be more than %d levels deep, the most the SDK reads", sdkMaxDepth)
	}
	return nil
}

// listRejects collects errors, safe for concurrent use; its methods do
// nothing on a nil *listRejects.
type listRejects struct {
	mu   sync.Mutex
	errs []error
}

func (r *listRejects) add(err error) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

// take returns the errors added since the last take.
func (r *listRejects) take() []error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := r.errs
	r.errs = nil
	return errs
}

// decodeProblem says what is wrong with a tool that does not decode,
// without the decoder's Go type names where it can.
func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" && te.Type != nil {
		want := "an object"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		case reflect.Int, reflect.Int64, reflect.Float64:
			want = "a number"
		case reflect.Slice:
			want = "an array"
		}
		return fmt.Sprintf("%s: a JSON %s, where MCP wants %s", te.Field, jsonKind(te.Value), want)
	}
	if errors.As(err, &te) && te.Type != nil && te.Type.Kind() == reflect.Struct {
		return fmt.Sprintf("a JSON %s, where MCP wants an object", jsonKind(te.Value))
	}
	return err.Error()
}

// jsonKind names the kind of JSON value an UnmarshalTypeError's Value
// gives: encoding/json gives the kind ("number"); the SDK's decoder
// (segmentio/encoding) the quoted start of the value's text ("\"123}]}\"").
func jsonKind(v string) string {
	raw, err := strconv.Unquote(v)
	if err != nil || raw == "" {
		return v
	}
	switch c := raw[0]; {
	case c == '"':
		return "string"
	case c == '-' || '0' <= c && c <= '9':
		return "number"
	case c == '[':
		return "array"
	case c == '{':
		return "object"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	}
	return "value"
}

// skippedLineMax bounds what a skipped line shows in the log.
const skippedLineMax = 200

// skipNonJSON returns r without the lines whose first byte that is not
// white space opens no JSON object or array, unless they continue a
// message a kept line left open (a server that pretty-prints its messages
// over several lines, which the stdio transport forbids but decoders
// read); skipped is called with the start of each (at most
// skippedLineMax bytes). Lines kept pass through unbuffered whatever
// their length. Closing the result stops the copy; r itself is the
// process's to close (cmd.Wait).
func skipNonJSON(r io.Reader, skipped func(line []byte)) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(r)
		start, keep := true, true
		var shown []byte
		var open jsonDepth
		for {
			chunk, err := br.ReadSlice('\n')
			if len(chunk) > 0 {
				if start {
					first := bytes.TrimLeft(chunk, " \t\r\n")
					keep = open.inside() || len(first) == 0 || first[0] == '{' || first[0] == '['
					shown = shown[:0]
				}
				if keep {
					open.scan(chunk)
					if _, werr := pw.Write(chunk); werr != nil {
						return // the reader closed
					}
				} else if len(shown) < skippedLineMax {
					shown = append(shown, chunk[:min(len(chunk), skippedLineMax-len(shown))]...)
				}
				start = chunk[len(chunk)-1] == '\n'
				if start && !keep {
					skipped(shown)
				}
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}

// jsonDepth follows how deep the kept bytes are inside JSON objects,
// arrays and strings, so that the lines of a message written over several
// lines are kept whatever they start with.
type jsonDepth struct {
	depth            int
	deepest          int // the largest depth seen
	inString, escape bool
}

func (d *jsonDepth) inside() bool { return d.depth > 0 || d.inString }

func (d *jsonDepth) scan(b []byte) {
	for _, c := range b {
		switch {
		case d.escape:
			d.escape = false
		case d.inString:
			switch c {
			case '\\':
				d.escape = true
			case '"':
				d.inString = false
			}
		case c == '"':
			d.inString = true
		case c == '{' || c == '[':
			d.depth++
			d.deepest = max(d.deepest, d.depth)
		case c == '}' || c == ']':
			// A stray closer cannot make the depth negative: the next
			// line is judged by its own first byte again.
			d.depth = max(d.depth-1, 0)
		}
	}
}

// processStdin is the server's stdin; Close ends the process as the SDK's
// CommandTransport does: close stdin and wait, then SIGTERM and wait,
// then SIGKILL, each wait at most terminate.
type processStdin struct {
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	terminate time.Duration
}

func (p *processStdin) Write(b []byte) (int, error) { return p.stdin.Write(b) }

func (p *processStdin) Close() error {
	if err := p.stdin.Close(); err != nil {
		return fmt.Errorf("closing stdin: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-done:
			return err, true
		case <-time.After(p.terminate):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return errors.New("unresponsive subprocess")
}
