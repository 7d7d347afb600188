package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/testenv"
)

func TestParseCommandSpec(t *testing.T) {
	tests := []struct {
		spec    string
		name    string
		command []string
	}{
		{"memory=npx -y @modelcontextprotocol/server-memory", "memory", []string{"npx", "-y", "@modelcontextprotocol/server-memory"}},
		{"npx -y @modelcontextprotocol/server-memory", "server-memory", []string{"npx", "-y", "@modelcontextprotocol/server-memory"}},
		{"node /opt/servers/weather.js --verbose", "weather", []string{"node", "/opt/servers/weather.js", "--verbose"}},
		{"npx -y @playwright/mcp@latest", "playwright", []string{"npx", "-y", "@playwright/mcp@latest"}},
		{"python3 server.py", "server", []string{"python3", "server.py"}},
		{"npx -y @bytebase/dbhub --transport stdio", "dbhub", []string{"npx", "-y", "@bytebase/dbhub", "--transport", "stdio"}},
		{"node /srv/mcp/server-everything/dist/index.js stdio", "server-everything", []string{"node", "/srv/mcp/server-everything/dist/index.js", "stdio"}},
		{"env MEMORY_FILE_PATH=/tmp/m.jsonl node /srv/memory/index.js", "memory", []string{"env", "MEMORY_FILE_PATH=/tmp/m.jsonl", "node", "/srv/memory/index.js"}},
		{"github-mcp-server stdio --read-only", "github-mcp-server", []string{"github-mcp-server", "stdio", "--read-only"}},
		{"./bin/payments-mcp --port 0", "payments-mcp", []string{"./bin/payments-mcp", "--port", "0"}},
		{"uvx mcp-server-git --repository /home/me/repo", "mcp-server-git", []string{"uvx", "mcp-server-git", "--repository", "/home/me/repo"}},
		{"pipx run mcp-server-fetch==2025.1 stdio", "mcp-server-fetch", []string{"pipx", "run", "mcp-server-fetch==2025.1", "stdio"}},
		{"docker run -i --rm -e GITHUB_TOKEN ghcr.io/github/github-mcp-server:v1", "github-mcp-server", []string{"docker", "run", "-i", "--rm", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server:v1"}},
		{"go run github.com/acme/tools/cmd/server@latest", "tools", []string{"go", "run", "github.com/acme/tools/cmd/server@latest"}},
		{"python3.12 -m", "python3.12", []string{"python3.12", "-m"}},
		{"env -i PATH=/usr/bin:/bin HOME=/var/empty npx -y @acme/weather-mcp", "weather-mcp", []string{"env", "-i", "PATH=/usr/bin:/bin", "HOME=/var/empty", "npx", "-y", "@acme/weather-mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCommandSpec(tt.spec)
			if err != nil {
				t.Errorf("ParseCommandSpec(%q): %v", tt.spec, err)
				return
			}
			if got.Name != tt.name || !slices.Equal(got.Command, tt.command) {
				t.Errorf("ParseCommandSpec(%q) = %q %q, want %q %q", tt.spec, got.Name, got.Command, tt.name, tt.command)
			}
		})
	}
	for _, bad := range []string{"", "   ", "x="} {
		t.Run(bad, func(t *testing.T) {
			if _, err := ParseCommandSpec(bad); !errors.Is(err, ErrConfig) {
				t.Errorf("ParseCommandSpec(%q) error = %v, want ErrConfig", bad, err)
			}
		})
	}
}

func TestParseURLSpec(t *testing.T) {
	tests := []struct{ spec, name, url string }{
		{"docs=https://example.com/mcp", "docs", "https://example.com/mcp"},
		{"http://127.0.0.1:8080/mcp", "127.0.0.1-8080", "http://127.0.0.1:8080/mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseURLSpec(tt.spec)
			if err != nil || got.Name != tt.name || got.URL != tt.url {
				t.Errorf("ParseURLSpec(%q) = %q %q, %v; want %q %q", tt.spec, got.Name, got.URL, err, tt.name, tt.url)
			}
		})
	}
	if _, err := ParseURLSpec("ftp://example.com"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParseURLSpec(ftp) error = %v, want ErrConfig", err)
	}
}

// TestFlagsPassEnv: the --mcp-pass-env names go to every --mcp server
// and to no other (a --mcp-config server names its own pass_env, a URL
// server has no environment); without a --mcp server they are an error.
func TestFlagsPassEnv(t *testing.T) {
	config := testenv.WriteFile(t, t.TempDir(), "servers.json", `{"servers":{"docs":{"command":["node","d.js"],"pass_env":["D"]}}}`)
	got, err := Flags{Commands: []string{"a=node a.js", "b=node b.js"}, PassEnv: []string{"TOKEN,HOME", "X"},
		URLs: []string{"search=http://127.0.0.1:8080/mcp"}, Config: config}.Servers()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {"TOKEN", "HOME", "X"}, "b": {"TOKEN", "HOME", "X"}, "search": nil, "docs": {"D"}}
	for _, s := range got {
		if !slices.Equal(s.PassEnv, want[s.Name]) {
			t.Errorf("server %s PassEnv = %q, want %q", s.Name, s.PassEnv, want[s.Name])
		}
	}
	if _, err := (Flags{PassEnv: []string{"TOKEN"}, Config: config}).Servers(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "no --mcp server") {
		t.Errorf("PassEnv without --mcp = %v, want an ErrConfig saying there is no --mcp server", err)
	}
}

