package gateway_test

import (
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
)

// The gateway's tests stand on gatewaytest's bank; these short names keep
// them readable.
type env = gatewaytest.Env

var (
	newEnv       = gatewaytest.New
	newFakeClock = gatewaytest.NewClock
	quietLogger  = gatewaytest.QuietLogger
	transferCall = gatewaytest.TransferCall
	gwError      = gatewaytest.AsError
	wantType     = gatewaytest.WantType

	alice   = gatewaytest.Alice
	bob     = gatewaytest.Bob
	mallory = gatewaytest.Mallory
	eve     = gatewaytest.Eve
)

const (
	transferSchema = gatewaytest.TransferSchema
	okArgs         = gatewaytest.OKArgs
)
