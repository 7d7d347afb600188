package server_test

import (
	"context"

	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
)

// The HTTP tests stand on gatewaytest's bank, as the gateway's own do.
type env = gatewaytest.Env

var (
	ctx = context.Background()

	newEnv      = gatewaytest.New
	quietLogger = gatewaytest.QuietLogger
	alice       = gatewaytest.Alice
)

const okArgs = gatewaytest.OKArgs
