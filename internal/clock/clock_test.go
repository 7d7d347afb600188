package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"elapsed", context.Background(), 0, nil},
		{"canceled", canceled, time.Hour, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Sleep(tc.ctx, tc.d); !errors.Is(err, tc.want) {
				t.Errorf("Sleep(%s) = %v, want %v", tc.d, err, tc.want)
			}
		})
	}
}
