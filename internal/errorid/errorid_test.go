package errorid_test

import (
	"regexp"
	"testing"

	"github.com/toolgate/toolgate/internal/errorid"
)

func TestNew(t *testing.T) {
	form := regexp.MustCompile(`^err_[0-9a-f]{16}$`)
	seen := map[string]bool{}
	for range 100 {
		id := errorid.New()
		if !form.MatchString(id) {
			t.Fatalf("New() = %q, want err_ and 16 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("New() returned %q twice in 100 calls", id)
		}
		seen[id] = true
	}
}
