package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiscoverClientConfig: --mcp-config reads the server list Claude
// Desktop writes ("mcpServers", a "command" with its "args"), starts
// server-memory from it with the env it names ("${env:VAR}" from
// toolgate's environment), leaves a "disabled" server out and lists the
// memory tools; an "sse" server is refused with the file's line.
func TestDiscoverClientConfig(t *testing.T) {
	memory := memoryServer(t)
	dir := t.TempDir()
	t.Setenv("TG_TEST_MEMORY_FILE", filepath.Join(dir, "memory.jsonl"))
	args, _ := json.Marshal([]string{memory})
	config := writeFile(t, "claude_desktop_config.json", `{"mcpServers": {
  "memory": {"command": "node", "args": `+string(args)+`, "env": {"MEMORY_FILE_PATH": "${env:TG_TEST_MEMORY_FILE}"},
             "autoApprove": ["read_graph"]},
  "off": {"command": "/nonexistent/off-server", "disabled": true}}}`)
	code, stdout, stderr := runCmd("discover", "--mcp-config", config, "--k", "3", "--format", "json",
		"add an observation about an entity to the knowledge graph")
	if code != exitOK {
		t.Fatalf("discover --mcp-config claude_desktop_config.json = exit %d (stderr %q)", code, stderr)
	}
	var out struct {
		Candidates []struct{ Name string }
		Authorized int
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Authorized != 9 || len(out.Candidates) == 0 || out.Candidates[0].Name != "memory/add_observations" {
		t.Errorf("discover = %+v, want memory/add_observations first of the 9 memory tools", out)
	}

	sse := writeFile(t, "sse.json", "{\"mcpServers\": {\n  \"old\": {\"type\": \"sse\", \"url\": \"http://127.0.0.1:1/sse\"}}}")
	code, _, stderr = runCmd("discover", "--mcp-config", sse, "read a note")
	want := sse + `:2: server "old" "type": "sse" is the older HTTP+SSE transport; toolgate speaks Streamable HTTP only`
	if code != exitUsage || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("discover with an sse server = %d, stderr %q; want 2 and one line with %q", code, stderr, want)
	}
}
