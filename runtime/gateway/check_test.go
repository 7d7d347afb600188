package gateway_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

func TestCheck(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		name string
		call gateway.Call
		want gateway.ErrorType // "" = accepted
	}{
		{"valid", transferCall(alice, "s", 1, okArgs), ""},
		{"no principal", transferCall(tools.Principal{}, "s", 1, okArgs), gateway.Unauthenticated},
		{"unknown tool", gateway.Call{Principal: alice, SessionID: "s", Step: 1, Tool: "bank/nope", Arguments: json.RawMessage(`{}`)}, gateway.UnknownTool},
		{"missing scope", transferCall(mallory, "s", 1, okArgs), gateway.PermissionDenied},
		{"invalid", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":-5}`), gateway.ValidationError},
		{"undeclared property", transferCall(alice, "s", 1, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5,"note":"x"}`), gateway.ValidationError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.Gateway.Check(t.Context(), tt.call)
			var ge *gateway.Error
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("%s: Check = %v, want nil", tt.name, err)
			case tt.want != "" && (!errors.As(err, &ge) || ge.Type != tt.want):
				t.Errorf("%s: Check = %v, want %s", tt.name, err, tt.want)
			}
		})
	}
	if n := e.Runs.Total(); n != 0 {
		t.Errorf("Check ran a handler %d times", n)
	}
}
