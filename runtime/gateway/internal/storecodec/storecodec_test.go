package storecodec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/store"
)

func TestTimeRoundTrip(t *testing.T) {
	for i, tm := range []time.Time{
		{},
		time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 0, time.FixedZone("x", 3600)),
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got := Time(NS(tm)); !got.Equal(tm) || got.IsZero() != tm.IsZero() {
				t.Errorf("Time(NS(%v)) = %v, want the same instant", tm, got)
			}
		})
	}
	if NS(time.Time{}) != ZeroTime || NS(time.Unix(0, 0)) <= ZeroTime {
		t.Errorf("the zero time must encode as ZeroTime, below every real instant")
	}
}

// A replayed refusal's details are the recorded number text.
func TestDomainErrorKeepsNumberText(t *testing.T) {
	b := []byte(`{"code":"INSUFFICIENT_FUNDS","message":"m","details":{"balance":974.50}}`)
	de, err := DecodeDomainError(b)
	if err != nil {
		t.Fatal(err)
	}
	again, err := EncodeDomainError(de)
	if err != nil || !strings.Contains(string(again), `"balance":974.50`) {
		t.Errorf("re-encoded domain error = %s, %v; want the number text 974.50 kept", again, err)
	}
	if b, err := EncodeDomainError(nil); b != nil || err != nil {
		t.Errorf("EncodeDomainError(nil) = %q, %v; want nil, nil", b, err)
	}
	if _, err := DecodeDomainError([]byte(`{"code":`)); err == nil {
		t.Error("DecodeDomainError(truncated) = nil error, want one")
	}
}

func TestAuditQuery(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	dollar := func(n int) string { return "$" + string(rune('0'+n)) }
	cases := []struct {
		q         store.AuditQuery
		where     string
		args      []any
		wantLimit any
	}{
		{store.AuditQuery{}, "", nil, 1000},
		{store.AuditQuery{Tenant: "acme", Key: "k", Limit: 5}, " WHERE tenant = $1 AND key = $2", []any{"acme", "k"}, 5},
		{store.AuditQuery{Principal: "p", Since: t0, Until: t0.Add(time.Hour)}, " WHERE principal = $1 AND at >= $2 AND at < $3",
			[]any{"p", NS(t0), NS(t0.Add(time.Hour))}, 1000},
	}
	for _, c := range cases {
		t.Run(c.where, func(t *testing.T) {
			query, args := AuditQuery(c.q, dollar)
			n := len(c.args) + 1
			want := "SELECT " + AuditReadColumns + " FROM audit" + c.where + " ORDER BY at, seq LIMIT " + dollar(n)
			if query != want {
				t.Errorf("AuditQuery(%+v) = %q, want %q", c.q, query, want)
			}
			if wantArgs := append(c.args, c.wantLimit); !reflect.DeepEqual(args, wantArgs) {
				t.Errorf("AuditQuery(%+v) args = %v, want %v", c.q, args, wantArgs)
			}
		})
	}
}

// Stored domain-error bytes are decoded on every replay: whatever they
// hold, decoding returns an error or a value that encodes and decodes to
// itself, and never panics.
func FuzzDecodeDomainError(f *testing.F) {
	f.Add([]byte(`{"code":"X","message":"m","details":{"n":1.50,"s":"a","l":[1,{"x":null}]}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"code":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		de, err := DecodeDomainError(b)
		if err != nil {
			return
		}
		enc, err := EncodeDomainError(de)
		if err != nil {
			t.Fatalf("EncodeDomainError(%+v) after a decode: %v", de, err)
		}
		again, err := DecodeDomainError(enc)
		if err != nil {
			t.Fatalf("DecodeDomainError(%s) of its own encoding: %v", enc, err)
		}
		a, _ := json.Marshal(de)
		b2, _ := json.Marshal(again)
		if string(a) != string(b2) {
			t.Errorf("round trip changed the domain error: %s, then %s", a, b2)
		}
	})
}
