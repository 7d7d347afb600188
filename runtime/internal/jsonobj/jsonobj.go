// Package jsonobj holds the strict JSON checks the runtime's protocol
// parsers share (find_tools, call_tool, MCP frames): a document has one
// meaning, so no object names a member twice (encoding/json would silently
// keep the last).
package jsonobj

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxDepth bounds the nesting Unique walks; deeper documents are refused.
const MaxDepth = 256

// Unique returns an error naming the first object member that appears
// twice in doc (at any depth), or a syntax error. Its cost is linear in
// len(doc).
func Unique(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := walk(dec, "", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err == nil {
		return fmt.Errorf("trailing data after the document")
	}
	return nil
}

// walk reads one value from dec; path is its JSON pointer, for errors.
func walk(dec *json.Decoder, path string, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("%s: nested deeper than %d levels", pointer(path), MaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key := kt.(string) // a Decoder only returns string keys
			if seen[key] {
				return fmt.Errorf("%s: member %q appears twice", pointer(path), key)
			}
			seen[key] = true
			if err := walk(dec, path+"/"+key, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walk(dec, fmt.Sprintf("%s/%d", path, i), depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
		return err
	}
	return nil
}

func pointer(path string) string {
	if path == "" {
		return "document"
	}
	return path
}
