package redisstore

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// t20 is %020d of the Unix nanoseconds, 0 for the zero time and times
// before 1970, and round trips through from20.
func TestT20(t *testing.T) {
	for _, tc := range []time.Time{
		{}, time.Unix(0, 0), time.Unix(0, 1), time.Unix(0, -5), time.Unix(0, math.MaxInt64),
		time.Date(2026, 12, 1, 13, 5, 0, 123456789, time.UTC), time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		n := tc.UnixNano()
		if tc.IsZero() || n < 0 {
			n = 0
		}
		want := fmt.Sprintf("%020d", n)
		if got := t20(tc); got != want {
			t.Errorf("t20(%v) = %q, want %q", tc, got, want)
		}
		back, err := from20(t20(tc))
		if err != nil || (n != 0 && !back.Equal(tc)) || (n == 0 && !back.IsZero()) {
			t.Errorf("from20(t20(%v)) = %v, %v", tc, back, err)
		}
	}
}
