package discovery

import (
	"encoding/json"
	"testing"
)

// FuzzAppendJSONString holds appendJSONString to json.Marshal, appending
// after what dst already holds.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{
		"", "plain", `say "hi" \ back`, "a <b> & c", "tab\there\nnew\rline\b\f\x00\x1f\x7f",
		"zgłoszenie — 関数", "line\u2028para\u2029", "bad \xff\xfe utf8 \xe2\x82", "\xed\xa0\x80",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := appendJSONString([]byte("x"), s)
		if string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, json.Marshal gives %s", s, got[1:], want)
		}
	})
}

func TestAppendJSONStringAllocatesNothing(t *testing.T) {
	buf := make([]byte, 0, 256)
	s := "Create an <issue> & say \"hi\"\n in zgłoszenie"
	if n := testing.AllocsPerRun(100, func() { buf = appendJSONString(buf[:0], s) }); n != 0 {
		t.Errorf("appendJSONString allocates %v times, want 0", n)
	}
}
