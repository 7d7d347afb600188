// Package atomicfile replaces a file whole or not at all, as the files
// toolgate keeps for itself need (the discovery index file, the catalog
// cache, the embedding cache): a reader, or a process that dies midway,
// sees the old file or the new one, never half of one.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write replaces the file at path with what write writes. It writes a
// temporary file in the same folder (".NAME.*", mode 0600) and renames it
// over path once write and the close succeed; on any failure the
// temporary file is removed and path is left as it was. The error is
// write's, or the file system's.
func Write(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // a no-op after the rename
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
