package discovery

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The byte tests that guard the identifier expressions must be necessary
// conditions: wherever an expression matches, its guard is true.
var prefilterCases = []string{
	"report.md", "open ./a/b.txt", "file_v2.json please", "x.Md", "a. b", ".md", "-x.go",
	"ACC-12345", "see PROJ-1 and inv-22", "A-1", "-12", "ZZ-", "x PR-9",
	"#94218", "issue #12", "issue 1234", "Issue   #7", "pr12", "PULL REQUEST 3", "no. 55", "nr.9", "número 4",
	"nº 5", "n° 6", "order\t17", "ticket\n8", "numer 9", "1234", "12 issues", "ab12", "#", "no#1", "NO 2",
	"go to example.com", "Docs.Example.org/start?x=1", "a.io", "x.company", "node.js", "-a.dev", "_.co", "x.co_", "x.co-y", "a.pl.",
	"9.eu", "x.comé", "ab.c", "a.ioé",
	"iſſue 12", "ticKet 3", "pull requeſt #4", "the top 10 tools", "PULL  REQUEST\t#5", "xissue 5", "Invoice# 6", "NR.7",
	"/var/log/app.log", "~/x", "./a", "../b", "(/etc)", "'/tmp'", "a/b", "C:\\x", "c:\\", "z:\\\"", "9 m/s^2", "x.//", "/-",
	"golang/go", "\"a/b\"", "(a-b/c.d)", "a/b.", "a/b.c^", "a/b^", "_a/b", "-a/b", "a./b?", "x a/b!c", "a/bé", "ab/ c",
	"a@b.c", "a.@b.com", ".a@b.co", "x-@y-.z", "a@b.c-", "a@b.c_", "a@b..c", "a@b.c.d.", "a@b@c.d", "_a@b.c", "é@a.b",
	"a@b.c@d.e", "john.doe@example.com.", "a@b-c.d-e", "a@b.-", "a+b%c@x.y z@w.v", "-@a.b", "a@b.c-d_", "a@-.-", "x.@a.b-c-",
	"a/b c/d", "a/b  c/d", "a/b, c/d.", "(a/b)(c/d)", "x a/b.c.d!", "a/b/c", "a/b.c.^", " 9.8 m/s and 3 m/s\n", "é a/b", "'a/b'c/d",
	"x.tar", "a.jpeg.", "a-.yml", "_.c", "x.cpp2", "x.cppé", "x.Txt", "a.mp3_", "a.env",
	"see https://a.b/c, https://a.b/c and x@y.org; z@w.io at example.com.", strings.Repeat("https://x.io a@b.co c.dev ", 10),
	"SELECT name FROM users", "run select count(*) from orders where x=1", "xselect * from t", "DELETE FROM t WHERE id=1",
	"insert into t (a) values (1)", "update t set a = 1", "Create Table x (a int)", "DROP TABLE t; then\nselect * from u",
	"text +14155550123 now", "+48 600 123 456", "+1 (415) 555-0100", "(415) 555-0100", "(415)555-0100", "415-555-0100",
	"415.555.0100", "415 555 0100", "(415)\t555 0100", "(415)\n555-0100", "+1-415-555-0100.", "+12", "a+1234567b", "2026-12-05", "v1.2.3", "10.0.0.1", "(415)  555-0100",
	"#general", "post to #eng-alerts.", "C# code", "# heading", "(#random)", "a#b", "#ogólny", "#é", "x #_", "\"#q\"",
	"A1:B10", "Sheet1!$A$2:$F$20", "$A$1:$C$9", "x$A$1:B2", "at 10:30", "a1:b2", "A1:", "1:A", "x9:$",
}

