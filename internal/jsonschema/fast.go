package jsonschema

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A fast checker proves common instances valid without the general
// validator: a compiled tree for the shapes tool schemas use (objects with
// declared properties and required members, closed or open; strings with
// lengths, RE2-safe patterns and string enums; numbers with bounds and a
// decimal multipleOf; integers; booleans; arrays with item schemas and
// sizes). It answers only "valid" or "don't know": any keyword, value or
// number it cannot decide exactly makes it step aside, and the general
// validator (which also writes the violations) decides. So the fast path
// can make validation cheaper, never more permissive — FuzzFastAgrees pins
// that.

// fastNode checks one schema location; nil means the location has a
// keyword the fast path does not decide.
type fastNode struct {
	typ string // "", "object", "string", "number", "integer", "boolean", "array", "null"

	// object
	props    map[string]*fastNode // nil entries: a property the fast path cannot check
	required []string
	closed   bool // additionalProperties: false

	// string
	minLen, maxLen int // -1: none
	pattern        *regexp.Regexp
	enum           []string // nil: none

	// number
	min, max         *float64 // inclusive bounds
	exclMin, exclMax *float64
	fracDigits       int // multipleOf 10^-k: at most k fraction digits; -1: none

	// array
	items              *fastNode
	hasItems           bool
	minItems, maxItems int // -1: none
}

// annotations never change validity.
var annotations = map[string]bool{"title": true, "description": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true}

// fastDrafts are the $schema values whose meaning of the keywords above is
// the default draft's.
var fastDrafts = map[string]bool{"https://json-schema.org/draft/2020-12/schema": true,
	"https://json-schema.org/draft/2019-09/schema": true, "http://json-schema.org/draft-07/schema#": true,
	"http://json-schema.org/draft-07/schema": true}

// fastRoot returns doc as an object when it is one whose $schema, if
// any, is one of fastDrafts.
func fastRoot(doc any) (map[string]any, bool) {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, false
	}
	if d, has := m["$schema"]; has {
		s, _ := d.(string)
		return m, fastDrafts[s]
	}
	return m, true
}

// compileFast returns the fast checker of the schema document, or nil.
func compileFast(doc any) *fastNode {
	m, ok := fastRoot(doc)
	if !ok {
		return nil
	}
	return fastCompile(m, true)
}

func fastCompile(m map[string]any, root bool) *fastNode {
	n := &fastNode{minLen: -1, maxLen: -1, fracDigits: -1, minItems: -1, maxItems: -1}
	// The keywords that set one field of n each, by the kind of value.
	lengths := map[string]*int{"minLength": &n.minLen, "maxLength": &n.maxLen, "minItems": &n.minItems, "maxItems": &n.maxItems}
	bounds := map[string]**float64{"minimum": &n.min, "maximum": &n.max, "exclusiveMinimum": &n.exclMin, "exclusiveMaximum": &n.exclMax}
	var props map[string]any
	for k, v := range m {
		switch {
		case annotations[k] || (root && k == "$schema"):
		case k == "type":
			s, ok := v.(string)
			if !ok {
				return nil
			}
			n.typ = s
		case k == "properties":
			if props, _ = v.(map[string]any); props == nil {
				return nil
			}
		case k == "required":
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, r := range list {
				s, ok := r.(string)
				if !ok {
					return nil
				}
				n.required = append(n.required, s)
			}
		case k == "additionalProperties":
			if b, ok := v.(bool); !ok {
				return nil
			} else {
				n.closed = !b
			}
		case lengths[k] != nil:
			i, ok := nonNegativeInt(v)
			if !ok {
				return nil
			}
			*lengths[k] = i
		case k == "pattern":
			s, ok := v.(string)
			if !ok || !Portable(s) {
				return nil
			}
			re, err := regexp.Compile(s)
			if err != nil {
				return nil
			}
			n.pattern = re
		case k == "enum":
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			n.enum = make([]string, 0, len(list))
			for _, e := range list {
				s, ok := e.(string)
				if !ok {
					return nil
				}
				n.enum = append(n.enum, s)
			}
		case bounds[k] != nil:
			f, ok := boundFloat(v)
			if !ok {
				return nil
			}
			*bounds[k] = &f
		case k == "multipleOf":
			d, ok := decimalStep(v)
			if !ok {
				return nil
			}
			n.fracDigits = d
		case k == "items":
			sub, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			n.items, n.hasItems = fastCompile(sub, false), true
		default:
			return nil
		}
	}
	switch n.typ {
	case "object", "string", "number", "integer", "boolean", "array", "null":
	default:
		return nil // no type (or an unknown one): keywords apply across types; leave it to the validator
	}
	if n.enum != nil && n.typ != "string" {
		return nil // enum applies to every type; only string enums are checked here
	}
	if props != nil {
		n.props = make(map[string]*fastNode, len(props))
		for name, sub := range props {
			sm, ok := sub.(map[string]any)
			if !ok {
				n.props[name] = nil
				continue
			}
			n.props[name] = fastCompile(sm, false)
		}
	}
	return n
}

