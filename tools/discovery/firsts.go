package discovery

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
)

// MaxSessionBytes bounds a session id as the log and the miss counters
// keep it: a longer one (a client's session_id is its own text) is
// replaced by "sha256:" and the hex of its SHA-256, which still links the
// session's entries, so that a client cannot grow a log line past what
// [ReadJSONLog] reads ([MaxLogLine]) or the kept sessions' memory.
const MaxSessionBytes = 256

// boundSession returns s, or its digest when it is longer than
// [MaxSessionBytes].
func boundSession(s string) string {
	if len(s) <= MaxSessionBytes {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// DefaultMaxSessions is [Options.MaxSessions] when it is zero.
const DefaultMaxSessions = 10_000

// firstShortlists remembers, per session, the first shortlist of its
// current request, so that RecordOutcome can count a call whose tool that
// shortlist lacked as it happens: the live form of Misses, with the same
// rules (a session is tenant, principal and session id together; a
// [SourceTurn] query that differs from the current one starts a request, and
// so does a [SourceFindTools] search when the session has no request or a
// call followed the search that started the current one).
// It holds at most max sessions; a new one evicts the one first seen
// earliest.
type firstShortlists struct {
	mu    sync.Mutex
	max   int
	by    map[sessionKey]*firstShortlist
	order []sessionKey // a ring of the keys of by, oldest at next
	next  int
}

type sessionKey struct{ tenant, principal, session string }

type firstShortlist struct {
	query            [sha256.Size]byte // the request's digest: requests may be long
	ids              []string
	searched, called bool // as in Misses
}

func newFirstShortlists(max int) *firstShortlists {
	return &firstShortlists{max: max, by: map[sessionKey]*firstShortlist{}}
}

// query notes a shortlist of a request of session k.
func (f *firstShortlists) query(k sessionKey, source, query string, sl *Shortlist) {
	searched := source == SourceFindTools
	if k.session == "" || (source != "" && source != SourceTurn && !searched) {
		return
	}
	digest := sha256.Sum256([]byte(query))
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.by[k]
	switch {
	case searched && ok && !(cur.searched && cur.called):
		return // a search that refines the current request
	case !searched && ok && cur.query == digest:
		return // a later step of the same request
	}
	first := &firstShortlist{query: digest, ids: make([]string, len(sl.Candidates)), searched: searched}
	for i, c := range sl.Candidates {
		first.ids[i] = c.Tool.ID
	}
	if !ok {
		if len(f.order) < f.max {
			f.order = append(f.order, k)
		} else {
			delete(f.by, f.order[f.next])
			f.order[f.next] = k
			f.next = (f.next + 1) % f.max
		}
	}
	f.by[k] = first
}

// call reports whether a call of tool id in session k is linked to a
// first shortlist, and whether that shortlist held it.
func (f *firstShortlists) call(k sessionKey, id string) (linked, hit bool) {
	if k.session == "" {
		return false, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, ok := f.by[k]
	if !ok {
		return false, false
	}
	cur.called = true
	return true, slices.Contains(cur.ids, id)
}