func checkPrefilters(t *testing.T, s string) {
	t.Helper()
	guards := []struct {
		name  string
		re    *regexp.Regexp
		guard func(string) bool
	}{
		{"file", reFile, mayHaveFile},
		{"ext", reFile, mayHaveExt},
		{"path", rePath, mayHavePath},
		{"repo", reRepo, mayHaveRepo},
		{"domain", reDomain, mayHaveDomain},
		{"key", reKey, func(s string) bool { return mayHave(s, '-', isKeyByte, isDigit) }},
		{"hash", reHash, func(s string) bool { return mayHave(s, '#', func(byte) bool { return true }, isDigit) }},
		{"numref", reNumRef, mayHaveNumRef},
		{"sql", reSQL, mayHaveSQL},
		{"phone", rePhone, mayHavePhone},
		{"channel", reChannel, func(s string) bool { return mayHave(s, '#', isChannelStart, isChannelLetter) }},
		{"range", reRange, func(s string) bool { return mayHave(s, ':', isDigit, isRangeStart) }},
	}
	for _, g := range guards {
		t.Run(g.name, func(t *testing.T) {
			if g.re.MatchString(s) && !g.guard(s) {
				t.Errorf("%s expression matches %q but its guard says it cannot", g.name, s)
			}
		})
	}
	// emailLocs finds what reEmail finds.
	t.Run("email-find", func(t *testing.T) {
		if got, want := emailLocs(s), reEmail.FindAllStringIndex(s, -1); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("emailLocs(%q) = %v, reEmail finds %v", s, got, want)
		}
	})
	// repoMatches finds what reRepo finds.
	t.Run("repo-find", func(t *testing.T) {
		var want []string
		for _, m := range reRepo.FindAllStringSubmatch(s, 8) {
			want = append(want, m[1])
		}
		if got := repoMatches(s, 8); !slices.Equal(got, want) {
			t.Errorf("repoMatches(%q) = %q, reRepo finds %q", s, got, want)
		}
	})
	// findCut gives what FindAllString and ReplaceAllString give.
	for _, c := range []struct {
		name string
		re   *regexp.Regexp
	}{{"url-cut", reURL}, {"email-cut", reEmail}, {"domain-cut", reDomain}, {"sql-cut", reSQL}, {"phone-cut", rePhone}, {"range-cut", reRange}} {
		t.Run(c.name, func(t *testing.T) {
			ms, rest := findCut(c.re, s, 8)
			if want := c.re.FindAllString(s, 8); !slices.Equal(ms, want) {
				t.Errorf("findCut(%v, %q) finds %q, FindAllString %q", c.re, s, ms, want)
			}
			if want := c.re.ReplaceAllString(s, " "); rest != want {
				t.Errorf("findCut(%v, %q) leaves %q, ReplaceAllString %q", c.re, s, rest, want)
			}
		})
	}
}

// TestMayHaveIsByteLoop checks mayHave, which jumps between separators,
// against the loop over every byte that it replaced: the same answer for
// every prefix and suffix of the prefilter cases, for each separator and
// pair of tests its callers pass.
func TestMayHaveIsByteLoop(t *testing.T) {
	loop := func(text string, sep byte, before, after func(byte) bool) bool {
		for i := 0; i+1 < len(text); i++ {
			if text[i] == sep && after(text[i+1]) && (i == 0 && before(0) || i > 0 && before(text[i-1])) {
				return true
			}
		}
		return false
	}
	always := func(byte) bool { return true }
	for _, g := range []struct {
		name          string
		sep           byte
		before, after func(byte) bool
	}{
		{"file", '.', isWordByte, isLower},
		{"key", '-', isKeyByte, isDigit},
		{"hash", '#', always, isDigit},
		{"channel", '#', isChannelStart, isChannelLetter},
	} {
		t.Run(g.name, func(t *testing.T) {
			check := func(sub string) {
				if got, want := mayHave(sub, g.sep, g.before, g.after), loop(sub, g.sep, g.before, g.after); got != want {
					t.Errorf("mayHave(%q, %q) = %v, want %v", sub, g.sep, got, want)
				}
			}
			for _, s := range slices.Concat(prefilterCases, []string{"", "#", "#1", "a.", ".b", "x-1-", "--1"}) {
				for i := 0; i <= len(s); i++ {
					check(s[:i])
					check(s[i:])
				}
			}
		})
	}
}

func TestIdentifierPrefilters(t *testing.T) {
	for _, s := range prefilterCases {
		checkPrefilters(t, s)
	}
	// And the guards do skip: a plain request runs none of them.
	for _, s := range []string{"list the open pull requests in the payments repository.", "get the 2-day forecast for the top 10 cities", "upgrade to v1.2.3 now. Then Com.", "a speed of 3 m/s^2, 9.8 m/s²"} {
		t.Run(s, func(t *testing.T) {
			if mayHaveFile(s) || mayHaveDomain(s) || mayHaveNumRef(s) || mayHavePath(s) || mayHaveRepo(s) || mayHaveExt(s) {
				t.Errorf("a request without ids passes a guard: %q", s)
			}
		})
	}
	// Dates, versions and addresses run no phone expression.
	for _, s := range []string{"book it for 2026-12-05 at 10:15", "upgrade to v1.2.3", "ping 10.0.0.1", "call me at 9"} {
		t.Run("phone/"+s, func(t *testing.T) {
			if mayHavePhone(s) {
				t.Errorf("mayHavePhone(%q) = true, want false", s)
			}
		})
	}
}

