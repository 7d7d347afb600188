//go:build !unix

package atomicfile

import "os"

// openFlags are those of [os.Open].
const openFlags = os.O_RDONLY
