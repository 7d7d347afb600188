package redisstore

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// t20 writes the Unix nanoseconds as %020d does, all zeros for the zero
// time and for times before 1970, and from20 reads them back.
func TestT20(t *testing.T) {
	if got, want := t20(time.Time{}), fmt.Sprintf("%020d", 0); got != want {
		t.Errorf("t20(zero time) = %q, want %q", got, want)
	}
	for i, n := range []int64{0, 1, -5, 1764594300123456789, math.MaxInt64} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			at := time.Unix(0, n)
			want := fmt.Sprintf("%020d", max(n, 0))
			if got := t20(at); got != want {
				t.Errorf("t20(%d ns) = %q, want %q", n, got, want)
			}
			back, err := from20(want)
			if err != nil || (n > 0 && !back.Equal(at)) || (n <= 0 && !back.IsZero()) {
				t.Errorf("from20(%q) = %v, %v; want %d ns", want, back, err, n)
			}
		})
	}
}
