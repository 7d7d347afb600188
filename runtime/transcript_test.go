package runtime_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/golden"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"golang.org/x/tools/txtar"
)

// TestTurnTranscripts replays scripted agent turns and compares what the
// runtime did, step by step, with the transcript in the txtar file, as
// go-sdk's conformance tests do. Each file holds its inputs:
//
//	-- request --   the user's message (the first turn of a new session of the teller)
//	-- model --     the scripted model's replies, one a line:
//	                call TOOL ARGS | answer TEXT | find_tools QUERY | text RAW
//
// and the outputs the test writes with -update:
//
//	-- transcript --     every Observer event: the shortlist, the constraint's
//	                     kind, the model's reply, find_tools, the gateway's result
//	-- requestN/messages -- the conversation of the Nth request to the model
//	                       (a step's repairs are requests of their own)
//
// Run `go test ./runtime -run TestTurnTranscripts -update` after a deliberate
// change, and read the diff.
func TestTurnTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "turns", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/turns/*.txtar")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			request, ok := section(ar, "request")
			if !ok {
				t.Fatalf("%s: no -- request -- section", file)
			}
			script, ok := section(ar, "model")
			if !ok {
				t.Fatalf("%s: no -- model -- section", file)
			}
			replies, err := parseReplies(script)
			if err != nil {
				t.Fatalf("%s: model: %v", file, err)
			}
			e := newEnv(t, replies, false, nil)
			turn, err := e.agent.NewSession(teller, "transcript", nil).Run(t.Context(), strings.TrimSpace(request))
			got := transcript(e.events, e.model.Requests(), turn, err)

			if golden.Update() {
				out := &txtar.Archive{Comment: ar.Comment}
				for _, f := range ar.Files {
					if f.Name == "request" || f.Name == "model" {
						out.Files = append(out.Files, f)
					}
				}
				out.Files = append(out.Files, got...)
				if err := os.WriteFile(file, txtar.Format(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := map[string]string{}
			var wantNames []string
			for _, f := range ar.Files {
				if f.Name != "request" && f.Name != "model" {
					want[f.Name] = string(f.Data)
					wantNames = append(wantNames, f.Name)
				}
			}
			var gotNames []string
			for _, f := range got {
				gotNames = append(gotNames, f.Name)
				w, ok := want[f.Name]
				if !ok {
					t.Errorf("%s: section %q is new (run with -update if that is intended):\n%s", file, f.Name, f.Data)
					continue
				}
				if w != string(f.Data) {
					t.Errorf("%s: section %q differs (run with -update if that is intended)\ngot:\n%s\nwant:\n%s", file, f.Name, f.Data, w)
				}
			}
			for _, n := range wantNames {
				if !slices.Contains(gotNames, n) {
					t.Errorf("%s: section %q is no longer produced", file, n)
				}
			}
		})
	}
}

func section(ar *txtar.Archive, name string) (string, bool) {
	for _, f := range ar.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// parseReplies reads the model section: one reply a line, blank lines and
// lines starting with # skipped.
func parseReplies(script string) ([]scripted.Reply, error) {
	var replies []scripted.Reply
	sc := bufio.NewScanner(strings.NewReader(script))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		switch verb {
		case "call":
			tool, args, ok := strings.Cut(rest, " ")
			if !ok {
				return nil, fmt.Errorf("line %d: call TOOL ARGS, got %q", n, line)
			}
			replies = append(replies, scripted.Call(tool, args))
		case "answer":
			replies = append(replies, scripted.Answer(rest))
		case "find_tools":
			replies = append(replies, scripted.FindTools(rest))
		case "text":
			replies = append(replies, scripted.Text(rest))
		default:
			return nil, fmt.Errorf("line %d: unknown reply %q (call, answer, find_tools, text)", n, verb)
		}
	}
	return replies, sc.Err()
}

// transcript renders what a turn did as txtar sections.
func transcript(events []runtime.Event, reqs []*llm.Request, turn *runtime.Turn, runErr error) []txtar.File {
	var b bytes.Buffer
	for _, ev := range events {
		fmt.Fprintf(&b, "step %d %s", ev.Step, ev.Kind)
		switch ev.Kind {
		case runtime.EventShortlist:
			fmt.Fprintf(&b, " strategy=%s authorized=%d tools=%s", ev.Strategy, ev.Authorized, strings.Join(ev.Tools, ","))
		case runtime.EventConstraint:
			fmt.Fprintf(&b, " mode=%s", ev.Constraint.Mode)
			if len(ev.Excluded) > 0 {
				fmt.Fprintf(&b, " excluded=%s", strings.Join(ev.Excluded, ","))
			}
			if len(ev.Relaxations) > 0 {
				fmt.Fprintf(&b, " relaxations=%d", len(ev.Relaxations))
			}
		case runtime.EventRequest:
			fmt.Fprintf(&b, " prompt_bytes=%d prefix_bytes=%d", ev.PromptBytes, ev.PrefixBytes)
		case runtime.EventReply:
			r := ev.Response
			fmt.Fprintf(&b, " action=%s", r.Action)
			for _, c := range r.Calls {
				fmt.Fprintf(&b, " call=%s %s", c.Name, c.Arguments)
			}
			if r.Answer != "" {
				fmt.Fprintf(&b, " answer=%q", r.Answer)
			}
			if r.FindTools != "" {
				fmt.Fprintf(&b, " query=%q", r.FindTools)
			}
		case runtime.EventFindTools:
			fmt.Fprintf(&b, " query=%q found=%s", ev.Query, strings.Join(ev.Found, ","))
		case runtime.EventRepeatedCall:
			fmt.Fprintf(&b, " tool=%s repeat=%v of=%d", ev.Tool, ev.Repeat, ev.RepeatOf)
		case runtime.EventCall:
			fmt.Fprintf(&b, " tool=%s args=%s", ev.Tool, ev.Arguments)
			if ev.Err != nil {
				fmt.Fprintf(&b, " error=%q", ev.Err.Error())
			} else {
				fmt.Fprintf(&b, " result=%s cached=%v", ev.Result, ev.Cached)
			}
		case runtime.EventAnswer:
			fmt.Fprintf(&b, " %q", ev.Answer)
		}
		b.WriteByte('\n')
	}
	switch {
	case runErr != nil:
		fmt.Fprintf(&b, "turn error %q\n", runErr.Error())
	case turn != nil:
		fmt.Fprintf(&b, "turn steps=%d calls=%d answer=%q\n", turn.Steps, len(turn.Calls), turn.Answer)
	}
	files := []txtar.File{{Name: "transcript", Data: b.Bytes()}}
	for i, req := range reqs {
		var m bytes.Buffer
		for _, msg := range req.Messages {
			fmt.Fprintf(&m, "[%s]", msg.Role)
			if msg.Name != "" {
				fmt.Fprintf(&m, " name=%s", msg.Name)
			}
			for _, c := range msg.ToolCalls {
				args, _ := json.Marshal(c.Arguments)
				fmt.Fprintf(&m, " call=%s %s", c.Name, args)
			}
			m.WriteByte('\n')
			if msg.Content != "" {
				m.WriteString(msg.Content)
				if !strings.HasSuffix(msg.Content, "\n") {
					m.WriteByte('\n')
				}
			}
		}
		files = append(files, txtar.File{Name: fmt.Sprintf("request%d/messages", i+1), Data: m.Bytes()})
	}
	return files
}
