package tools

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// Tool names are printable ASCII: a letter of another script, an invisible
// or bidirectional character, or a space at either end would let one
// tool's name pass for another's (security invariant 10, "lookalike
// names"). The refusal names the character, escaped, and its position.
func TestToolNames(t *testing.T) {
	tests := []struct {
		name, tool string
		want       string // the reason after `tool name "...": `; "" for a valid name
	}{
		{"snake case", "transfer_funds", ""},
		{"dots, slashes and dashes", "admin.tools/list-all", ""},
		{"MetaTool's ampersand", "PDF&URLTool", ""},
		{"a space inside", "create issue", ""},
		{"Cyrillic a among Latin letters", "tr\u0430nsfer_funds", `tool name "tr\u0430nsfer_funds": character 3 is U+0430 CYRILLIC SMALL LETTER A, not printable ASCII: it could pass for another tool's name`},
		{"all Cyrillic", "\u0441\u043e\u0440\u0443", `tool name "\u0441\u043e\u0440\u0443": character 1 is U+0441 CYRILLIC SMALL LETTER ES, not printable ASCII: it could pass for another tool's name`},
		{"Greek omicron", "g\u03bfogle", `tool name "g\u03bfogle": character 2 is U+03BF GREEK SMALL LETTER OMICRON, not printable ASCII: it could pass for another tool's name`},
		{"fullwidth letter", "\uff54ransfer", `tool name "\uff54ransfer": character 1 is U+FF54 FULLWIDTH LATIN SMALL LETTER T, not printable ASCII: it could pass for another tool's name`},
		{"accented letter", "caf\u00e9", `tool name "caf\u00e9": character 4 is U+00E9 LATIN SMALL LETTER E WITH ACUTE, not printable ASCII: it could pass for another tool's name`},
		{"right-to-left override", "transfer\u202e_funds", `tool name "transfer\u202e_funds": character 9 is U+202E RIGHT-TO-LEFT OVERRIDE, not printable ASCII: it could pass for another tool's name`},
		{"zero width space", "transfer\u200b_funds", `tool name "transfer\u200b_funds": character 9 is U+200B ZERO WIDTH SPACE, not printable ASCII: it could pass for another tool's name`},
		{"zero width joiner", "a\u200db", `tool name "a\u200db": character 2 is U+200D ZERO WIDTH JOINER, not printable ASCII: it could pass for another tool's name`},
		{"word joiner", "\u2060a", `tool name "\u2060a": character 1 is U+2060 WORD JOINER, not printable ASCII: it could pass for another tool's name`},
		{"byte order mark", "\ufeffa", `tool name "\ufeffa": character 1 is U+FEFF ZERO WIDTH NO-BREAK SPACE, not printable ASCII: it could pass for another tool's name`},
		{"division slash", "create\u2215issue", `tool name "create\u2215issue": character 7 is U+2215 DIVISION SLASH, not printable ASCII: it could pass for another tool's name`},
		{"no-break space", "create\u00a0issue", `tool name "create\u00a0issue": character 7 is U+00A0 NO-BREAK SPACE, not printable ASCII: it could pass for another tool's name`},
		{"trailing space", "transfer_funds ", `tool name "transfer_funds ": ends with a space: it could pass for "transfer_funds"`},
		{"leading space", " transfer_funds", `tool name " transfer_funds": starts with a space: it could pass for "transfer_funds"`},
		{"line break", "a\nb", `tool name "a\nb": character 2 is U+000A, a control character`},
		{"escape", "a\x1b[31m", `tool name "a\x1b[31m": character 2 is U+001B, a control character`},
		{"C1 control", "a\u0085", `tool name "a\u0085": character 2 is U+0085, a control character`},
		{"invalid UTF-8", "a\xffb", `tool name "a\xffb": byte 2 is not UTF-8`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Define("ns", Definition{Name: tc.tool})
			verr := (&Tool{ID: "ns/" + tc.tool, Card: Card{Name: tc.tool}}).Validate()
			if tc.want == "" {
				if err != nil || verr != nil {
					t.Fatalf("Define(%q) = %v, Validate = %v; want a valid tool", tc.tool, err, verr)
				}
				return
			}
			var de *DefinitionError
			if !errors.As(err, &de) || de.Field != "name" || de.Reason != tc.want {
				t.Errorf("Define(%q) = %v; want a name error %s", tc.tool, err, tc.want)
			}
			if verr == nil || !errors.Is(verr, ErrInvalidTool) || !strings.HasSuffix(verr.Error(), tc.want) {
				t.Errorf("Validate(%q) = %v; want one ending %s", tc.tool, verr, tc.want)
			}
			// The reason is printable ASCII itself: it can be shown anywhere.
			for i := 0; i < len(tc.want); i++ {
				if tc.want[i] < 0x20 || tc.want[i] >= 0x7f {
					t.Fatalf("the reason for %q holds byte %#x", tc.tool, tc.want[i])
				}
			}
		})
	}
}

// A registry refuses a lookalike whatever made the tool ([NewFunc], a
// literal), not only catalog files.
func TestRegistryRefusesLookalikes(t *testing.T) {
	reg := NewRegistry()
	ok := Tool{ID: "bank/transfer_funds", Card: Card{Name: "transfer_funds"}}
	look := Tool{ID: "evil/tr\u0430nsfer_funds", Card: Card{Name: "tr\u0430nsfer_funds"}}
	if err := reg.Add(ok); err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(look); err == nil || !strings.Contains(err.Error(), `U+0430 CYRILLIC SMALL LETTER A`) {
		t.Errorf("Add(lookalike) = %v, want the Cyrillic letter refused", err)
	}
	if err := reg.ReplaceNamespace("evil", []Tool{look}); err == nil {
		t.Error("ReplaceNamespace(lookalike) = nil, want an error")
	}
	if reg.Snapshot().Len() != 1 {
		t.Errorf("registry holds %d tools, want 1", reg.Snapshot().Len())
	}
}

func FuzzToolName(f *testing.F) {
	for _, s := range []string{"transfer_funds", "tr\u0430nsfer", "a\u202eb", " a", "a ", "a\xff", "PDF&URLTool", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if name == "" {
			return // Define and Validate refuse it before checkName
		}
		err := checkName(name)
		ascii := name[0] != ' ' && name[len(name)-1] != ' '
		for i := 0; i < len(name); i++ {
			ascii = ascii && name[i] >= 0x20 && name[i] < 0x7f
		}
		if (err == nil) != ascii {
			t.Fatalf("checkName(%q) = %v; printable ASCII without a space at an end: %v", name, err, ascii)
		}
		if err != nil {
			msg := err.Error()
			if !utf8.ValidString(msg) || strings.IndexFunc(msg, func(r rune) bool { return r < 0x20 || r >= 0x7f }) >= 0 {
				t.Fatalf("checkName(%q) reason %q is not printable ASCII", name, msg)
			}
		}
	})
}
