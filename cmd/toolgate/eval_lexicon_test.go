package main

import (
	"strings"
	"testing"
)

func TestEvalLexicon(t *testing.T) {
	cat := writeFile(t, "lex.jsonl", `{"name":"archive_note","description":"Archive a note so it leaves the inbox"}
{"name":"share_note","description":"Share a note with a colleague"}
{"name":"print_note","description":"Print a note on paper"}
`)
	// "garabatear" is in no embedded list: only the user's file says it means share.
	qs := writeFile(t, "q.jsonl", `{"query":"garabatear la nota","relevant":["share_note"],"lang":"es"}`+"\n")
	lex := writeFile(t, "es.txt", "garabatear: share\n")
	r1 := func(args ...string) float64 {
		t.Helper()
		return evalReport(t, append([]string{"--tools", cat, "--queries", qs}, args...)...).RecallAt1
	}
	if got := r1("--lexicon", "es="+lex); got != 1 {
		t.Errorf("eval --lexicon es=FILE: recall@1 %v, want 1 (the file translates the request's verb)", got)
	}
	if got := r1(); got == 1 {
		t.Errorf("eval without --lexicon: recall@1 1, want the request's verb unknown (the test proves nothing otherwise)")
	}
	for _, tc := range []struct{ spec, want string }{
		{"de=" + lex, `unknown kind "de"`},
		{"es=/does/not/exist", "no such file"},
		{"es=" + writeFile(t, "bad.txt", "no colon\n"), "bad.txt:1:"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			code, _, errOut := runCmd("eval", "--tools", cat, "--queries", qs, "--lexicon", tc.spec)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("eval --lexicon %s: exit %d, stderr %q; want exit 2 naming %q", tc.spec, code, errOut, tc.want)
			}
		})
	}
}
