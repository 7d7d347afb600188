// Package catalog holds the tools/list results of the real MCP servers the
// transfer example shows discovery over (everything, filesystem, github,
// gitlab, memory, playwright, postgres, slack), embedded so that a clone of
// the repository (or a `go install`ed binary) runs the demo and chat
// without ../shared, from any working directory.
package catalog

import (
	"embed"
	"io/fs"
	"path"
	"strings"

	"github.com/toolgate/toolgate/tools"
	tgcatalog "github.com/toolgate/toolgate/tools/catalog"
)

//go:embed *.json
var files embed.FS

// Load parses every embedded catalog; each file's stem is its tools'
// namespace (their server).
func Load() ([]tools.Tool, error) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, err
	}
	var out []tools.Tool
	for _, name := range names {
		f, err := files.Open(name)
		if err != nil {
			return nil, err
		}
		ts, err := tgcatalog.Parse(f, "catalog/"+name, strings.TrimSuffix(path.Base(name), ".json"))
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}
