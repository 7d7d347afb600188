package mcp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxListBody bounds what listTransport holds of one answer: an
// application/json body, or one event of a text/event-stream. It is the
// SDK's own bound on an event ([sdk.DefaultMaxEventSize]; the client's
// transport is left at it), so every event the SDK reads is filtered. A
// JSON body over it (the SDK reads those whole) passes as it came.
const maxListBody = sdk.DefaultMaxEventSize

// maxListRequest bounds what listTransport reads of a request body to
// find a tools/list request.
const maxListRequest = 64 << 10

// listTransport is the http.RoundTripper of a streamable HTTP server's
// connection that gives its tools/list answers to filter, as the stdio
// connection does: it notes each tools/list request the client posts,
// and rewrites the answer to it, an application/json body or an event of
// a text/event-stream (a POST's or a GET's, where a stream resumes), with
// the tools the SDK would refuse left out. Every other body passes
// unchanged, byte for byte.
type listTransport struct {
	base   http.RoundTripper
	filter *listFilter
}

func (t *listTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost {
		t.noteRequest(req)
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "application/json":
		if t.filter.waiting() {
			t.filterJSON(resp)
		}
	case "text/event-stream":
		resp.Body = &sseFilter{src: bufio.NewReader(resp.Body), body: resp.Body, filter: t.filter, max: maxListBody}
	}
	return resp, nil
}

// noteRequest tells the filter of the JSON-RPC message req posts, read
// through req.GetBody (the SDK sets it), when it is at most maxListRequest
// bytes: a tools/list request is a few hundred.
func (t *listTransport) noteRequest(req *http.Request) {
	if req.GetBody == nil || req.ContentLength > maxListRequest {
		return
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxListRequest))
	if err != nil {
		return
	}
	if m, err := jsonrpc.DecodeMessage(data); err == nil {
		t.filter.sent(m)
	}
}

// filterJSON rewrites resp's body, one JSON-RPC message, when it answers
// a tools/list request; a body over maxListBody passes as it came.
func (t *listTransport) filterJSON(resp *http.Response) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxListBody+1))
	if err != nil || len(data) > maxListBody {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}
		return
	}
	resp.Body.Close()
	if out, ok := t.filter.rewrite(data); ok {
		data = out
		resp.ContentLength = int64(len(out))
		resp.Header.Del("Content-Length")
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
}

// mediaType is a Content-Type's media type, lower case; "" when there is
// none.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return mt
}

// sseFilter is a text/event-stream body that passes each event on once
// it has been read whole (the SDK waits for its end too), its data
// rewritten when it answers a tools/list request (filter). It reads the
// stream as the SDK does: lines end at "\n", an event at an empty line
// or the end of the stream, its data lines trimmed and joined by "\n". An
// event over max bytes (maxListBody, which the SDK refuses), passes on
// unread with the rest of the stream.
type sseFilter struct {
	src    *bufio.Reader
	body   io.Closer
	filter *listFilter
	max    int

	out       []byte // read, and ready to pass on
	event     []byte // the lines of the event being read
	lineStart int    // where in event the line being read starts
	raw       bool   // an event was over max: the rest passes unread
	err       error  // what ended src
}

func (s *sseFilter) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		switch {
		case s.err != nil:
			return 0, s.err
		case s.raw:
			return s.src.Read(p)
		}
		s.readLine()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *sseFilter) Close() error { return s.body.Close() }

// readLine reads the next line, or as much of it as the reader's buffer
// holds, into the event, and passes the event on when the line ends it.
func (s *sseFilter) readLine() {
	chunk, err := s.src.ReadSlice('\n')
	if len(s.event)+len(chunk) > s.max {
		s.out = append(s.event, chunk...)
		s.event, s.raw = nil, true
		return
	}
	s.event = append(s.event, chunk...)
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return // the line goes on
	case err != nil:
		s.out, s.event, s.err = s.finish(s.event), nil, err
	case len(bytes.TrimRight(s.event[s.lineStart:], "\r\n")) == 0:
		s.out, s.event = s.finish(s.event), nil
		s.lineStart = 0
	default:
		s.lineStart = len(s.event)
	}
}

// finish returns event, whole lines of one event, with its data rewritten
// by filter when it is a message answering a tools/list request: the
// first data line then carries the new data, and the others are dropped.
// Other lines stay as they are.
func (s *sseFilter) finish(event []byte) []byte {
	if len(event) == 0 || !s.filter.waiting() {
		return event
	}
	lines := bytes.SplitAfter(event, []byte("\n"))
	var name string
	var data [][]byte
	first := -1
	for i, line := range lines {
		key, val, ok := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(":"))
		switch {
		case !ok:
		case string(key) == "event":
			name = strings.TrimSpace(string(val))
		case string(key) == "data":
			if first < 0 {
				first = i
			}
			data = append(data, bytes.TrimSpace(val))
		}
	}
	if first < 0 || name != "" && name != "message" {
		return event
	}
	out, ok := s.filter.rewrite(bytes.Join(data, []byte("\n")))
	if !ok {
		return event
	}
	var b []byte
	for i, line := range lines {
		key, _, _ := bytes.Cut(line, []byte(":"))
		switch {
		case i == first:
			b = append(append(append(b, "data: "...), out...), '\n')
		case string(key) == "data":
		default:
			b = append(b, line...)
		}
	}
	return b
}
