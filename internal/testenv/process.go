package testenv

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Process is a program a test runs beside it, such as a server it talks
// to.
type Process struct {
	// Cmd is the running command.
	Cmd *exec.Cmd
	// Stderr holds what the program has written to stderr so far.
	Stderr *Buffer
	exited chan struct{}
	err    error
}

// StartProcess starts cmd, its stderr going to a [Buffer], and waits until
// it writes a stdout line that starts with prefix ("listening on ", the
// way toolgate's servers say where they are); it returns the process and
// the rest of that line. It fails the test when the program exits first or
// writes no such line within timeout. The rest of stdout is discarded. The
// program is killed when the test ends if it still runs.
func StartProcess(tb testing.TB, cmd *exec.Cmd, prefix string, timeout time.Duration) (*Process, string) {
	tb.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	p := &Process{Cmd: cmd, Stderr: &Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok && !found {
				line <- rest
				found = true
			}
		}
		io.Copy(io.Discard, stdout)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	tb.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
	})
	select {
	case rest := <-line:
		return p, rest
	case <-p.exited:
		tb.Fatalf("%s exited before writing %q: %v\nstderr: %s", cmd.Path, prefix, p.err, p.Stderr.String())
	case <-time.After(timeout):
		tb.Fatalf("%s wrote no line %q in %v\nstderr: %s", cmd.Path, prefix, timeout, p.Stderr.String())
	}
	return nil, ""
}

// Done is closed once the program has exited.
func (p *Process) Done() <-chan struct{} { return p.exited }

// Wait waits until the program has exited and returns what cmd.Wait
// returned. It may be called any number of times.
func (p *Process) Wait() error {
	<-p.exited
	return p.err
}
