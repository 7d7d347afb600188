package mcp

import (
	"errors"
	"os"
	"reflect"
	"testing"
)

// TestParseClientConfig reads the server lists other MCP clients write.
func TestParseClientConfig(t *testing.T) {
	t.Setenv("TG_TEST_TOKEN", "s3cret")
	t.Setenv("TG_TEST_EMPTY", "")
	tests := []struct {
		name, in string
		want     []Server
	}{
		{"claude desktop", `{"mcpServers": {
			"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "/tmp/m.json"}},
			"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]}}}`,
			[]Server{
				{Name: "fs", Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"}},
				{Name: "memory", Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"}, Env: map[string]string{"MEMORY_FILE_PATH": "/tmp/m.json"}},
			}},
		{"cursor url", `{"mcpServers": {"docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${env:TG_TEST_TOKEN}"}}}}`,
			[]Server{{Name: "docs", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}}}},
		{"claude code types", `{"mcpServers": {
			"a": {"type": "stdio", "command": "a-server", "env": {"T": "${TG_TEST_TOKEN}", "D": "${TG_TEST_UNSET:-dflt}", "E": "${TG_TEST_EMPTY:-e}"}},
			"b": {"type": "http", "url": "https://b.example/mcp"},
			"c": {"type": "streamable-http", "url": "https://c.example/mcp"}}}`,
			[]Server{
				{Name: "a", Command: []string{"a-server"}, Env: map[string]string{"T": "s3cret", "D": "dflt", "E": "e"}},
				{Name: "b", URL: "https://b.example/mcp"},
				{Name: "c", URL: "https://c.example/mcp"},
			}},
		{"client members ignored, disabled left out", `{"mcpServers": {
			"a": {"command": "a-server", "autoApprove": ["read"], "alwaysAllow": [], "timeout": 60},
			"off": {"command": "off-server", "disabled": true},
			"on": {"command": "on-server", "disabled": false}}}`,
			[]Server{{Name: "a", Command: []string{"a-server"}}, {Name: "on", Command: []string{"on-server"}}}},
		{"toolgate members in a client entry", `{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
			"pass_env": ["GITHUB_PERSONAL_ACCESS_TOKEN"], "scopes": ["gh:read"]}}}`,
			[]Server{{Name: "gh", Command: []string{"npx", "-y", "@modelcontextprotocol/server-github"},
				PassEnv: []string{"GITHUB_PERSONAL_ACCESS_TOKEN"}, Scopes: []string{"gh:read"}}}},
		{"vs code", `{"inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
			"servers": {
			"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
			"web": {"type": "http", "url": "https://web.example/mcp", "headers": {"X-Key": "k"}}}}`,
			[]Server{
				{Name: "memory", Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"}},
				{Name: "web", URL: "https://web.example/mcp", Headers: map[string]string{"X-Key": "k"}},
			}},
		{"toolgate format beside a vs code entry", `{"servers": {
			"ours": {"command": ["ours-server", "--flag"], "scopes": ["s"]},
			"theirs": {"command": "theirs-server", "args": ["--flag"]}}}`,
			[]Server{
				{Name: "ours", Command: []string{"ours-server", "--flag"}, Scopes: []string{"s"}},
				{Name: "theirs", Command: []string{"theirs-server", "--flag"}},
			}},
		{"cline", `{
  "mcpServers": {
    "memory": {
      "autoApprove": ["read_graph"],
      "disabled": false,
      "timeout": 60,
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "env": {}
    },
    "git": {
      "transportType": "stdio",
      "command": "uvx",
      "args": ["mcp-server-git", "--repository", "/srv/repo"],
      "alwaysAllow": ["git_status"],
      "disabled": false,
      "timeout": 60
    },
    "docs": {
      "autoApprove": [],
      "disabled": false,
      "timeout": 30,
      "url": "https://docs.example/mcp",
      "type": "streamableHttp"
    },
    "search": {
      "transportType": "streamableHttp",
      "type": "streamableHttp",
      "url": "https://search.example/mcp",
      "headers": {"Authorization": "Bearer ${env:TG_TEST_TOKEN}"}
    },
    "off": {"transportType": "sse", "url": "https://off.example/sse", "disabled": true}
  }
}`,
			[]Server{
				{Name: "docs", URL: "https://docs.example/mcp"},
				{Name: "git", Command: []string{"uvx", "mcp-server-git", "--repository", "/srv/repo"}},
				{Name: "memory", Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"}, Env: map[string]string{}},
				{Name: "search", URL: "https://search.example/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}},
			}},
		{"roo code", `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv/projects"],
      "alwaysAllow": ["read_file", "list_directory"],
      "disabled": false,
      "timeout": 60,
      "watchPaths": ["/srv/projects/build/index.js"],
      "disabledTools": []
    },
    "remote": {
      "type": "streamable-http",
      "url": "https://remote.example/mcp",
      "headers": {"X-API-Key": "${env:TG_TEST_TOKEN}"},
      "alwaysAllow": []
    }
  }
}`,
			[]Server{
				{Name: "filesystem", Command: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/projects"}},
				{Name: "remote", URL: "https://remote.example/mcp", Headers: map[string]string{"X-API-Key": "s3cret"}},
			}},
		{"windsurf", `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "${env:TG_TEST_TOKEN}"},
      "disabled": false,
      "disabledTools": []
    },
    "figma": {
      "serverUrl": "https://figma.example/mcp",
      "headers": {"Authorization": "Bearer ${env:TG_TEST_TOKEN}"}
    },
    "both": {"url": "https://both.example/mcp", "serverUrl": "https://both.example/mcp"},
    "slack": {"command": "npx", "args": ["-y", "slack-mcp"], "disabled": true, "disabledTools": ["post_message"]}
  }
}`,
			[]Server{
				{Name: "both", URL: "https://both.example/mcp"},
				{Name: "figma", URL: "https://figma.example/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}},
				{Name: "github", Command: []string{"npx", "-y", "@modelcontextprotocol/server-github"}, Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "s3cret"}},
			}},
		{"zed", `{
  "ui_font_size": 16,
  "buffer_font_size": 15,
  "theme": {"mode": "system", "light": "One Light", "dark": "One Dark"},
  "agent": {"default_model": {"provider": "zed.dev", "model": "claude-sonnet-4"}},
  "context_servers": {
    "memory": {
      "source": "custom",
      "enabled": true,
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory"],
      "env": {"MEMORY_FILE_PATH": "/tmp/m.json"}
    },
    "docs": {
      "url": "https://docs.example/mcp",
      "headers": {"Authorization": "Bearer ${env:TG_TEST_TOKEN}"}
    },
    "paused": {"source": "custom", "enabled": false, "command": "paused-server", "args": []}
  },
  "languages": {"Go": {"format_on_save": "on"}}
}`,
			[]Server{
				{Name: "docs", URL: "https://docs.example/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}},
				{Name: "memory", Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"}, Env: map[string]string{"MEMORY_FILE_PATH": "/tmp/m.json"}},
			}},
		{"zed command object", `{
  "context_servers": {
    "postgres": {
      "command": {
        "path": "/usr/local/bin/postgres-context-server",
        "args": ["postgresql://localhost/db"],
        "env": {"PGPASSWORD": "${env:TG_TEST_TOKEN}"}
      },
      "settings": {}
    }
  }
}`,
			[]Server{{Name: "postgres", Command: []string{"/usr/local/bin/postgres-context-server", "postgresql://localhost/db"},
				Env: map[string]string{"PGPASSWORD": "s3cret"}}}},
		{"zed settings with comments and trailing commas", `// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
//
// To see all of Zed's default settings without changing your
// custom settings, run ` + "`zed: open default settings`" + ` from the
// command palette (cmd-shift-p / ctrl-shift-p)
{
  "ui_font_size": 16,
  "buffer_font_size": 15,
  /* the agent's servers */
  "context_servers": {
    "memory": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-memory",], // pinned below
      "env": {"MEMORY_FILE_PATH": "https://not/a//comment /* nor this */"},
    },
  },
}
`,
			[]Server{{Name: "memory", Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"},
				Env: map[string]string{"MEMORY_FILE_PATH": "https://not/a//comment /* nor this */"}}}},
		{"vs code with comments", `{
	// A prompt VS Code shows; toolgate has none, and needs none here.
	"inputs": [],
	"servers": {
		"memory": {
			"type": "stdio",
			"command": "npx",
			"args": ["-y", "@modelcontextprotocol/server-memory"] /* the official one */
		}
	}
}`,
			[]Server{{Name: "memory", Command: []string{"npx", "-y", "@modelcontextprotocol/server-memory"}}}},
		{"empty mcpServers", `{"mcpServers": {}}`, []Server{}},
		{"the client's other settings ignored", `{"globalShortcut": "Ctrl+Space", "preferences": {"menuBarEnabled": false},
			"mcpServers": {"a": {"command": "a-server"}}, "inputs": [{"id": "x"}]}`,
			[]Server{{Name: "a", Command: []string{"a-server"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig([]byte(tt.in), "c.json")
			if err != nil {
				t.Fatalf("parseConfig: %v", err)
			}
			if got := c.List(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("List() = %+v\nwant     %+v", got, tt.want)
			}
		})
	}
}

func TestParseClientConfigErrors(t *testing.T) {
	t.Setenv("TG_TEST_SECRET_URL", "s3cr3t-token@mcp.example/x")
	t.Setenv("TG_TEST_UNSET", "")
	if err := os.Unsetenv("TG_TEST_UNSET"); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, in, want string }{
		{"sse", "{\"mcpServers\": {\"old\": {\n\"type\": \"sse\", \"url\": \"https://old.example/sse\"}}}",
			`c.json:2: server "old" "type": "sse" is the older HTTP+SSE transport; toolgate speaks Streamable HTTP only (give the server's Streamable HTTP endpoint, "type": "http")`},
		{"unknown type", `{"mcpServers": {"a": {"type": "ws", "url": "https://a.example/"}}}`,
			`c.json:1: server "a" "type": "ws" is none of stdio, http, streamable-http and streamableHttp`},
		{"cline sse", "{\"mcpServers\": {\"old\": {\"url\": \"https://old.example/sse\",\n\"transportType\": \"sse\", \"disabled\": false}}}",
			`c.json:2: server "old" "transportType": "sse" is the older HTTP+SSE transport; toolgate speaks Streamable HTTP only (give the server's Streamable HTTP endpoint, "type": "http")`},
		{"cline unknown transportType", "{\"mcpServers\": {\"a\": {\"url\": \"https://a.example/\",\n\"transportType\": \"websocket\"}}}",
			`c.json:2: server "a" "transportType": "websocket" is none of stdio, http, streamable-http and streamableHttp`},
		{"type and transportType disagree", "{\"mcpServers\": {\"a\": {\"type\": \"stdio\", \"command\": \"x\",\n\"transportType\": \"streamableHttp\"}}}",
			`c.json:2: server "a" "transportType": "streamableHttp" disagrees with "type": "stdio"`},
		{"transportType http with a command", `{"mcpServers": {"a": {"transportType": "streamableHttp", "command": "x"}}}`,
			`c.json:1: server "a" "command": a command for an HTTP server ("transportType": "streamableHttp")`},
		{"url and serverUrl disagree", "{\"mcpServers\": {\"a\": {\"url\": \"https://a.example/mcp\",\n\"serverUrl\": \"https://b.example/mcp\"}}}",
			`c.json:2: server "a" "serverUrl": "https://b.example/mcp" disagrees with "url": "https://a.example/mcp"`},
		{"serverUrl for a stdio server", "{\"mcpServers\": {\"a\": {\"type\": \"stdio\",\n\"serverUrl\": \"https://a.example/mcp\"}}}",
			`c.json:2: server "a" "serverUrl": a url for a "stdio" server`},
		{"serverUrl placeholder", "{\"mcpServers\": {\"a\": {\n\"serverUrl\": \"https://a.example/${input:path}\"}}}",
			`c.json:2: server "a" "serverUrl": ${input:path} asks the user for a value, and toolgate has no prompt: write the value, or "${env:VAR}" to take it from toolgate's environment`},
		{"windsurf disabledTools", "{\"mcpServers\": {\"github\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-github\"],\n\"disabledTools\": [\"delete_repository\"]}}}",
			`c.json:2: server "github" "disabledTools": toolgate offers every tool a server lists and cannot leave single ones out; to keep a tool from every caller, require a scope no principal holds ("tools": {"NAME": {"scopes": ["…"]}})`},
		{"input placeholder", "{\"servers\": {\"a\": {\"type\": \"http\", \"url\": \"https://a.example/\",\n\"headers\": {\"X-Key\": \"${input:key}\"}}}}",
			`c.json:2: server "a" "headers": "X-Key": ${input:key} asks the user for a value, and toolgate has no prompt: write the value, or "${env:VAR}" to take it from toolgate's environment`},
		{"unset variable", "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n\"env\": {\"T\": \"${env:TG_TEST_UNSET}\"}}}}",
			`c.json:2: server "a" "env": "T": ${env:TG_TEST_UNSET} names TG_TEST_UNSET, which toolgate's environment lacks`},
		{"workspace placeholder", "{\"servers\": {\"a\": {\"command\": \"x\",\n\"args\": [\"${workspaceFolder}/db\"]}}}",
			`c.json:2: server "a" "args": ${workspaceFolder} names workspaceFolder, which toolgate's environment lacks`},
		{"config placeholder", `{"servers": {"a": {"command": "x", "args": ["${config:db.path}"]}}}`,
			`c.json:1: server "a" "args": ${config:db.path} is not a placeholder toolgate knows (it resolves "${env:VAR}", "${VAR}" and "${VAR:-default}" from its environment)`},
		{"args beside a list", "{\"servers\": {\"a\": {\"command\": [\"x\"],\n\"args\": [\"y\"]}}}",
			`c.json:2: server "a" "args": arguments beside a "command" list: put them in the list, or make "command" the program alone`},
		{"args alone", `{"mcpServers": {"a": {"args": ["y"]}}}`,
			`c.json:1: server "a" "args": arguments without a "command"`},
		{"command a number", "{\"servers\":{\"a\":{\n\"command\":1}}}",
			`c.json:2: server "a" "command": want a program (with "args") or a list of the program and its arguments`},
		{"command list of numbers", `{"servers":{"a":{"command":[1]}}}`,
			`c.json:1: server "a" "command": a list that is not all strings`},
		{"stdio with a url", `{"mcpServers": {"a": {"type": "stdio", "url": "https://a.example/"}}}`,
			`c.json:1: server "a" "url": a url for a "stdio" server`},
		{"http with a command", `{"mcpServers": {"a": {"type": "http", "command": "x"}}}`,
			`c.json:1: server "a" "command": a command for an HTTP server ("type": "http")`},
		{"cwd", `{"mcpServers": {"a": {"command": "x", "cwd": "/srv"}}}`,
			`c.json:1: server "a" "cwd": toolgate starts a server in its own working directory; give absolute paths in the command instead`},
		{"envFile", `{"servers": {"a": {"type": "stdio", "command": "x", "envFile": ".env"}}}`,
			`c.json:1: server "a" "envFile": toolgate reads no env file; name each variable in "env" ("${env:VAR}" takes it from toolgate's environment)`},
		{"zed extension", "{\"context_servers\": {\"mcp-server-github\": {\n\"source\": \"extension\", \"enabled\": true, \"settings\": {\"github_personal_access_token\": \"x\"}}}}",
			`c.json:2: server "mcp-server-github" "source": a Zed extension's server, which Zed installs and starts itself; toolgate needs the server's own "command" and "args" (a "custom" server)`},
		{"zed unknown source", `{"context_servers": {"a": {"source": "registry", "command": "x"}}}`,
			`c.json:1: server "a" "source": "registry" is none of custom and extension`},
		{"zed extension settings alone", "{\"context_servers\": {\"ext\": {\n\"settings\": {\"key\": \"v\"}}}}",
			`c.json:2: server "ext" "settings": settings of a Zed extension's server, which Zed starts itself; toolgate needs the server's own "command" and "args"`},
		{"zed command object without path", "{\"context_servers\": {\"a\": {\n\"command\": {\"args\": [\"x\"]}}}}",
			`c.json:2: server "a" "command": an object without "path"`},
		{"zed command object unknown member", "{\"context_servers\": {\"a\": {\n\"command\": {\"path\": \"x\", \"argv\": []}}}}",
			`c.json:2: server "a" "command": unknown field "argv" (want "path", "args" and "env")`},
		{"zed command object path a number", "{\"context_servers\": {\"a\": {\n\"command\": {\"path\": 1}}}}",
			`c.json:2: server "a" "command": "path" is a JSON number, want string`},
		{"zed command object args a string", "{\"context_servers\": {\"a\": {\n\"command\": {\"path\": \"x\", \"args\": \"y\"}}}}",
			`c.json:2: server "a" "command": "args" is a JSON string, want []string`},
		{"zed command object env unset", "{\"context_servers\": {\"a\": {\n\"command\": {\"path\": \"x\", \"env\": {\"T\": \"${env:TG_TEST_UNSET}\"}}}}}",
			`c.json:2: server "a" "command": "T": ${env:TG_TEST_UNSET} names TG_TEST_UNSET, which toolgate's environment lacks`},
		{"extension source beside a serverUrl", "{\"context_servers\": {\"a\": {\"serverUrl\": \"https://a.example/mcp\",\n\"source\": \"extension\"}}}",
			`c.json:2: server "a" "source": a Zed extension's server, which Zed installs and starts itself; toolgate needs the server's own "command" and "args" (a "custom" server)`},
		{"zed args beside a command object", "{\"context_servers\": {\"a\": {\"command\": {\"path\": \"x\"},\n\"args\": [\"y\"]}}}",
			`c.json:2: server "a" "args": arguments beside a "command" object: put them in its "args"`},
		{"zed env twice", "{\"context_servers\": {\"a\": {\"command\": {\"path\": \"x\", \"env\": {\"A\": \"1\"}},\n\"env\": {\"B\": \"2\"}}}}",
			`c.json:2: server "a" "env": beside the "command" object's own "env": give one`},
		{"zed and mcpServers", `{"mcpServers": {}, "context_servers": {}}`,
			`c.json: both "mcpServers" and "context_servers": give one list of servers`},
		{"zed and servers", `{"servers": {}, "context_servers": {}}`,
			`c.json: both "servers" and "context_servers": give one list of servers`},
		{"unclosed comment", "{\"mcpServers\": {}}\n/* never closed",
			`c.json:2: a "/*" comment is never closed`},
		{"line after a comment", "{\n/* one\ntwo */ \"mcpServers\": {\"a\": {\n\"type\": \"ws\", \"url\": \"https://a.example/\"}}}",
			`c.json:4: server "a" "type": "ws" is none of stdio, http, streamable-http and streamableHttp`},
		{"two commas", `{"mcpServers": {"a": {"command": "x"},,}}`,
			`c.json:1: expected a member name`},
		{"a comma alone", `{"mcpServers": {"a": {"command": "x", "args": [,]}}}`,
			`c.json:1: unexpected character ','`},
		{"cline marketplace name", "{\"mcpServers\": {\n\"github.com/upstash/context7-mcp\": {\"command\": \"npx\", \"args\": [\"-y\", \"@upstash/context7-mcp\"], \"disabled\": false}}}",
			`c.json:2: server name "github.com/upstash/context7-mcp" must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$, as it is the namespace of the server's tools ("NAME/tool"): rename it, say "context7-mcp"`},
		{"name with a space", "{\"mcpServers\": {\"memory\": {\"command\": \"m\"},\n\"Brave Search\": {\"command\": \"npx\"}}}",
			`c.json:2: server name "Brave Search" must match ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$, as it is the namespace of the server's tools ("NAME/tool"): rename it, say "Brave-Search"`},
		{"both lists", `{"servers": {}, "mcpServers": {}}`,
			`c.json: both "servers" and "mcpServers": give one list of servers`},
		{"mcpServers not an object", "{\"preferences\": {},\n\"mcpServers\": []}",
			`c.json:2: "mcpServers" is a JSON array, want an object`},
		{"type error in mcpServers", "{\"preferences\": {},\n\"mcpServers\": {\"a\": {\"command\": \"x\",\n\"args\": \"y\"}}}",
			`c.json:3: "args" is a JSON string, want []string`},
		{"unknown member after other settings", "{\"preferences\": {\"x\": 1},\n\"mcpServers\": {\"a\": {\"command\": \"x\",\n\"autoApprov\": []}}}",
			`c.json:3: unknown field "autoApprov"`},
		{"unknown member", "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n\"autoApprov\": []}}}",
			`c.json:2: unknown field "autoApprov"`},
		{"neither command nor url", `{"mcpServers": {"a": {"env": {"A": "b"}}}}`,
			`c.json: mcp: invalid server configuration: server "a" has neither command nor url`},
		{"url from a secret", `{"mcpServers": {"a": {"url": "${TG_TEST_SECRET_URL}"}}}`,
			`c.json: mcp: invalid server configuration: server "a" url has no http:// or https:// scheme`},
		{"url of another scheme", `{"mcpServers": {"a": {"url": "ftp://${TG_TEST_SECRET_URL}"}}}`,
			`c.json: mcp: invalid server configuration: server "a" url scheme "ftp" is not http(s)`},
		{"pass_env for a url", `{"mcpServers": {"a": {"url": "https://a.example/", "pass_env": ["HOME"]}}}`,
			`c.json: mcp: invalid server configuration: server "a" has pass_env but no command to pass it to`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tt.in), "c.json")
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrConfig) {
				t.Errorf("parseConfig(%q) error = %v\nwant %s (wrapping ErrConfig)", tt.in, err, tt.want)
			}
		})
	}
}
