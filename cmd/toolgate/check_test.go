package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolgate/toolgate/internal/testenv"
)

const checkGrammar = `# a tool call with one argument
root ::= "{" ws "\"tool\"" ws ":" ws tool ws "," ws "\"city\"" ws ":" ws city ws "}"
tool ::= "\"get_weather\"" | "\"get_time\""
city ::= "\"" [^"\\\x00-\x1F]{1,40} "\""
ws ::= [ \t\n]{0,4}
`

// writeFile writes content to name in a directory of its own.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	return testenv.WriteFile(t, t.TempDir(), name, content)
}

func TestCheckCommand(t *testing.T) {
	g := writeFile(t, "tool.gbnf", checkGrammar)
	bad := writeFile(t, "bad.gbnf", "root ::= \"a\"\nb = \"x\"\n")
	input := writeFile(t, "in.json", `{"tool": "get_time", "city": "Zürich"}`)
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"accepted from stdin", []string{"--grammar", g}, `{"tool":"get_weather","city":"Oslo"}`, exitOK, "accepted (36 bytes)", ""},
		{"accepted from file", []string{"--grammar", g, "--input", input}, "", exitOK, "accepted (39 bytes)", ""},
		{"stdin as -", []string{"--grammar", g, "--input", "-"}, `{"tool":"get_time","city":"Oslo"}`, exitOK, "accepted", ""},
		{"unknown tool", []string{"--grammar", g}, `{"tool":"get_wind","city":"Oslo"}`, exitNegative, "",
			`rejected at byte 14 (line 1, col 15): unexpected 'i'; expected 'e'`},
		{"extra property", []string{"--grammar", g}, "{\"tool\":\"get_time\",\n \"city\":\"Oslo\",\"units\":1}", exitNegative, "",
			"rejected at byte 34 (line 2, col 15): unexpected ','; expected byte 0x09 byte 0x0A ' ' '}'"},
		{"unfinished", []string{"--grammar", g}, `{"tool":"get_time","city":"Os`, exitNegative, "",
			"rejected at byte 29 (line 1, col 30): unexpected end of input; expected"},
		{"unfinished character", []string{"--grammar", g}, "{\"tool\":\"get_time\",\"city\":\"Z\xc3", exitNegative, "",
			"rejected at byte 28 (line 1, col 29): unexpected end of input"},
		{"invalid UTF-8", []string{"--grammar", g}, "{\"tool\":\"get_time\",\"city\":\"\xff\"}", exitNegative, "",
			"rejected at byte 27 (line 1, col 28): invalid UTF-8 (byte 0xFF)"},
		{"grammar syntax error", []string{"--grammar", bad}, "", exitUsage, "", bad + ":2:3: expecting ::="},
		{"grammar missing", []string{"--grammar", filepath.Join(t.TempDir(), "none.gbnf")}, "", exitUsage, "", "no such file"},
		{"input missing", []string{"--grammar", g, "--input", filepath.Join(t.TempDir(), "none")}, "", exitUsage, "", "no such file"},
		{"no grammar flag", nil, "", exitUsage, "", "usage: toolgate check --grammar"},
		{"unknown flag", []string{"--grammar", g, "--schema", "x"}, "", exitUsage, "", "flag provided but not defined"},
		{"extra argument", []string{"--grammar", g, "input.json"}, "", exitUsage, "", "usage:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkRun(t, append([]string{"check"}, tc.args...), strings.NewReader(tc.stdin), tc.code, tc.stdout, tc.stderr)
		})
	}
}

// checkRun runs toolgate args with stdin and checks its exit code, that
// stdout and stderr contain the given substrings, and that a failure is
// one line on stderr.
func checkRun(t *testing.T, args []string, stdin io.Reader, wantCode int, wantStdout, wantStderr string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, stdin, &stdout, &stderr)
	if code != wantCode {
		t.Errorf("toolgate %v = exit %d, want %d (stderr %q)", args, code, wantCode, stderr.String())
	}
	if !strings.Contains(stdout.String(), wantStdout) {
		t.Errorf("stdout = %q, want it to contain %q", stdout.String(), wantStdout)
	}
	if !strings.Contains(stderr.String(), wantStderr) {
		t.Errorf("stderr = %q, want it to contain %q", stderr.String(), wantStderr)
	}
	if wantCode != exitOK && strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("stderr = %q, want exactly one line", stderr.String())
	}
}

