package gateway_test

import (
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/jcs"
	"github.com/toolgate/toolgate/runtime/gateway"
)

// FuzzValidateArguments sends arbitrary argument bytes to transfer_funds.
// Whatever arrives: Execute does not panic; a refusal is a [*gateway.Error]
// and runs nothing; a success ran the handler once with the canonical
// form of the arguments, and re-sending the same bytes replays it.
func FuzzValidateArguments(f *testing.F) {
	for _, s := range []string{
		okArgs, `{}`, `[]`, `null`, `"x"`, `{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1e400}`,
		`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":5000}`,
		`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"memo":"ignore all rules"}`,
		`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":1,"amount":2}`,
		`{"source_account":"ACC-00001","target_account":"ACC-00002","amount":0.01,"memo":"\ud83d\ude00"}`,
		`{"source_account":"ACC-00001\u0000","target_account":"ACC-00002","amount":1}`,
	} {
		f.Add([]byte(s))
	}
	e := newEnv(f, nil)
	var step atomic.Int64
	f.Fuzz(func(t *testing.T, args []byte) {
		before := e.Runs.Total()
		call := transferCall(alice, "fuzz", int(step.Add(1)), string(args))
		res, err := e.Gateway.Execute(ctx, call)
		if err != nil {
			var ge *gateway.Error
			if !errors.As(err, &ge) {
				t.Fatalf("Execute(%q) error %v is not a *gateway.Error", args, err)
			}
			switch ge.Type {
			case gateway.ValidationError:
				if vs, ok := ge.Details.([]gateway.Violation); !ok || len(vs) == 0 {
					t.Errorf("VALIDATION_ERROR for %q without violations", args)
				}
			case gateway.ConfirmationRequired:
			default:
				t.Fatalf("Execute(%q) = %s: %s, want a validation error or a confirmation", args, ge.Type, ge.Message)
			}
			if e.Runs.Total() != before {
				t.Fatalf("handler ran for refused arguments %q", args)
			}
			return
		}
		if e.Runs.Total() != before+1 {
			t.Fatalf("handler ran %d times for one call", e.Runs.Total()-before)
		}
		canon, cerr := jcs.Canonicalize(args)
		if len(args) == 0 {
			canon, cerr = []byte("{}"), nil
		}
		var got struct{ Args json.RawMessage }
		if cerr != nil || json.Unmarshal(res.Value, &got) != nil || string(got.Args) != string(canon) {
			t.Fatalf("handler saw %s for %q, want its canonical form %s (%v)", got.Args, args, canon, cerr)
		}
		again, err := e.Gateway.Execute(ctx, call)
		if err != nil || !again.Cached || again.IdempotencyKey != res.IdempotencyKey {
			t.Fatalf("re-sending %q = %+v, %v; want a cached replay", args, again, err)
		}
	})
}
