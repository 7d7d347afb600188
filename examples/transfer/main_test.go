package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUsageErrors(t *testing.T) {
	for i, args := range [][]string{
		{"nope"},
		{"serve"},
		{"serve", "--data", t.TempDir()},
		{"serve", "--tokens", "x.json"},
		{"serve", "--data", t.TempDir(), "--tokens", "does-not-exist.json"},
		{"serve", "--data", t.TempDir(), "--tokens", "testdata/tokens.json", "--tool-timeout", "0s"},
		{"serve", "--bogus"},
		{"demo-args", "x"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			code, _, errOut := runArgs(args...)
			if code != exitUsage || strings.Count(errOut, "\n") != 1 {
				t.Errorf("run(%q) = %d, stderr %q; want 2 with a one-line reason", args, code, errOut)
			}
		})
	}
}

// TestUnusableTokenRefused: a token no request can present stops serve at
// start: exit 2, one line "PATH:LINE: reason", never the token.
func TestUnusableTokenRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, token, reason string
	}{
		{"blank", ` `, `principal "mallory" has an empty token`},
		{"space inside", `tok-m tok-n`, `principal "mallory" has a token with whitespace`},
		{"control character", `tok-m\u0007`, `principal "mallory" has a token with a control character`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "tokens.json")
			body := "{\"tokens\":{\n  \"tok-alice\":{\"principal\":\"alice\",\"tenant\":\"acme\"},\n  \"" + tc.token + "\":{\"principal\":\"mallory\",\"tenant\":\"acme\"}}}\n"
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			// The deadline only ends a server that accepted the file.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var out, errOut bytes.Buffer
			code := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "data"), "--tokens", path}, &out, &errOut)
			got := errOut.String()
			if code != exitUsage || strings.Count(got, "\n") != 1 || !strings.Contains(got, path+":3: "+tc.reason) {
				t.Errorf("transfer serve = exit %d, stderr %q; want 2 and one line with %q", code, got, path+":3: "+tc.reason)
			}
			if strings.Contains(got, "tok-m") {
				t.Errorf("stderr %q reveals the token", got)
			}
		})
	}
}
