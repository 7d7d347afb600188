package discovery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/tools/internal/fileline"
)

// Log records discovery queries so that misses can be found later. Record
// may be called concurrently; an error is counted in the metrics and does
// not fail the query.
type Log interface {
	Record(ctx context.Context, e Entry) error
}

// Sources of log entries: what the agent loop was doing.
const (
	// SourceTurn is the shortlist a step of a turn showed the model (the
	// empty Source of older logs reads the same).
	SourceTurn = "turn"
	// SourceFindTools is the model's own search (find_tools).
	SourceFindTools = "find_tools"
	// SourceSelect is a tool loaded by name (find_tools "select:a,b");
	// Candidates holds what was loaded.
	SourceSelect = "select"
	// SourceCall is a call of an authorized tool; Called names it.
	SourceCall = "call"
)

// Entry is one logged discovery query, or one outcome of the agent loop
// that tells whether the query's shortlist held what was needed (Source).
type Entry struct {
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Tenant    string    `json:"tenant"`
	// Session links the entries of one conversation; empty when the caller
	// did not give one (then no outcome can be linked to the query).
	Session string `json:"session,omitempty"`
	// Source is one of the Source constants; empty means [SourceTurn].
	Source string `json:"source,omitempty"`
	// Called is the tool ID a [SourceCall] entry records.
	Called            string            `json:"called,omitempty"`
	Query             string            `json:"query"`
	Context           []string          `json:"context,omitempty"`
	Lang              string            `json:"lang,omitempty"`
	Candidates        []LoggedCandidate `json:"candidates"`
	Confidence        float64           `json:"confidence"`
	Reformulated      bool              `json:"reformulated"`
	ReformulatedQuery string            `json:"reformulated_query,omitempty"`
	Authorized        int               `json:"authorized"`
}

// source returns the entry's Source, [SourceTurn] for the empty one.
func (e *Entry) source() string {
	if e.Source == "" {
		return SourceTurn
	}
	return e.Source
}

// LoggedCandidate is a shortlisted tool in a log entry.
type LoggedCandidate struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
}

// JSONLog writes one JSON object per line to an [io.Writer]. It is safe for
// concurrent use; lines are never interleaved.
type JSONLog struct {
	mu   sync.Mutex
	w    io.Writer
	file *os.File // the file [OpenJSONLog] opened, closed by Close
}

var _ Log = (*JSONLog)(nil)

// NewJSONLog returns a log writing JSON Lines to w. The caller owns w (and
// closes it after the last Record).
func NewJSONLog(w io.Writer) *JSONLog { return &JSONLog{w: w} }

// OpenJSONLog opens the JSON Lines log at path for appending, creating it
// with mode 0600 (a log holds users' requests) when it does not exist. Each
// Record is one write of one whole line to a file opened with O_APPEND, so
// processes appending to the same file do not interleave lines either.
// Close closes the file.
func OpenJSONLog(path string) (*JSONLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("discovery: log: %w", err)
	}
	return &JSONLog{w: f, file: f}, nil
}

// Close closes the file [OpenJSONLog] opened; later Records fail. For a log
// of [NewJSONLog] it does nothing: the caller owns the writer.
func (l *JSONLog) Close() error {
	if l.file == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.file.Close(); err != nil {
		return fmt.Errorf("discovery: log: %w", err)
	}
	return nil
}

// Record writes e as one line.
func (l *JSONLog) Record(_ context.Context, e Entry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("discovery: log: %w", err)
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("discovery: log: %w", err)
	}
	return nil
}

// LogError is a malformed line of a discovery log.
type LogError struct {
	File   string
	Line   int
	Reason string
}

func (e *LogError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// MaxLogLine bounds one line of a JSON Lines log [ReadJSONLog] accepts.
const MaxLogLine = 1 << 20

// ReadJSONLog parses a JSON Lines discovery log (what [JSONLog] writes);
// file names it in errors. Entries come back in file order. Blank lines
// are skipped, and so is a line that is not a JSON value, whose number is
// then in torn: a write a crash cut short (a restarted agent's next entry
// continues on that line) or the last line while an agent still writes
// it; a log is machine-written and read while it grows. A line that is
// JSON but not an entry (one with none of "query", "candidates" and
// "called": a catalog given for the log, say), or longer than
// [MaxLogLine], is a [*LogError].
func ReadJSONLog(r io.Reader, file string) (entries []Entry, torn []int, err error) {
	sc := fileline.NewScanner(r, MaxLogLine)
	for sc.Scan() {
		b, line := sc.Bytes(), sc.Line()
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			if _, ok := errors.AsType[*json.SyntaxError](err); ok {
				torn = append(torn, line)
				continue
			}
			return nil, nil, &LogError{file, line, "invalid entry: " + strings.TrimPrefix(err.Error(), "json: ")}
		}
		switch e.source() {
		case SourceTurn, SourceFindTools, SourceSelect:
		case SourceCall:
			if e.Called == "" {
				return nil, nil, &LogError{file, line, `a "call" entry without "called"`}
			}
		default:
			return nil, nil, &LogError{file, line, fmt.Sprintf("unknown source %q", e.Source)}
		}
		if e.Query == "" && e.Candidates == nil && e.Called == "" {
			// A catalog's line, a tools/list object: JSON, but nothing a
			// report reads, so another file given for the log would read
			// as a log of no calls.
			return nil, nil, &LogError{file, line, `not a discovery log entry: no "query", "candidates" or "called"`}
		}
		entries = append(entries, e)
	}
	if sc.Err() != nil {
		return nil, nil, &LogError{file, sc.Line(), sc.Reason()}
	}
	return entries, torn, nil
}