func nonNegativeInt(v any) (int, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(num))
	return i, err == nil && i >= 0
}

// boundFloat returns a bound as a double. It need not be exact: the
// checks compare strictly, and rounding to a double is monotonic.
func boundFloat(v any) (float64, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	return f, err == nil && !math.IsInf(f, 0)
}

// decimalStep reads multipleOf 10^-k (1, 0.1, 0.01, ...) and returns k.
func decimalStep(v any) (int, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	s := string(num)
	if s == "1" {
		return 0, true
	}
	if !strings.HasPrefix(s, "0.") {
		return 0, false
	}
	frac := s[2:]
	if len(frac) == 0 || len(frac) > 15 || !strings.HasSuffix(frac, "1") || strings.Trim(frac[:len(frac)-1], "0") != "" {
		return 0, false
	}
	return len(frac), true
}

// fractionDigits returns how many digits after the point a plain number
// literal has, trailing zeros ignored; ok is false for exponent notation.
func fractionDigits(s string) (int, bool) {
	if strings.ContainsAny(s, "eE") {
		return 0, false
	}
	_, frac, _ := strings.Cut(s, ".")
	return len(strings.TrimRight(frac, "0")), true
}

// valid reports that v is certainly valid; false means "not known".
func (n *fastNode) valid(v any) bool {
	if n == nil {
		return false
	}
	switch n.typ {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, r := range n.required {
			if _, ok := obj[r]; !ok {
				return false
			}
		}
		for k, e := range obj {
			sub, declared := n.props[k]
			switch {
			case declared && !sub.valid(e):
				return false
			case !declared && n.closed:
				return false
			}
		}
		return true
	case "string":
		s, ok := v.(string)
		if !ok {
			return false
		}
		if n.minLen >= 0 || n.maxLen >= 0 {
			l := utf8.RuneCountInString(s)
			if (n.minLen >= 0 && l < n.minLen) || (n.maxLen >= 0 && l > n.maxLen) {
				return false
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(s) {
			return false
		}
		if n.enum != nil {
			for _, e := range n.enum {
				if e == s {
					return true
				}
			}
			return false
		}
		return true
	case "number", "integer":
		num, ok := v.(json.Number)
		if !ok {
			return false
		}
		s := string(num)
		if n.typ == "integer" && strings.ContainsAny(s, ".eE") {
			return false // 1.0 is an integer too; let the validator say so
		}
		if n.fracDigits >= 0 {
			d, ok := fractionDigits(s)
			if !ok || d > n.fracDigits {
				return false
			}
		}
		if n.min == nil && n.max == nil && n.exclMin == nil && n.exclMax == nil {
			return true
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return false
		}
		// Rounding to a double is monotonic: a strict comparison of doubles
		// holds for the exact values; equality is left to the validator.
		return (n.min == nil || f > *n.min) && (n.max == nil || f < *n.max) &&
			(n.exclMin == nil || f > *n.exclMin) && (n.exclMax == nil || f < *n.exclMax)
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	case "array":
		list, ok := v.([]any)
		if !ok || (n.minItems >= 0 && len(list) < n.minItems) || (n.maxItems >= 0 && len(list) > n.maxItems) {
			return false
		}
		if n.hasItems {
			for _, e := range list {
				if !n.items.valid(e) {
					return false
				}
			}
		}
		return true
	}
	return false
}
