package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

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
