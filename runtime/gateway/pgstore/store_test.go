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

// Text an audit entry cannot keep as it is (too long, not UTF-8) is cut
// at a character's start or replaced: every call gets its entry, valid
// UTF-8, and the chain verifies.
func TestAuditText(t *testing.T) {
	storetest.RunAuditText(t, func(t *testing.T) store.Store { return handles(t, 1)[0] })
}
