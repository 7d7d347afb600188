//go:build !(darwin || freebsd || linux || netbsd || windows)

package llamacpp

import (
	"fmt"
	"runtime"
)

// openLibrary refuses: purego, which calls the library without cgo, has
// no loader for this system.
func openLibrary(string) (uintptr, error) {
	return 0, fmt.Errorf("loading a shared library in-process is not supported on %s", runtime.GOOS)
}

func symbol(uintptr, string) (uintptr, error) { return 0, fmt.Errorf("no library") }

func bind(any, uintptr) {}

func callback(any) uintptr { return 0 }
