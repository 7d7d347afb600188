package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/internal/jsonsyntax"
)

// guardFrames returns a transport over in and out that hands the SDK only
// well-formed frames. The SDK's stdio transport ends the connection on the
// first frame it cannot decode, which would end the session (and, for
// `toolgate mcp serve`, the process and its upstreams): here each line of
// in is checked first (checkFrame), a bad one is answered on out with a
// JSON-RPC error and dropped, and the session goes on. A line over max
// bytes is skipped without being buffered.
func guardFrames(in io.Reader, out io.Writer, max int) sdk.Transport {
	pr, pw := io.Pipe()
	w := &frameWriter{w: out}
	go pumpFrames(in, pw, w, max)
	return &sdk.IOTransport{Reader: pr, Writer: w}
}

// frameWriter serialises whole frames from the SDK and from the guard,
// and words the SDK's errors about params it cannot decode, and those of
// code 0, for a client ([cleanSDKError]).
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if clean, ok := cleanSDKError(b); ok {
		if _, err := f.w.Write(clean); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return f.w.Write(b)
}

// Close leaves out open: it belongs to the caller (a process's stdout).
func (f *frameWriter) Close() error { return nil }

// pumpFrames copies the good lines of in to pw, answers the bad ones on w,
// and closes pw when in ends (or with the error that ended it). It returns
// when in ends or the SDK closes its side of the pipe.
func pumpFrames(in io.Reader, pw *io.PipeWriter, w io.Writer, max int) {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		over := len(line)+len(chunk) > max+1 // +1: the newline
		if !over {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if over {
				line = line[:0]
				if skipLine(r) != nil {
					pw.Close()
					return
				}
				err = nil
				chunk = nil
			} else {
				continue
			}
		}
		if over {
			line = line[:0]
			reply := errorFrame(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("frame larger than %d bytes", max))
			if _, werr := w.Write(reply); werr != nil {
				pw.CloseWithError(werr)
				return
			}
		} else if body := bytes.TrimSpace(line); len(body) > 0 {
			if reply, ok := checkFrame(body); !ok {
				if _, werr := w.Write(reply); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			} else if _, werr := pw.Write(append(body, '\n')); werr != nil {
				return // the SDK closed the connection
			}
		}
		line = line[:0]
		if err != nil {
			if errors.Is(err, io.EOF) {
				pw.Close()
			} else {
				pw.CloseWithError(err)
			}
			return
		}
	}
}

// skipLine discards the rest of the current line.
func skipLine(r *bufio.Reader) error {
	for {
		_, err := r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// checkFrame reports whether frame is one JSON-RPC 2.0 message the SDK
// can take, and otherwise returns the error reply: -32700 for a frame that
// is not JSON, -32600 for JSON that is not one message object (null, a
// batch, a wrong or missing "jsonrpc", a member twice, a bad method, an id
// that is not a string or an integer, a response without exactly one of
// result and error). The reply carries the frame's id when it has a valid one.
func checkFrame(frame []byte) (reply []byte, ok bool) {
	if !jsonsyntax.Valid(frame) {
		return errorFrame(nil, jsonrpc.CodeParseError, "parse error: the frame is not JSON"), false
	}
	if frame[0] != '{' {
		return errorFrame(nil, jsonrpc.CodeInvalidRequest, "invalid request: a frame must be one JSON-RPC object (batches are not supported)"), false
	}
	if id, problem := messageProblem(frame); problem != "" {
		return errorFrame(id, jsonrpc.CodeInvalidRequest, "invalid request: "+problem), false
	}
	return nil, true
}

// messageProblem says what keeps msg, a JSON object, from being one
// JSON-RPC 2.0 message the SDK can take ("" when nothing does), and the
// id to answer it with (nil for null).
func messageProblem(msg []byte) (id json.RawMessage, problem string) {
	var head struct {
		Version *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(msg, &head) // valid JSON object: only member types can differ
	id = validID(head.ID)
	strict := jcs.Check(msg)
	switch {
	case strict != nil:
		return id, jcs.Describe(strict)
	case head.Version == nil || *head.Version != "2.0":
		return id, `"jsonrpc" must be "2.0"`
	case head.ID != nil && id == nil:
		return nil, "id must be a string or an integer"
	case head.Method == nil && (head.Result == nil) == (head.Error == nil):
		return id, "a response needs exactly one of result and error"
	}
	if _, err := jsonrpc.DecodeMessage(msg); err != nil {
		return id, "not a JSON-RPC request, notification or response"
	}
	return id, ""
}

// validID returns raw when it is a JSON-RPC id (a string or an integer).
func validID(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	switch v := v.(type) {
	case string:
		return raw
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return raw
		}
	}
	return nil
}

// errorFrame is a JSON-RPC error response line; id nil means null.
func errorFrame(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{Version: "2.0", ID: id, Error: wireError{code, msg}})
	return append(b, '\n')
}
