package llamacpp

import (
	"syscall"

	"github.com/ebitengine/purego"
)

// openLibrary loads the DLL at path (llama.dll). Not tried on Windows by
// this project's tests, which run on Linux: it is here so that the
// module builds and installs there, and fails with the loader's error
// when it cannot work.
func openLibrary(path string) (uintptr, error) {
	h, err := syscall.LoadLibrary(path)
	return uintptr(h), err
}

// symbol returns the address of name in the DLL h.
func symbol(h uintptr, name string) (uintptr, error) {
	return syscall.GetProcAddress(syscall.Handle(h), name)
}

// bind makes fn, a pointer to a func variable, call the C function at sym.
func bind(fn any, sym uintptr) { purego.RegisterFunc(fn, sym) }

// callback returns a C function pointer that calls fn.
func callback(fn any) uintptr { return purego.NewCallback(fn) }
