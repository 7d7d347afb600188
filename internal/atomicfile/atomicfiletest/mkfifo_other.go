//go:build !unix

package atomicfiletest

import "errors"

func mkfifo(string) error { return errors.New("no named pipes") }
