package sqlitestore_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/runtime/internal/gatewaytest"
)

// TestAbandonedCallAudited: a call whose client gives up (its context is
// cancelled) while the tool runs is still recorded and audited when the
// tool returns, with no retry needed: the handler runs detached from the
// caller's cancellation.
func TestAbandonedCallAudited(t *testing.T) {
	st := open(t, filepath.Join(t.TempDir(), "gateway.db"))
	e := gatewaytest.NewOn(t, st, nil)
	started, release := make(chan struct{}), make(chan struct{})
	handler := e.Transfer()
	e.SetTransfer(func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-release
		return handler(ctx, args)
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := e.Gateway.Execute(ctx, gatewaytest.TransferCall(gatewaytest.Alice, "s1", 1, gatewaytest.OKArgs))
		done <- err
	}()
	<-started
	cancel()
	close(release)
	if err := <-done; err != nil {
		t.Errorf("the abandoned call = %v, want its result", err)
	}
	entries, err := st.QueryAudit(context.Background(), store.AuditQuery{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Outcome != store.OutcomeOK || entries[0].Decision != store.DecisionAllow {
		t.Fatalf("audit = %+v, want one entry: allow, ok", entries)
	}
	r, err := st.Get(context.Background(), entries[0].Key)
	if err != nil || r.State != store.StateDone {
		t.Errorf("record of the abandoned call = %+v, %v; want it done", r, err)
	}
}
