package pgstore_test

import (
	"os"
	"testing"

	"github.com/toolgate/toolgate/internal/testservices"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/gateway/storetest"
)

func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }

// TestConformance runs the store kit on one store per subtest, each in a
// fresh schema (handles).
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return handles(t, 1)[0] })
}

// A claim PostgreSQL committed but whose answer was lost never ran; the
// retry runs it at once.
func TestLostClaimReply(t *testing.T) {
	storetest.RunLostClaimReply(t, func(t *testing.T) store.Store { return handles(t, 1)[0] })
}

// Text fields longer than an audit entry keeps are cut at a character's
// start: every entry is appended, valid UTF-8, and its chain verifies.
func TestLongText(t *testing.T) {
	storetest.RunLongText(t, func(t *testing.T) store.Store { return handles(t, 1)[0] })
}
