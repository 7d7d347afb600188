package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
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
		{"npx -y @playwright/mcp@latest", "mcp", []string{"npx", "-y", "@playwright/mcp@latest"}},
		{"python3 server.py", "server", []string{"python3", "server.py"}},
	}
	for _, tt := range tests {
		got, err := ParseCommandSpec(tt.spec)
		if err != nil {
			t.Errorf("ParseCommandSpec(%q): %v", tt.spec, err)
			continue
		}
		if got.Name != tt.name || !slices.Equal(got.Command, tt.command) {
			t.Errorf("ParseCommandSpec(%q) = %q %q, want %q %q", tt.spec, got.Name, got.Command, tt.name, tt.command)
		}
	}
	for _, bad := range []string{"", "   ", "x="} {
		if _, err := ParseCommandSpec(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("ParseCommandSpec(%q) error = %v, want ErrConfig", bad, err)
		}
	}
}

func TestParseURLSpec(t *testing.T) {
	tests := []struct{ spec, name, url string }{
		{"docs=https://example.com/mcp", "docs", "https://example.com/mcp"},
		{"http://127.0.0.1:8080/mcp", "127.0.0.1-8080", "http://127.0.0.1:8080/mcp"},
	}
	for _, tt := range tests {
		got, err := ParseURLSpec(tt.spec)
		if err != nil || got.Name != tt.name || got.URL != tt.url {
			t.Errorf("ParseURLSpec(%q) = %q %q, %v; want %q %q", tt.spec, got.Name, got.URL, err, tt.name, tt.url)
		}
	}
	if _, err := ParseURLSpec("ftp://example.com"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParseURLSpec(ftp) error = %v, want ErrConfig", err)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"servers":{
		"memory":{"command":["npx","-y","@modelcontextprotocol/server-memory"],"scopes":["memory:write"],
		          "tools":{"delete_entities":{"scopes":["memory:admin"],"irreversible":true}}},
		"docs":{"url":"https://example.com/mcp"}}}`)
	c, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	list := c.List()
	if len(list) != 2 || list[0].Name != "docs" || list[1].Name != "memory" {
		t.Fatalf("List() = %+v, want docs and memory in order", list)
	}
	if o := list[1].Tools["delete_entities"]; o.Irreversible == nil || !*o.Irreversible {
		t.Errorf("override of delete_entities = %+v", o)
	}
	for name, text := range map[string]string{
		"unknown-field.json": `{"servers":{"a":{"command":["x"],"scope":["typo"]}}}`,
		"both.json":          `{"servers":{"a":{"command":["x"],"url":"http://h/"}}}`,
		"neither.json":       `{"servers":{"a":{}}}`,
		"badname.json":       `{"servers":{"a b":{"command":["x"]}}}`,
		"notjson.json":       `{"servers":`,
	} {
		if _, err := LoadConfig(write(name, text)); !errors.Is(err, ErrConfig) {
			t.Errorf("LoadConfig(%s) error = %v, want ErrConfig", name, err)
		}
	}
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
