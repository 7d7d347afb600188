//go:build darwin || freebsd || linux || netbsd

package llamacpp

import "github.com/ebitengine/purego"

// openLibrary loads the shared library at path, its symbols resolved now
// and kept local to it.
func openLibrary(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// symbol returns the address of name in the library h.
func symbol(h uintptr, name string) (uintptr, error) { return purego.Dlsym(h, name) }

// bind makes fn, a pointer to a func variable, call the C function at sym.
func bind(fn any, sym uintptr) { purego.RegisterFunc(fn, sym) }

// callback returns a C function pointer that calls fn.
func callback(fn any) uintptr { return purego.NewCallback(fn) }
