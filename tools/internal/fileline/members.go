package fileline

import (
	"fmt"
	"iter"
	"strings"
)

// Members are the member names a reader takes from a file's JSON objects.
// Other members are ignored (formats grow), except one that is a misspelt
// read member ([Members.NearMiss]): ignoring a tool's "scope" would leave
// it needing no scope, unseen.
type Members struct {
	exact map[string]bool
	loose map[string]string // a loose form -> the member it is one of
}

// NewMembers returns the members names.
func NewMembers(names ...string) Members {
	m := Members{exact: make(map[string]bool, len(names)), loose: make(map[string]string, 3*len(names))}
	for _, n := range names {
		m.exact[n] = true
		for _, f := range looseForms(n) {
			if _, taken := m.loose[f]; !taken {
				m.loose[f] = n
			}
		}
	}
	return m
}

// looseForms are the spellings a member name is mistaken for: in lower
// case without "_", "-" or spaces, and without a plural "s" or "es".
func looseForms(name string) []string {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(name))
	return []string{n, strings.TrimSuffix(n, "s"), strings.TrimSuffix(n, "es")}
}

// Reads reports whether name is a member read, in any letter case (as
// encoding/json matches a struct's fields).
func (m Members) Reads(name string) bool {
	for k := range m.exact {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// NearMiss returns why an object with these member names is refused, or
// "": a name that m does not read but that is a loose form of one it does
// ("scope", "Scopes", "readOnly", "notFor": another letter case, without
// "_" or "-", singular for plural). Of several, the least is named, so the
// message is the same every time.
func (m Members) NearMiss(names iter.Seq[string]) string {
	bad, want := "", ""
	for k := range names {
		if m.exact[k] || (bad != "" && k > bad) {
			continue
		}
		for _, f := range looseForms(k) {
			if w, ok := m.loose[f]; ok {
				bad, want = k, w
				break
			}
		}
	}
	if bad == "" {
		return ""
	}
	return fmt.Sprintf("unknown member %+q: did you mean %q? (it would be ignored)", bad[:min(len(bad), 64)], want)
}
