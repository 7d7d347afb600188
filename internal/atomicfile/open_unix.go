//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// openFlags open a named pipe without waiting for a writer; a regular
// file's reads ignore O_NONBLOCK.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
