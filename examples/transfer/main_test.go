package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != exitOK {
		t.Fatalf("run() = %d, want 0; stderr: %s", code, errOut.String())
	}
	for _, want := range []string{
		"109 tools",
		"executed: {\"amount\":250.00,",
		"cached=true (same key: true)",
		"denied: PERMISSION_DENIED (HTTP 403)",
		"ACC-00001 750.00 USD, ACC-00002 1250.00 USD",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"nope"},
		{"serve"},
		{"serve", "--data", t.TempDir()},
		{"serve", "--tokens", "x.json"},
		{"serve", "--data", t.TempDir(), "--tokens", "does-not-exist.json"},
		{"serve", "--data", t.TempDir(), "--tokens", "testdata/tokens.json", "--tool-timeout", "0s"},
		{"serve", "--bogus"},
		{"demo-args", "x"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		if code != exitUsage || strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("run(%q) = %d, stderr %q; want 2 with a one-line reason", args, code, errOut.String())
		}
	}
}
