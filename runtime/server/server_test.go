package server_test

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/tools"
)

func TestUncertainPolicies(t *testing.T) {
	reg := tools.NewRegistry()
	for _, id := range []string{"pay/send_payment", "bank/get_balance"} {
		t.Run(id, func(t *testing.T) {
			tl := tools.Tool{ID: id, InputSchema: json.RawMessage(`{"type":"object"}`)}
			tl.Card.Name = tl.Name()
			if err := reg.Add(tl); err != nil {
				t.Fatal(err)
			}
		})
	}
	snap := reg.Snapshot()
	type policies = map[string]gateway.UncertainPolicy
	tests := []struct {
		name    string
		def     string
		perTool []string
		want    gateway.UncertainPolicy
		wantPer policies
		wantErr bool
	}{
		{name: "defaults", want: gateway.UncertainRerun},
		{name: "reconcile by default", def: "reconcile", want: gateway.UncertainReconcile},
		{name: "one tool reconciles", def: "rerun", perTool: []string{"pay/send_payment=reconcile"},
			want: gateway.UncertainRerun, wantPer: policies{"pay/send_payment": gateway.UncertainReconcile}},
		{name: "one tool reruns under reconcile", def: "reconcile", perTool: []string{"bank/get_balance=rerun"},
			want: gateway.UncertainReconcile, wantPer: policies{"bank/get_balance": gateway.UncertainRerun}},
		{name: "unknown default", def: "retry", wantErr: true},
		{name: "unknown tool policy", perTool: []string{"pay/send_payment=maybe"}, wantErr: true},
		{name: "no policy", perTool: []string{"pay/send_payment"}, wantErr: true},
		{name: "unknown tool", perTool: []string{"pay/send_paymnet=reconcile"}, wantErr: true},
		{name: "bare name, not an ID", perTool: []string{"send_payment=reconcile"}, wantErr: true},
		{name: "tool given twice", perTool: []string{"pay/send_payment=reconcile", "pay/send_payment=rerun"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, per, err := server.UncertainPolicies(tc.def, tc.perTool, snap)
			if (err != nil) != tc.wantErr {
				t.Fatalf("UncertainPolicies(%q, %q) error = %v, want error %v", tc.def, tc.perTool, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if got != tc.want || !maps.Equal(per, tc.wantPer) {
				t.Errorf("UncertainPolicies(%q, %q) = %v, %v; want %v, %v", tc.def, tc.perTool, got, per, tc.want, tc.wantPer)
			}
		})
	}
}
