package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPPassEnv: a --mcp server gets toolgate's default environment only
// (tools/mcp), so a variable of serve's environment reaches it when
// --mcp-pass-env names it, and not otherwise. calc (testdata/calc) counts
// its runs in the file CALC_COUNT names: that file is its witness.
func TestMCPPassEnv(t *testing.T) {
	s := newCalcServe(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	env := []string{"CALC_COUNT=" + s.count}
	call := `{"session_id":"s1","step":1,"tool":"calc/add","arguments":{"a":2,"b":40}}`
	for _, tc := range []struct {
		name  string
		flags []string
		want  string // the count file after the call
	}{
		{"not named: calc does not see it", nil, ""},
		{"named", []string{"--mcp-pass-env", "HOME,CALC_COUNT"}, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(s.count)
			args := append([]string{"--mcp", "calc=" + s.calc, "--tokens", s.tokens, "--data", filepath.Join(t.TempDir(), "data")}, tc.flags...)
			p := s.start(t, ctx, env, args...)
			if status, out := p.post(t, "tok-a", "/v1/tools/call", call); status != 200 {
				t.Fatalf("calc/add = %d %v, want 200", status, out)
			}
			stopClean(t, p)
			if n, _ := os.ReadFile(s.count); string(n) != tc.want {
				t.Errorf("calc's count file holds %q, want %q", n, tc.want)
			}
		})
	}
}

// TestMCPPassEnvUsage: a --mcp-pass-env that is not a variable name, or
// has no --mcp server to go to, is a usage error that says so.
func TestMCPPassEnvUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a value", []string{"--mcp", "true", "--mcp-pass-env", "TOKEN=secret"}, `"TOKEN=…" is not a variable name`},
		{"empty", []string{"--mcp", "true", "--mcp-pass-env", "A,,B"}, `"" is not a variable name`},
		{"no --mcp", []string{"--mcp-url", "http://127.0.0.1:1/mcp", "--mcp-pass-env", "TOKEN"}, "no --mcp server to pass it to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCmd(append([]string{"discover"}, append(tc.args, "add two numbers")...)...)
			if code == exitOK || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "secret") {
				t.Errorf("discover %v = exit %d, stderr %q; want a failure saying %q, without the value", tc.args, code, stderr, tc.want)
			}
		})
	}
}