// TestFlagsServers: the servers of --mcp, --mcp-url and --mcp-config come
// in that order, and a bad value's error names its flag.
func TestFlagsServers(t *testing.T) {
	config := testenv.WriteFile(t, t.TempDir(), "servers.json", `{"servers":{"docs":{"url":"https://example.com/mcp"}}}`)
	got, err := Flags{Commands: []string{"memory=npx -y @modelcontextprotocol/server-memory"}, URLs: []string{"search=http://127.0.0.1:8080/mcp"}, Config: config}.Servers()
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if want := []string{"memory", "search", "docs"}; err != nil || !slices.Equal(names, want) {
		t.Errorf("Flags.Servers = %q, %v; want %q", names, err, want)
	}
	tests := []struct {
		name, want     string
		commands, urls []string
		config         string
	}{
		{name: "empty command", commands: []string{" "}, want: "--mcp: "},
		{name: "bad URL", urls: []string{"ftp://example.com"}, want: "--mcp-url: "},
		{name: "missing config", config: filepath.Join(t.TempDir(), "none.json"), want: "none.json"},
		{name: "one name twice", commands: []string{"node a/chart/index.js", "node b/chart/dist/index.js"}, want: `two upstream servers are named "chart"`},
		{name: "one name across flags", commands: []string{"docs=node index.js"}, config: config, want: `named "docs"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Flags{Commands: tc.commands, URLs: tc.urls, Config: tc.config}.Servers()
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Flags.Servers error = %v, want ErrConfig naming %q", err, tc.want)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string { return testenv.WriteFile(t, dir, name, text) }
	good := write("good.json", `{"servers":{
		"memory":{"command":["npx","-y","@modelcontextprotocol/server-memory"],"scopes":["memory:write"],
		          "tools":{"delete_entities":{"scopes":["memory:admin"],"irreversible":true}}},
		"docs":{"url":"https://example.com/mcp"},
		"github":{"command":["npx","-y","@modelcontextprotocol/server-github"],"pass_env":["GITHUB_PERSONAL_ACCESS_TOKEN","HTTPS_PROXY"]}}}`)
	c, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	list := c.List()
	if len(list) != 3 || list[0].Name != "docs" || list[1].Name != "github" || list[2].Name != "memory" {
		t.Fatalf("List() = %+v, want docs, github and memory in order", list)
	}
	if o := list[2].Tools["delete_entities"]; o.Irreversible == nil || !*o.Irreversible {
		t.Errorf("override of delete_entities = %+v", o)
	}
	if want := []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "HTTPS_PROXY"}; !slices.Equal(list[1].PassEnv, want) {
		t.Errorf("github's PassEnv = %q, want %q", list[1].PassEnv, want)
	}
	for name, text := range map[string]string{
		"unknown-field.json": `{"servers":{"a":{"command":["x"],"scope":["typo"]}}}`,
		"both.json":          `{"servers":{"a":{"command":["x"],"url":"http://h/"}}}`,
		"neither.json":       `{"servers":{"a":{}}}`,
		"badname.json":       `{"servers":{"a b":{"command":["x"]}}}`,
		"notjson.json":       `{"servers":`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := LoadConfig(write(name, text)); !errors.Is(err, ErrConfig) {
				t.Errorf("LoadConfig(%s) error = %v, want ErrConfig", name, err)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"duplicate server", "{\"servers\":{\n\"a\":{\"command\":[\"x\"]},\n\"a\":{\"url\":\"http://evil/\"}}}",
			`c.json:3: duplicate member name "a"`},
		{"duplicate scopes", "{\"servers\":{\"a\":{\"command\":[\"x\"],\n\"scopes\":[\"admin\"],\n\"scopes\":[]}}}",
			`c.json:3: duplicate member name "scopes"`},
		{"duplicate deep in an override", `{"servers":{"a":{"command":["x"],"tools":{"t":{"irreversible":true,"irreversible":false}}}}}`,
			`c.json:1: duplicate member name "irreversible"`},
		{"unknown member", "{\"servers\":{\"a\":{\"command\":[\"x\"],\n\"scope\":[\"typo\"]}}}",
			`c.json:2: unknown field "scope"`},
		{"wrong type", "{\"servers\":{\"a\":{\"command\":[\"x\"],\n\"scopes\":\"x\"}}}",
			`c.json:2: "scopes" is a JSON string, want []string`},
		{"not an object", `[]`, `c.json:1: the configuration is a JSON array, want an object`},
		{"trailing data", `{"servers":{}} {}`, `c.json:1: trailing data`},
		{"truncated", "{\"servers\":\n", `c.json:2: unexpected end of input`},
		{"no command nor url", `{"servers":{"b":{"command":["x"]},"a":{}}}`,
			`c.json: mcp: invalid server configuration: server "a" has neither command nor url`},
		{"pass_env not a list", "{\"servers\":{\"a\":{\"command\":[\"x\"],\n\"pass_env\":\"HOME\"}}}",
			`c.json:2: "pass_env" is a JSON string, want []string`},
		{"pass_env with =", `{"servers":{"a":{"command":["x"],"pass_env":["GITHUB_TOKEN=abc"]}}}`,
			`c.json: mcp: invalid server configuration: server "a" pass_env[0] "GITHUB_TOKEN=abc" is not a variable name`},
		{"pass_env empty name", `{"servers":{"a":{"command":["x"],"pass_env":["HOME",""]}}}`,
			`c.json: mcp: invalid server configuration: server "a" pass_env[1] "" is not a variable name`},
		{"pass_env for a url", `{"servers":{"a":{"url":"https://example.com/mcp","pass_env":["HOME"]}}}`,
			`c.json: mcp: invalid server configuration: server "a" has pass_env but no command to pass it to`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tt.in), "c.json")
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrConfig) {
				t.Errorf("%s: parseConfig(%q) error = %v, want %s (wrapping ErrConfig)", tt.name, tt.in, err, tt.want)
			}
		})
	}
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(`{"servers":{}}`+strings.Repeat(" ", maxConfigBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(big); err == nil || err.Error() != big+": larger than 1024 KiB" {
		t.Errorf("LoadConfig(over 1 MiB) error = %v, want %s: larger than 1024 KiB", err, big)
	}
}

var configErrLine = regexp.MustCompile(`^c\.json(:[1-9][0-9]*)?: \S`)

// FuzzParseConfig: any input either parses into servers that validate, or
// is one [ErrConfig] error "c.json[:LINE]: reason".
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{"servers":{"memory":{"command":["npx","-y","pkg"],"scopes":["m:w"],"tools":{"t":{"irreversible":true}}}}}`,
		`{"servers":{"docs":{"url":"https://example.com/mcp","headers":{"A":"b"}}}}`,
		`{"servers":{"gh":{"command":["npx"],"env":{"A":"b"},"pass_env":["GITHUB_TOKEN"]}}}`,
		`{"servers":{"a":{"command":["x"]},"a":{"command":["y"]}}}`,
		`{"servers":{"a":{"command":"x"}}}`,
		`{"mcpServers":{"a":{"command":"npx","args":["-y","pkg"],"env":{"K":"${env:HOME}"},"disabled":false}}}`,
		`{"mcpServers":{"a":{"type":"sse","url":"https://example.com/sse"}}}`,
		`{"preferences":{"x":[1]},"mcpServers":{"a":{"command":"x","args":"y"}},"servers":null}`,
		`{"servers":{"a":{"type":"http","url":"https://example.com/mcp","headers":{"K":"${input:k}"}}},"inputs":[]}`,
		`{"mcpServers":{"a":{"transportType":"streamableHttp","type":"http","serverUrl":"https://example.com/mcp","disabledTools":["t"]}}}`,
		`{"theme":"One Dark","context_servers":{"a":{"command":{"path":"x","args":["y"],"env":{"K":"v"}},"settings":{}},"b":{"source":"extension"}}}`,
		"// Zed\n{\"context_servers\":{\"a\":{\"command\":\"x\",/* c */\"args\":[\"//y\",],},},}",
		"{\"mcpServers\":{}}\n/* open",
		`{"servers":`,
		`[]`,
		`null`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := parseConfig([]byte(in), "c.json")
		if err != nil {
			if !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), "\n") || !configErrLine.MatchString(err.Error()) {
				t.Fatalf("parseConfig(%q) error %q is not one ErrConfig line c.json[:LINE]: reason", in, err)
			}
			return
		}
		for _, s := range c.List() {
			if err := s.validate(); err != nil {
				t.Fatalf("parseConfig(%q) returned an invalid server: %v", in, err)
			}
		}
	})
}