func FuzzIdentifierPrefilters(f *testing.F) {
	for _, s := range prefilterCases {
		f.Add(s)
	}
	f.Fuzz(checkPrefilters)
}

// valueOf is the value of the last of ids of kind k, "" when none is.
func valueOf(ids []identifier, k idKind) string {
	v := ""
	for _, id := range ids {
		if id.kind == k {
			v = id.value
		}
	}
	return v
}

// TestIdentifierValues checks which requests carry a SQL statement, a
// telephone number, a chat channel or a range of cells (cut from the request and given to
// the tools that take one) and which only use SQL's words in English, have
// digits in a number's other shapes or a hash that is no channel's. SQL
// and channels are looked for only where a catalog has a tool that takes
// one.
func TestIdentifierValues(t *testing.T) {
	for _, tc := range []struct {
		kind       idKind
		text, want string
	}{
		{idSQL, "ejecuta en neon: SELECT count(*) FROM users", "SELECT count(*) FROM users"},
		{idSQL, "run select name, email from customers where plan='pro'", "select name, email from customers where plan='pro'"},
		{idSQL, "please DELETE FROM sessions WHERE expired", "DELETE FROM sessions WHERE expired"},
		{idSQL, "insert into events (kind) values ('x')\nthen list them", "insert into events (kind) values ('x')"},
		{idSQL, "update orders set status = 'paid' where id = 4", "update orders set status = 'paid' where id = 4"},
		{idSQL, "create table notes (id int)", "create table notes (id int)"},
		{idSQL, "delete from my inbox all the spam", ""},
		{idSQL, "select all from the list and archive them", ""},
		{idSQL, "update the ticket set to high priority", ""},
		{idSQL, "create a table of contents", ""},
		{idSQL, "drop the table from the report", ""},
		{idPhone, "text +14155550123 that the package has shipped", "+14155550123"},
		{idPhone, "wyślij SMS na +48 600 123 456", "+48 600 123 456"},
		{idPhone, "call +1 (415) 555-0100 from our number", "+1 (415) 555-0100"},
		{idPhone, "llama al (415) 555-0100", "(415) 555-0100"},
		{idPhone, "call 415-555-0100 back", "415-555-0100"},
		{idPhone, "the release of 2026-12-05", ""},
		{idPhone, "upgrade to v1.2.3 on 10.0.0.1", ""},
		{idPhone, "raise the price by +15 percent", ""},
		{idPhone, "invoice 1234567", ""},
		{idChannel, "ping the team in the #general channel", "#general"},
		{idChannel, "what have people been saying in #random lately", "#random"},
		{idChannel, "post it to #eng-alerts.", "#eng-alerts"},
		{idChannel, "wyślij wiadomość na kanał #ogólny", "#ogólny"},
		{idChannel, "close issue #42", ""},
		{idChannel, "port this C# code", ""},
		{idChannel, "# Release notes", ""},
		{idRange, "paint A1:A10 yellow", "A1:A10"},
		{idRange, "borra el contenido de las celdas A2:F20", "A2:F20"},
		{idRange, "sum Sheet1!$B$2:$B$40 into B41", "Sheet1!$B$2:$B$40"},
		{idRange, "clear $A$1:$C$9 now", "$A$1:$C$9"},
		{idRange, "x$A$1:$C$9", "$A$1:$C$9"},
		{idRange, "the meeting at 10:30", ""},
		{idRange, "put it in cell A4", ""},
		{idRange, "ratio 16:9 of the S3 bucket", ""},
	} {
		t.Run(tc.kind.String()+" "+tc.text, func(t *testing.T) {
			if got := valueOf(identifiers(tc.text, lookFor{sql: true, channel: true}), tc.kind); got != tc.want {
				t.Errorf("identifiers(%q) has %s %q, want %q", tc.text, tc.kind, got, tc.want)
			}
			// A catalog without a tool that takes one looks for none.
			ids := identifiers(tc.text, lookFor{})
			if got := valueOf(ids, idSQL) + valueOf(ids, idChannel); got != "" {
				t.Errorf("identifiers(%q, lookFor{}) has SQL or a channel: %q", tc.text, got)
			}
		})
	}
}

