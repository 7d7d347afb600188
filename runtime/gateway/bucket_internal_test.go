package gateway

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolgate/toolgate/tools"
)

// TestBucketNameUnambiguous: two callers or tools never share a
// rate-limit bucket, whatever their names hold (the quotes and
// separators of the encoding included), and every name is storable.
func TestBucketNameUnambiguous(t *testing.T) {
	type who struct{ tenant, id, tool string }
	callers := []who{
		{"acme", "alice", "bank/pay"},
		{"acme", "alice\"bank", "/pay"},
		{"acme\"\"alice", "", "bank/pay"},
		{"acme", "ali", "ce\"bank/pay"},
		{"acme\\", "alice", "bank/pay"},
		{"acme", "alice\\\"", "bank/pay"},
		{"ac", "me", "alicebank/pay"},
		{"acme", "alice", "bank/pay\x00"},
		{"é", "alice", "bank/pay"},
	}
	seen := map[string]who{}
	//testlint:rows each row is checked against the rows before it
	for _, c := range callers {
		name := bucketName(tools.Principal{Tenant: c.tenant, ID: c.id}, c.tool)
		if o, dup := seen[name]; dup {
			t.Errorf("%+v and %+v share bucket %q", o, c, name)
		}
		seen[name] = c
		if (!utf8.ValidString(name) || strings.Contains(name, "\x00")) && !strings.Contains(c.tool, "\x00") {
			t.Errorf("bucket %q of %+v is not storable", name, c)
		}
	}
}
