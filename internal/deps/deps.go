// Package deps pins the module's chosen dependencies in go.mod while the
// packages that use them are being written. It is temporary scaffolding and
// is deleted once every dependency below has a real importer.
package deps

import (
	_ "github.com/dlclark/regexp2"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/google/uuid"
	_ "github.com/jackc/pgx/v5"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/ollama/ollama/api"
	_ "github.com/openai/openai-go/v3"
	_ "github.com/pkoukk/tiktoken-go"
	_ "github.com/pkoukk/tiktoken-go-loader"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/redis/go-redis/v9"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "modernc.org/sqlite"
)