// TestCheckCommandStreams feeds the input one byte at a time, so that a
// multi-byte character is split across reads.
func TestCheckCommandStreams(t *testing.T) {
	g := writeFile(t, "tool.gbnf", checkGrammar)
	in := `{"tool":"get_time","city":"😀😀"}`
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"check", "--grammar", g}, iotest.OneByteReader(strings.NewReader(in)), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	g2 := writeFile(t, "smile.gbnf", `root ::= "\"" "😀"+ "\""`)
	stderr.Reset()
	code := run(context.Background(), []string{"check", "--grammar", g2}, iotest.OneByteReader(strings.NewReader("\"😀😁\"")), &stdout, &stderr)
	if code != exitNegative || !strings.Contains(stderr.String(), "rejected at byte 5 (line 1, col 6): unexpected byte 0x81 inside a multi-byte character") {
		t.Errorf("exit %d, stderr %q; want 1 and a rejection at byte 5", code, stderr.String())
	}
}

// TestCheckCommandAgreesWithLlama runs llama.cpp's gbnf-check on the same
// files: same exit code for accept/reject and the same byte offset.
func TestCheckCommandAgreesWithLlama(t *testing.T) {
	gc := testenv.GBNFCheck(t)
	g := writeFile(t, "tool.gbnf", checkGrammar)
	offset := regexp.MustCompile(`at byte (\d+) `)
	for _, in := range []string{
		`{"tool":"get_weather","city":"Oslo"}`,
		`{"tool":"get_wind","city":"Oslo"}`,
		"{\n\"tool\" : \"get_time\" ,\"city\":\"São Paulo\"}",
		`{"tool":"get_time","city":"Os`,
		"{\"tool\":\"get_time\",\"city\":\"\xff\"}",
		`{"tool":"get_time","city":""}`,
	} {
		t.Run(in, func(t *testing.T) {
			input := writeFile(t, "in", in)
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"check", "--grammar", g, "--input", input}, nil, &stdout, &stderr)
			out, err := exec.Command(gc, g, input).CombinedOutput()
			llamaCode := 0
			if ee, ok := err.(*exec.ExitError); ok {
				llamaCode = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != llamaCode {
				t.Errorf("%q: toolgate check exit %d (%s), gbnf-check exit %d (%s)", in, code, stderr.String(), llamaCode, out)
				return
			}
			ours, theirs := offset.FindStringSubmatch(stderr.String()), offset.FindStringSubmatch(string(out))
			if (ours == nil) != (theirs == nil) || ours != nil && ours[1] != theirs[1] {
				t.Errorf("%q: toolgate check says %q, gbnf-check says %q", in, stderr.String(), out)
			}
		})
	}
}

// TestCheckHelpExampleAsWritten runs the help's grammar and check examples
// in a shell, as a reader would copy them: the turn grammar of two bank
// tools, then the documented answer checked against it, accepted.
func TestCheckHelpExampleAsWritten(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	bin := buildToolgate(t)
	dir := t.TempDir()
	bank := `{"name":"get_balance","description":"Show the balance of an account","inputSchema":{"type":"object","properties":{"account":{"type":"string"}},"required":["account"]}}
{"name":"transfer_funds","description":"Move money between accounts","inputSchema":{"type":"object","properties":{"source_account":{"type":"string"},"target_account":{"type":"string"},"amount":{"type":"number"}},"required":["source_account","target_account","amount"]}}
`
	if err := os.WriteFile(filepath.Join(dir, "bank.jsonl"), []byte(bank), 0o644); err != nil {
		t.Fatal(err)
	}
	var script []string
	for _, e := range helps["grammar"].Examples {
		if strings.Contains(e, "> turn.gbnf") {
			script = append(script, e)
		}
	}
	script = append(script, helps["check"].Examples...)
	if len(script) != 1+len(helps["check"].Examples) {
		t.Fatalf("the grammar help has no example writing turn.gbnf: %q", helps["grammar"].Examples)
	}
	for _, line := range script {
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
	}
}

// TestCheckTrailingNewlineHint: a newline after a complete sentence is
// rejected (the input is checked byte for byte) with a hint naming echo.
func TestCheckTrailingNewlineHint(t *testing.T) {
	g := writeFile(t, "a.gbnf", `root ::= "{}"`+"\n")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"check", "--grammar", g}, strings.NewReader("{}\n"), &out, &errb)
	if want := "expected end of input (a trailing newline? the input is checked byte for byte: use printf '%s', not echo)\n"; code != exitNegative || !strings.HasSuffix(errb.String(), want) {
		t.Errorf("check {}\\n = %d, %q; want 1 and a stderr ending %q", code, errb.String(), want)
	}
}
