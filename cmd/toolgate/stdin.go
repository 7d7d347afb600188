package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// stdinPath is the file name that means standard input, as in most
// command-line tools. A command that reads it names it stdinName in its
// errors ("stdin:3: ...").
const (
	stdinPath = "-"
	stdinName = "stdin"
)

// maxInputBytes bounds a single input read whole (a schema, a grammar):
// a file or a pipe that never ends is refused rather than filling memory.
const maxInputBytes = 16 << 20

// openInput opens the input at path, or stdin for "-" (which the caller
// must not close twice: the returned closer leaves stdin open). name is
// how errors name it. An error names the flag and the path.
func openInput(flagName, path string, stdin io.Reader) (r io.ReadCloser, name string, err error) {
	if path == stdinPath {
		return io.NopCloser(stdin), stdinName, nil
	}
	f, err := os.Open(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, path, fmt.Errorf("%s: cannot read --%s: %w", path, flagName, err)
	}
	return f, path, nil
}

// readInput reads the whole input at path, or stdin for "-", up to
// [maxInputBytes]. name is how errors name it.
func readInput(flagName, path string, stdin io.Reader) (data []byte, name string, err error) {
	r, name, err := openInput(flagName, path, stdin)
	if err != nil {
		return nil, name, err
	}
	defer r.Close()
	data, err = io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	switch {
	case err != nil:
		return nil, name, fmt.Errorf("%s: %w", name, err)
	case len(data) > maxInputBytes:
		return nil, name, fmt.Errorf("%s: larger than %d MiB", name, maxInputBytes>>20)
	}
	return data, name, nil
}

// fileOnlyFlags are the flags that name a file which cannot be stdin,
// with the reason: read again later, read by its path (its stem names a
// namespace, a cache keys on it), written, or a directory. [parseFlags]
// refuses "-" for each of them, so that the user reads which flag and why
// rather than "open -: no such file or directory".
var fileOnlyFlags = map[string]string{
	"tools":         "a catalog is read by path (its stem is the namespace) and may be read again",
	"cards":         "an overlay is read by path and may be read again",
	"mcp-config":    "the server list is read by path",
	"lexicon":       "a lexicon is read by path",
	"index":         "the index is a file written and read again",
	"discovery-log": "the log is a file appended to",
	"embed-cache":   "the cache is a directory",
	"out":           "the overlay is a file written",
	"pins":          "the lock is a file",
	"tokens":        "the token file is read by path",
	"pubkey":        "give the key as a file",
	"audit-key":     "give the key as a file",
	"data":          "it names a directory",
	"library":       "it names a shared library",
}

// stdinRefused returns the usage error for the first flag of fs, set on
// the command line, that names stdin where [fileOnlyFlags] refuses it.
// A FILE of a NAME=FILE value counts too.
func stdinRefused(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		why, ok := fileOnlyFlags[f.Name]
		if !ok || err != nil {
			return
		}
		values := []string{f.Value.String()}
		m, repeatable := f.Value.(*multiFlag)
		if repeatable {
			values = *m
		}
		for _, v := range values {
			file := v
			if _, after, named := strings.Cut(v, "="); repeatable && named {
				file = after // NS=FILE, KIND=FILE
			}
			if file == stdinPath {
				err = fmt.Errorf("--%s %s: not stdin: %s; give a file path", f.Name, v, why)
				return
			}
		}
	})
	return err
}
