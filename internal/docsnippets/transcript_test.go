package docsnippets

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.BuildMain(m)) }

// transcriptMarker, alone on the line before a fenced block, makes the
// block a checked terminal transcript (see the package doc).
const transcriptMarker = "<!-- transcript -->"

// exitNote is a transcript output line's trailing "# exit N".
var exitNote = regexp.MustCompile(`\s+# exit (\d+)$`)

// step is one command of a transcript and what the guide says it prints.
type step struct {
	line int      // 1-based line of the command's "$ "
	cmd  string   // the command, continuation lines joined with newlines
	out  []string // the output lines shown, without the exit note
	exit int      // the exit status noted, or -1 when none is
}

// transcript is one marked block of a guide.
type transcript struct {
	file  string
	line  int // 1-based line of the opening fence
	steps []step
}

// transcripts returns the blocks of doc marked with transcriptMarker. In a
// block, a line starting "$ " is a command, continued on the lines after it
// while a line ends with "|" or "\"; the lines up to the next command are
// its output, each shown as a terminal shows it (stdout and stderr
// together), "..." for the rest of it, and "# exit N" after its last line
// the status. A marked block without a command is an error.
func transcripts(file, doc string) ([]transcript, error) {
	lines := strings.Split(doc, "\n")
	var out []transcript
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != transcriptMarker {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "```") {
			return nil, fmt.Errorf("%s:%d: %s is not followed by a fenced block", file, i+1, transcriptMarker)
		}
		tr := transcript{file: file, line: i + 2}
		var cur *step
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			l := strings.TrimRight(lines[j], " \t\r")
			switch {
			case strings.HasPrefix(l, "$ "):
				tr.steps = append(tr.steps, step{line: j + 1, cmd: l[2:], exit: -1})
				cur = &tr.steps[len(tr.steps)-1]
				for (strings.HasSuffix(cur.cmd, "|") || strings.HasSuffix(cur.cmd, `\`)) && j+1 < len(lines) {
					j++
					cur.cmd += "\n" + strings.TrimRight(lines[j], " \t\r")
				}
			case cur == nil:
				return nil, fmt.Errorf("%s:%d: transcript output before any \"$ \" command", file, j+1)
			default:
				if m := exitNote.FindStringSubmatch(l); m != nil {
					cur.exit, _ = strconv.Atoi(m[1])
					l = l[:len(l)-len(m[0])]
				}
				cur.out = append(cur.out, l)
			}
		}
		if len(tr.steps) == 0 {
			return nil, fmt.Errorf("%s:%d: a transcript block holds no \"$ \" command", file, tr.line)
		}
		out = append(out, tr)
		i = j
	}
	return out, nil
}

// matches reports whether got is what the guide shows: the same lines, or
// the shown ones up to a "..." line followed by anything.
func matches(shown, got []string) bool {
	for i, l := range shown {
		if l == "..." {
			return true
		}
		if i >= len(got) || got[i] != l {
			return false
		}
	}
	return len(got) == len(shown)
}

// TestDocumentedTranscripts runs the marked terminal transcripts of
// README.md and docs/*.md with the toolgate of this checkout, in a folder
// that shows the repository's files (what a command writes stays there),
// and fails when a command prints other lines or exits with another status
// than the guide shows.
func TestDocumentedTranscripts(t *testing.T) {
	repo := root(t)
	bin := testenv.Build(t, "toolgate", "github.com/toolgate/toolgate/cmd/toolgate")
	n := 0
	for _, file := range guides(t, repo) {
		doc, err := os.ReadFile(filepath.Join(repo, file))
		if err != nil {
			t.Fatal(err)
		}
		trs, err := transcripts(filepath.ToSlash(file), string(doc))
		if err != nil {
			t.Error(err)
			continue
		}
		for _, tr := range trs {
			n++
			t.Run(fmt.Sprintf("%s:%d", tr.file, tr.line), func(t *testing.T) {
				dir := mirror(t, repo)
				for _, s := range tr.steps {
					runStep(t, tr.file, dir, bin, s)
				}
			})
		}
	}
	if n < 5 {
		t.Errorf("found %d %s blocks in README.md and docs/*.md, want the marked ones (at least 5)", n, transcriptMarker)
	}
}

// runStep runs one command with bash in dir, "go run ./cmd/toolgate" being
// bin and "/tmp/" dir's tmp folder, and compares it with the guide.
func runStep(t *testing.T, file, dir, bin string, s step) {
	t.Helper()
	tmp := filepath.Join(dir, "tmp") + "/"
	cmdline := strings.ReplaceAll(s.cmd, "/tmp/", tmp)
	cmdline = strings.ReplaceAll(cmdline, "go run ./cmd/toolgate", bin)
	cmd := exec.Command("bash", "-c", cmdline)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s:%d: %v", file, s.line, err)
	}
	var got []string
	if text := strings.TrimRight(strings.ReplaceAll(buf.String(), tmp, "/tmp/"), "\n"); text != "" {
		got = strings.Split(text, "\n")
	}
	for i := range got {
		got[i] = strings.TrimRight(got[i], " \t\r")
	}
	if !matches(s.out, got) {
		t.Errorf("%s:%d: $ %s\nprints:\n%s\nthe guide shows:\n%s", file, s.line, s.cmd,
			strings.Join(got, "\n"), strings.Join(s.out, "\n"))
	}
	if s.exit >= 0 && code != s.exit {
		t.Errorf("%s:%d: $ %s\nexits %d, the guide says %d", file, s.line, s.cmd, code, s.exit)
	}
}

// mirror returns a new folder holding a link to each top-level entry of
// repo (.git aside) and an empty tmp folder, so that commands read the
// repository's files and write only there.
func mirror(t *testing.T, repo string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTranscripts(t *testing.T) {
	doc := strings.Join([]string{
		"# Title",           // 1
		"```",               // 2: not marked
		"$ ignored",         // 3
		"```",               // 4
		transcriptMarker,    // 5
		"```sh",             // 6
		"$ echo a |",        // 7
		"    cat",           // 8
		"a        # exit 0", // 9
		"$ false",           // 10
		"b",                 // 11
		"...",               // 12
		"```",               // 13
	}, "\n")
	got, err := transcripts("d.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []step{
		{line: 7, cmd: "echo a |\n    cat", out: []string{"a"}, exit: 0},
		{line: 10, cmd: "false", out: []string{"b", "..."}, exit: -1},
	}
	if len(got) != 1 || got[0].line != 6 || len(got[0].steps) != len(want) {
		t.Fatalf("transcripts(doc) = %+v, want one block at line 6 with %d steps", got, len(want))
	}
	for i := range want {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			g := got[0].steps[i]
			if g.line != want[i].line || g.cmd != want[i].cmd || g.exit != want[i].exit ||
				strings.Join(g.out, "\n") != strings.Join(want[i].out, "\n") {
				t.Errorf("step %d = %+v, want %+v", i, g, want[i])
			}
		})
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"no fence", transcriptMarker + "\ntext", "d.md:1: " + transcriptMarker + " is not followed by a fenced block"},
		{"no command", transcriptMarker + "\n```\nout\n```", "d.md:3: transcript output before any \"$ \" command"},
		{"empty", transcriptMarker + "\n```\n```", "d.md:2: a transcript block holds no \"$ \" command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := transcripts("d.md", tc.doc)
			if err == nil || err.Error() != tc.want {
				t.Errorf("transcripts(%q) error = %v, want %q", tc.doc, err, tc.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		name       string
		shown, got []string
		want       bool
	}{
		{"same", []string{"a", "b"}, []string{"a", "b"}, true},
		{"more printed", []string{"a"}, []string{"a", "b"}, false},
		{"less printed", []string{"a", "b"}, []string{"a"}, false},
		{"differs", []string{"a", "b"}, []string{"a", "c"}, false},
		{"rest elided", []string{"a", "..."}, []string{"a", "b", "c"}, true},
		{"elided but differs", []string{"x", "..."}, []string{"a", "b"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := matches(tc.shown, tc.got); got != tc.want {
				t.Errorf("matches(%q, %q) = %v, want %v", tc.shown, tc.got, got, tc.want)
			}
		})
	}
}
