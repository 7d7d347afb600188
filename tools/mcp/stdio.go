package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
	return (&sdk.IOTransport{Reader: messages, Writer: &processStdin{cmd: t.cmd, stdin: stdin, terminate: t.terminate}}).Connect(ctx)
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