// TestParamAcceptors checks which parameters take a telephone number (by
// name, by E.164 in the description, or by "phone number" near its start)
// and which a chat channel (by name).
func TestParamAcceptors(t *testing.T) {
	for _, tc := range []struct {
		kind       idKind
		name, desc string
		want       bool
	}{
		{idPhone, "PhoneNumber", "", true},
		{idPhone, "to_mobile", "", true},
		{idPhone, "To", "The recipient's phone number in [E.164](https://example.com/e164) format.", true},
		{idPhone, "To", "The phone number, SIP address, or client identifier to call.", true},
		{idPhone, "To", "Only show calls made to this phone number, SIP address or SIM SID.", true},
		{idPhone, "FriendlyName", "A descriptive string that you created to describe this phone number.", false},
		{idPhone, "to", "The recipient's email address.", false},
		{idPhone, "limit", "How many phone numbers to return, at most.", false},
		{idChannel, "channel_id", "The ID of the channel to post to", true},
		{idChannel, "channelName", "", true},
		{idChannel, "text", "The message to post to the channel", false},
		{idRange, "range", "The A1 notation of the values to read", true},
		{idRange, "cell_phone", "", false},
	} {
		t.Run(tc.kind.String()+" "+tc.name+" "+tc.desc, func(t *testing.T) {
			got := false
			for _, a := range paramAcceptors(tc.name, map[string]any{"type": "string", "description": tc.desc}) {
				got = got || a.kind == tc.kind
			}
			if got != tc.want {
				t.Errorf("paramAcceptors(%q, %q) takes a %s: %v, want %v", tc.name, tc.desc, tc.kind, got, tc.want)
			}
		})
	}
}

func TestBareDomains(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []identifier
	}{
		{"go to example.com in the browser", []identifier{{idURL, "example.com"}}},
		{"open docs.Example.org/start.", []identifier{{idURL, "docs.Example.org/start"}}},
		{"read notes.txt and main.go", []identifier{{idPath, "notes.txt"}, {idPath, "main.go"}}},
		{"mail ana@example.com", []identifier{{idEmail, "ana@example.com"}}},
		{"see https://example.com/a", []identifier{{idURL, "https://example.com/a"}}},
		{"a node.js app for x.company, e.g. this", []identifier{{idPath, "node.js"}}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			got := identifiers(tc.text, lookFor{sql: true, channel: true})
			if len(got) != len(tc.want) {
				t.Errorf("identifiers(%q) = %v, want %v", tc.text, got, tc.want)
				return
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("identifiers(%q) = %v, want %v", tc.text, got, tc.want)
					break
				}
			}
		})
	}
}

// TestCutStandIns checks that every identifier with a stand-in is cut
// whole, whatever order identifiers found them in: a value that begins a
// longer one must not cut the longer one's head off.
func TestCutStandIns(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"shorter first", "post to #eng and #eng-alerts", "post to  channel  and  channel "},
		{"longer first", "post to #eng-alerts and #eng", "post to  channel  and  channel "},
		{"prefix of a word", "mute #eng, keep #engineering", "mute  channel , keep  channel "},
		{"path and its file", "diff report.md with ./out/report.md", "diff  file  with  file "},
		{"no stand-in", "close issue #42", "close issue #42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := cutStandIns(tc.text, identifiers(tc.text, lookFor{channel: true}))
			if got != tc.want || cut != (tc.text != tc.want) {
				t.Errorf("cutStandIns(%q) = %q, %v; want %q", tc.text, got, cut, tc.want)
			}
		})
	}
}

// BenchmarkIdentifiers measures the look for identifiers in a request
// with a unit that passes the owner/repo guard ("m/s " reads as one) and
// in one with an e-mail address.
func BenchmarkIdentifiers(b *testing.B) {
	for _, q := range []struct{ name, text string }{
		{"unit", "A car starts from rest and accelerates at 6 m/s for 10 seconds; a second car starts at 20 m/s and " +
			"accelerates at 4 m/s for 15 seconds. What are the final velocities of both cars?"},
		{"email", "Hi, I forgot my password. Can you help me reset it? Yes, my username is JohnDoe and my email is " +
			"johndoe@example.com. Yes, please go ahead."},
	} {
		b.Run(q.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				identifiers(q.text, lookFor{})
			}
		})
	}
}
