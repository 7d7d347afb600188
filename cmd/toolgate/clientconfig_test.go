package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiscoverClientConfig: --mcp-config reads the server list each
// client writes (Claude Desktop's "mcpServers", a "command" with its
// "args"; Cline's "transportType"; Windsurf's "disabledTools": []; Zed's
// "context_servers" in its settings, with comments, trailing commas and
// the older "command" object), starts server-memory from it with the env
// it names ("${env:VAR}" from toolgate's environment), leaves a disabled
// server out and lists the memory tools; an "sse" server is refused with
// the file's line.
func TestDiscoverClientConfig(t *testing.T) {
	memory := memoryServer(t)
	dir := t.TempDir()
	t.Setenv("TG_TEST_MEMORY_FILE", filepath.Join(dir, "memory.jsonl"))
	args, _ := json.Marshal([]string{memory})
	for _, tc := range []struct{ name, file, body string }{
		{"claude desktop", "claude_desktop_config.json", `{"mcpServers": {
  "memory": {"command": "node", "args": ` + string(args) + `, "env": {"MEMORY_FILE_PATH": "${env:TG_TEST_MEMORY_FILE}"},
             "autoApprove": ["read_graph"]},
  "off": {"command": "/nonexistent/off-server", "disabled": true}}}`},
		{"cline", "cline_mcp_settings.json", `{
  "mcpServers": {
    "memory": {
      "autoApprove": [],
      "disabled": false,
      "timeout": 60,
      "transportType": "stdio",
      "command": "node",
      "args": ` + string(args) + `,
      "env": {"MEMORY_FILE_PATH": "${env:TG_TEST_MEMORY_FILE}"}
    },
    "off": {"transportType": "sse", "url": "http://127.0.0.1:1/sse", "disabled": true}
  }
}`},
		{"windsurf", "mcp_config.json", `{
  "mcpServers": {
    "memory": {
      "command": "node",
      "args": ` + string(args) + `,
      "env": {"MEMORY_FILE_PATH": "${env:TG_TEST_MEMORY_FILE}"},
      "disabledTools": []
    },
    "off": {"serverUrl": "http://127.0.0.1:1/mcp", "disabled": true}
  }
}`},
		{"zed", "settings.json", `// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16, // points
  "theme": {"mode": "system", "light": "One Light", "dark": "One Dark"},
  "context_servers": {
    "memory": {
      "command": {"path": "node", "args": ` + string(args) + `, "env": {"MEMORY_FILE_PATH": "${env:TG_TEST_MEMORY_FILE}"}},
      "settings": {},
    },
    "off": {"source": "custom", "enabled": false, "command": "/nonexistent/off-server", "args": []},
  },
}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := writeFile(t, tc.file, tc.body)
			code, stdout, stderr := runCmd("discover", "--mcp-config", config, "--k", "3", "--format", "json",
				"add an observation about an entity to the knowledge graph")
			if code != exitOK {
				t.Fatalf("discover --mcp-config %s = exit %d (stderr %q)", tc.file, code, stderr)
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
		})
	}

	sse := writeFile(t, "sse.json", "{\"mcpServers\": {\n  \"old\": {\"type\": \"sse\", \"url\": \"http://127.0.0.1:1/sse\"}}}")
	code, _, stderr := runCmd("discover", "--mcp-config", sse, "read a note")
	want := sse + `:2: server "old" "type": "sse" is the older HTTP+SSE transport; toolgate speaks Streamable HTTP only`
	if code != exitUsage || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("discover with an sse server = %d, stderr %q; want 2 and one line with %q", code, stderr, want)
	}
}
