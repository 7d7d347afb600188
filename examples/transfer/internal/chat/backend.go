package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/examples/transfer/catalog"
	"github.com/toolgate/toolgate/internal/cli"
	"github.com/toolgate/toolgate/internal/embedflags"
	"github.com/toolgate/toolgate/internal/termtext"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
)

const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Options is what a program running the chat command gives [Run].
type Options struct {
	// Backends are the model backends linked into the program, by
	// --backend name. The scripted model is always there.
	Backends map[string]Backend
	// Usage is chat's help text (the flags are added to it).
	Usage cli.Usage
	// Catalogs returns the demo's embedded MCP catalogs.
	Catalogs func() ([]tools.Tool, error)
	// Stdin is what chat reads requests and approval answers from.
	Stdin io.Reader
	// Embedders are the embedding clients linked into the program, by
	// --embed-api value ([embedflags.API]): a backend program links its
	// own SDK's, the demo none.
	Embedders map[string]embedflags.API
	// GoCommand is the go command that builds a backend's program
	// ([Programs]) for a --backend the program does not link; "" is "go".
	GoCommand string
}

// Flags are the command-line flags a [Backend] reads.
type Flags struct {
	// Model is --model ("": the backend's default).
	Model string
	// API is --api: "chat" or "responses" (OpenAI).
	API string
	// Mode is --mode ("": the backend's default; see [ModeOr]).
	Mode string
	// Temperature and Seed are --temperature and --seed; nil means the
	// server's default.
	Temperature *float64
	Seed        *int64
	// Library is --library: llama.cpp's libllama.so for --backend local
	// ("": $TOOLGATE_LIBLLAMA).
	Library string
}

// Setup is a model backend ready for the agent, with how to run it.
type Setup struct {
	Backend llm.Backend
	Mode    llm.Mode
	// Model names the model in chat's banner.
	Model string
	// Deferred is hosted deferred loading ([runtime.Options.Deferred]);
	// StrictSchemas asks for strict-form schemas (OpenAI).
	Deferred, StrictSchemas bool
	// ContextTokens is the model's context window when the server
	// reports it (0: unknown), for [runtime.Options.FitContext].
	ContextTokens int
}

// Backend builds a model backend from chat's flags.
type Backend func(ctx context.Context, f Flags) (Setup, error)

// Programs are the main packages that each link one backend's SDK, by
// --backend name. A program that does not link a backend builds its
// program and runs it with the same arguments, so that
// "go run ./examples/transfer chat --backend openai" works while the
// demo compiles no SDK.
var Programs = map[string]string{
	"ollama":    "github.com/toolgate/toolgate/examples/transfer/chat/ollama",
	"openai":    "github.com/toolgate/toolgate/examples/transfer/chat/openai",
	"anthropic": "github.com/toolgate/toolgate/examples/transfer/chat/anthropic",
	"local":     "github.com/toolgate/toolgate/examples/transfer/chat/local",
}

// runProgram builds the program of backend (cached in the user's cache
// folder: go build relinks only when a source changed) and runs it with
// args, passing stdin, stdout, stderr, SIGINT and SIGTERM through; its
// exit code is chat's.
func runProgram(ctx context.Context, backend string, args []string, stdout, stderr io.Writer, opts *Options) int {
	pkg, ok := Programs[backend]
	if !ok {
		fmt.Fprintf(stderr, "transfer chat: --backend %s is not linked into this program\n", backend)
		return exitUsage
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "toolgate", "transfer")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		fmt.Fprintf(stderr, "transfer chat: %v\n", err)
		return exitFailure
	}
	exe := filepath.Join(dir, "chat-"+backend)
	goCmd := opts.GoCommand
	if goCmd == "" {
		goCmd = "go"
	}
	if _, err := os.Stat(exe); err != nil {
		fmt.Fprintf(stderr, "transfer chat: building %s, which links the %s SDK (the first time takes minutes)\n", pkg, backend)
	}
	build := exec.CommandContext(ctx, goCmd, "build", "-o", exe, pkg)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(stderr, "transfer chat: --backend %s runs its own program, %s, which links the %s SDK; building it failed (%v): run \"go run %s\" from the toolgate module\n",
			backend, pkg, backend, err, pkg)
		return exitFailure
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.Stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "transfer chat: %v\n", err)
		return exitFailure
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case err := <-done:
			var exit *exec.ExitError
			switch {
			case err == nil:
				return exitOK
			case errors.As(err, &exit) && exit.ExitCode() >= 0:
				return exit.ExitCode()
			}
			fmt.Fprintf(stderr, "transfer chat: %s: %v\n", pkg, err)
			return exitFailure
		}
	}
}

// Main is the main function of a backend's own program ([Programs]): the
// chat command with that one backend linked, on the process's arguments
// and standard streams, its output through termtext as in transfer.
func Main(name string, b Backend, embedders map[string]embedflags.API) int {
	out, errOut := termtext.NewWriter(os.Stdout), termtext.NewWriter(os.Stderr)
	defer errOut.Flush()
	defer out.Flush()
	pkg := strings.TrimPrefix(Programs[name], "github.com/toolgate/toolgate/")
	return Run(context.Background(), os.Args[1:], out, errOut, &Options{
		Backends:  map[string]Backend{name: b},
		Embedders: embedders,
		Usage: cli.Usage{
			Synopsis: "go run ./" + pkg + " --backend " + name + " [transfer chat's flags]",
			Summary:  "transfer chat with the " + name + " backend linked: what `go run ./examples/transfer chat --backend " + name + "` runs.",
			Examples: []string{"go run ./examples/transfer chat --help"},
		},
		Catalogs: catalog.Load,
		Stdin:    os.Stdin,
	})
}
