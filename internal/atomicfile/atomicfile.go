// Package atomicfile replaces a file whole or not at all, as the files
// toolgate keeps for itself need (the discovery index file, the catalog
// cache, the embedding cache): a reader, or a process that dies midway,
// sees the old file or the new one, never half of one. It also opens
// such a file for reading without ever waiting on what is not one.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrNotRegular is wrapped by the error of [Open] and [Write] for a path
// that names something other than a regular file: a folder, a pipe, a
// device.
var ErrNotRegular = errors.New("not a regular file")

// Open opens the file at path for reading. It must be a regular file
// (or a symbolic link to one), as [Write] writes: anything else is
// refused with an error wrapping [ErrNotRegular], at once: a named pipe
// is opened without waiting for a writer (an open of one blocks until
// then), and a device is never read. The other errors are [os.Open]'s.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = notRegular(path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func notRegular(path string) error {
	return fmt.Errorf("%s is %w", path, ErrNotRegular)
}

// Write replaces the file at path with what write writes. It writes a
// temporary file in the same folder (".NAME.*", mode 0600) and renames it
// over path once write and the close succeed; on any failure the
// temporary file is removed and path is left as it was. A path that
// names something other than a regular file (a folder, a pipe, a device
// such as /dev/null) is left alone: the error wraps [ErrNotRegular]. The
// error is write's, or the file system's.
func Write(path string, write func(io.Writer) error) error {
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return notRegular(path)
	}
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
