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

	"github.com/toolgate/toolgate/runtime/gateway/storeurl"
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

// TestStoreUnopenable: a store or ledger that cannot be opened stops serve
// at start as toolgate serve does: exit 2, one line naming what failed.
func TestStoreUnopenable(t *testing.T) {
	storeurl.QuietDriverLogs() // as main does: the redis row's retries are not the test's output
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	garbled := filepath.Join(dir, "garbled")
	if err := os.Mkdir(garbled, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(garbled, "gateway.db"), []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown scheme", []string{"--data", filepath.Join(dir, "a"), "--store", "ftp://store.example/x"}, `store "ftp://store.example/x": want redis://`},
		{"data folder is a file", []string{"--data", notDir}, notDir},
		{"gateway.db not a database", []string{"--data", garbled}, "gateway.db"},
		{"redis refuses", []string{"--data", filepath.Join(dir, "b"), "--store", "redis://127.0.0.1:1/0"}, "127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--tokens", "testdata/tokens.json"}, tc.args...)
			// The deadline only ends a server that opened its store.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			var out, errOut bytes.Buffer
			code := run(ctx, args, &out, &errOut)
			got := errOut.String()
			if code != exitUsage || strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, "transfer serve: ") || !strings.Contains(got, tc.want) {
				t.Errorf("transfer %q = exit %d, stderr %q; want 2 and one line with %q", args, code, got, tc.want)
			}
		})
	}
}