// FuzzBlankComments: blanking comments and trailing commas keeps every
// offset and line break of the input, and leaves JSON that has neither as
// it is.
func FuzzBlankComments(f *testing.F) {
	for _, s := range []string{
		`{"a": [1, 2,], /* b */ "c": "//d",} // e`,
		"{\"a\": \"\\\"/*\"}\n/* x\ny */",
		`[,]`, `{"a":1,,}`, `/*`, `"\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, unclosed := blankComments([]byte(in))
		if len(out) != len(in) || unclosed >= len(in) {
			t.Fatalf("blankComments(%q) = %q, %d: length changed or unclosed out of range", in, out, unclosed)
		}
		for i := range len(in) {
			if (in[i] == '\n') != (out[i] == '\n') || (out[i] != in[i] && out[i] != ' ') {
				t.Fatalf("blankComments(%q) = %q: byte %d %q became %q", in, out, i, in[i], out[i])
			}
		}
		if json.Valid([]byte(in)) && (string(out) != in || unclosed != -1) {
			t.Fatalf("blankComments(%q) = %q, %d: changed valid JSON", in, out, unclosed)
		}
	})
}

func FuzzParseCommandSpec(f *testing.F) {
	for _, s := range []string{"memory=npx -y pkg", "node a.js", "=", "a=b=c", "@/@", "x y z/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseCommandSpec(spec)
		if err != nil {
			return
		}
		if err := s.validate(); err != nil {
			t.Fatalf("ParseCommandSpec(%q) returned an invalid server: %v", spec, err)
		}
		if len(s.Command) == 0 {
			t.Fatalf("ParseCommandSpec(%q) returned no command", spec)
		}
	})
}

// TestCheckServerNames: servers gathered from several flags may share a
// name (two entry points in folders both named chart); one listing would then
// replace the other's tools, so the shared name is an [ErrConfig].
func TestCheckServerNames(t *testing.T) {
	mustSpec := func(spec string) Server {
		s, err := ParseCommandSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		servers []Server
		want    string // "" for nil
	}{
		{"distinct", []Server{mustSpec("node /a/chart.js"), mustSpec("node /b/git.js")}, ""},
		{"two index.js", []Server{mustSpec("node /a/chart/dist/index.js"), mustSpec("node /b/git/dist/index.js")}, ""},
		{"derived alike", []Server{mustSpec("node /a/chart/index.js"), mustSpec("node /b/chart/index.js")}, `two upstream servers are named "chart"`},
		{"given twice", []Server{mustSpec("a=node x.js"), {Name: "a", URL: "http://127.0.0.1:1/mcp"}}, `two upstream servers are named "a"`},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkServerNames(tc.servers)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("checkServerNames = %v, want nil", err)
			case tc.want != "" && (!errors.Is(err, ErrConfig) || !strings.Contains(fmt.Sprint(err), tc.want)):
				t.Errorf("checkServerNames = %v, want ErrConfig saying %q", err, tc.want)
			}
		})
	}
}

// TestParsePassEnv: --mcp-pass-env values split at commas into names; a
// name with "=" or an empty one is refused showing the name, never what
// follows "=".
func TestParsePassEnv(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   []string
		err    string // "" for none
	}{
		{"none", nil, nil, ""},
		{"one", []string{"GITHUB_TOKEN"}, []string{"GITHUB_TOKEN"}, ""},
		{"commas and repeats", []string{"A, B", "C"}, []string{"A", "B", "C"}, ""},
		{"a value", []string{"TOKEN=s3cret"}, nil, `"TOKEN=…" is not a variable name`},
		{"empty between commas", []string{"A,,B"}, nil, `"" is not a variable name`},
		{"NUL", []string{"A\x00B"}, nil, `"A\x00B" is not a variable name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePassEnv(tc.values)
			if tc.err != "" {
				if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("ParsePassEnv(%q) = %v, %v; want an ErrConfig saying %s, without the value", tc.values, got, err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("ParsePassEnv(%q) = %q, %v; want %q", tc.values, got, err, tc.want)
			}
		})
	}
}

func FuzzParsePassEnv(f *testing.F) {
	for _, s := range []string{"A", "A,B", "A=b", ",", "A\x00", " A , B "} {
		f.Add(s, "")
		f.Add(s, "x")
	}
	f.Fuzz(func(t *testing.T, v, value string) {
		names, err := ParsePassEnv([]string{v})
		for _, n := range names {
			if n == "" || strings.ContainsAny(n, "=\x00") {
				t.Fatalf("ParsePassEnv(%q) returned the name %q", v, n)
			}
		}
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Fatalf("ParsePassEnv(%q) error %v is not an ErrConfig", v, err)
		}
		// A value given where a name belongs never shows in the error.
		if strings.Contains(v, "SECRET") {
			return
		}
		secret := v + "=SECRET" + value
		if _, err := ParsePassEnv([]string{secret}); err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Fatalf("ParsePassEnv(%q) = %v; want an error that does not show the value", secret, err)
		}
	})
}
