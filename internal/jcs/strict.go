package jcs

import "encoding/json"

// Unmarshal decodes the JSON value data into v as [json.Unmarshal] does, but
// only after checking data as strictly as [Parse] does: a duplicate member
// name at any depth, invalid UTF-8, a lone surrogate escape, nesting deeper
// than [MaxDepth] or trailing data is a *[SyntaxError] and v is left untouched.
// It is the decoder for every document whose meaning must be unambiguous
// (catalogs, input schemas, query files, configuration, token files): with
// encoding/json alone {"scopes":["admin"],"scopes":[]} silently means the
// last member.
func Unmarshal(data []byte, v any) error {
	if err := Check(data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}
