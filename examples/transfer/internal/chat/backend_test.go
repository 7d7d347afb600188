package chat_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/examples/transfer/catalog"
	"github.com/toolgate/toolgate/examples/transfer/internal/chat"
	"github.com/toolgate/toolgate/internal/testenv"
)

// sdks are the vendor SDK modules a backend program may link; the local
// backend's is purego, through which it loads llama.cpp's library.
var sdks = []string{"github.com/openai/openai-go", "github.com/anthropics/anthropic-sdk-go", "github.com/ollama/ollama", "github.com/ebitengine/purego"}

// TestProgramsLinkOneSDK pins the cold start (docs/example.md): the demo
// program links no model SDK, and each backend's program links its own
// SDK and no other.
func TestProgramsLinkOneSDK(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root := testenv.RepoRoot(t)
	rows := map[string]string{"github.com/toolgate/toolgate/examples/transfer": ""}
	for name, pkg := range chat.Programs {
		rows[pkg] = map[string]string{"ollama": sdks[2], "openai": sdks[0], "anthropic": sdks[1], "local": sdks[3]}[name]
	}
	for pkg, want := range rows {
		t.Run(pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", pkg)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", pkg, err)
			}
			for _, sdk := range sdks {
				t.Run(sdk, func(t *testing.T) {
					linked := bytes.Contains(out, []byte("\n"+sdk))
					if linked != (sdk == want) {
						t.Errorf("%s links %s: %v, want %v", pkg, sdk, linked, sdk == want)
					}
				})
			}
		})
	}
}

// fakeGo writes a go command that "builds" a program printing its
// arguments and first stdin line and exiting 3, and records the package.
func fakeGo(t *testing.T, buildFails bool) (goCmd, pkgFile string) {
	dir := t.TempDir()
	pkgFile = filepath.Join(dir, "pkg")
	script := "#!/bin/sh\necho \"$4\" > " + pkgFile + "\n"
	if buildFails {
		script += "echo 'cannot find package' >&2\nexit 1\n"
	} else {
		script += "printf '#!/bin/sh\\necho \"args: $*\"\\nread l\\necho \"stdin: $l\"\\nexit 3\\n' > \"$3\"\nchmod +x \"$3\"\n"
	}
	goCmd = filepath.Join(dir, "go")
	if err := os.WriteFile(goCmd, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	return goCmd, pkgFile
}

func TestRunHandsUnlinkedBackendToItsProgram(t *testing.T) {
	goCmd, pkgFile := fakeGo(t, false)
	args := []string{"--backend", "anthropic", "--principal", "alice", "--tenant", "acme", "--once", "hi there"}
	var out, errOut bytes.Buffer
	code := chat.Run(context.Background(), args, &out, &errOut, &chat.Options{
		Catalogs: catalog.Load, Stdin: strings.NewReader("yes\n"), GoCommand: goCmd,
	})
	if code != 3 {
		t.Fatalf("exit %d, want the program's 3; stderr %q", code, errOut.String())
	}
	if got, _ := os.ReadFile(pkgFile); strings.TrimSpace(string(got)) != chat.Programs["anthropic"] {
		t.Errorf("built %q, want %q", got, chat.Programs["anthropic"])
	}
	for _, want := range []string{"args: " + strings.Join(args, " "), "stdin: yes"} {
		t.Run(want, func(t *testing.T) {
			if !strings.Contains(out.String(), want) {
				t.Errorf("stdout %q lacks %q", out.String(), want)
			}
		})
	}
	if !strings.Contains(errOut.String(), "building "+chat.Programs["anthropic"]) {
		t.Errorf("the first build is not announced on stderr: %q", errOut.String())
	}
	// Built once, the program runs again without the notice.
	errOut.Reset()
	code = chat.Run(context.Background(), args, &out, &errOut, &chat.Options{
		Catalogs: catalog.Load, Stdin: strings.NewReader("yes\n"), GoCommand: goCmd,
	})
	if code != 3 || strings.Contains(errOut.String(), "building") {
		t.Errorf("second run: exit %d, stderr %q; want 3 and no build notice", code, errOut.String())
	}
}

func TestRunHandOffErrors(t *testing.T) {
	goCmd, _ := fakeGo(t, true)
	for name, row := range map[string]struct {
		args     []string
		code     int
		inStderr string
	}{
		"build fails":              {[]string{"--backend", "openai", "--principal", "a", "--tenant", "t"}, 1, "go run " + chat.Programs["openai"]},
		"bad flags not handed off": {[]string{"--backend", "openai", "--principal", "a"}, 2, "--principal and --tenant are required"},
	} {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := chat.Run(context.Background(), row.args, &out, &errOut, &chat.Options{Catalogs: catalog.Load, Stdin: strings.NewReader(""), GoCommand: goCmd})
			if code != row.code || !strings.Contains(errOut.String(), row.inStderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut.String(), row.code, row.inStderr)
			}
		})
	}
}
