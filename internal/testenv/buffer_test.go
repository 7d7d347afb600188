package testenv

import (
	"io"
	"testing"
)

// TestBufferAwait: Await's channel closes once the text is written, also
// when it spans writes or was written before the call, and not before.
func TestBufferAwait(t *testing.T) {
	var b Buffer
	io.WriteString(&b, "starting\n")
	if !closed(b.Await("starting")) {
		t.Error(`Await("starting") after it was written is open`)
	}
	down := b.Await("shutting down")
	io.WriteString(&b, "shutting ")
	if closed(down) {
		t.Error(`Await("shutting down") closed after "shutting " alone`)
	}
	io.WriteString(&b, "down\n")
	if !closed(down) {
		t.Error(`Await("shutting down") open after "shutting down" was written in two parts`)
	}
	if got, want := b.String(), "starting\nshutting down\n"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
