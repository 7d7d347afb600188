package discovery

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dlclark/regexp2"
)

// idKind is a kind of exact identifier a request can carry.
type idKind uint8

const (
	idURL     idKind = iota // https://example.com/x, example.com
	idEmail                 // ana@example.com
	idPath                  // /var/log/app.log, ./x, C:\x, report.md
	idRepo                  // owner/repo
	idKey                   // ACC-12345, PROJ-123, INV-1024
	idNumber                // #94218, "issue 1234"
	idSQL                   // SELECT count(*) FROM users
	idPhone                 // +14155550123, +48 600 123 456, (415) 555-0100
	idChannel               // #general, #eng-alerts (a chat channel)
	idRange                 // A1:B10, Sheet1!$A$2:$F$20 (a spreadsheet's cells)
	numKinds
)

var kindNames = [numKinds]string{"url", "email", "path", "repo", "key", "number", "sql", "phone", "channel", "range"}

func (k idKind) String() string { return kindNames[k] }

// standIn reports whether an identifier of kind k is cut from the words of
// the request it is found in, and returns the text that takes its place:
// the word for what it is, so that "open https://example.com" reads as
// "open url" (a verb and its object: lexicon.Sense) and "read
// ./notes/todo.md" as "read file", "post to #general" as "post to
// channel", "paint A1:A10 yellow" as "paint range yellow". A telephone number leaves a space: the
// tools that call or text one name it by the call or the message, and
// "phone" would pull the ones that manage numbers.
func (k idKind) standIn() (string, bool) {
	switch k {
	case idURL:
		return " url ", true
	case idEmail:
		return " email ", true
	case idPath:
		return " file ", true
	case idSQL:
		return " sql ", true
	case idPhone:
		return " ", true
	case idChannel:
		return " channel ", true
	case idRange:
		return " range ", true
	}
	return "", false
}

// cutStandIns replaces, in text, every identifier of ids whose kind has a
// stand-in (idKind.standIn) with that stand-in, and reports whether it
// replaced any. The longest value goes first: a value is replaced
// wherever it stands, so "#eng" cut first would leave "#eng-alerts" as
// "channel -alerts".
func cutStandIns(text string, ids []identifier) (string, bool) {
	n := 0
	for _, id := range ids {
		if _, ok := id.kind.standIn(); ok {
			n++
		}
	}
	if n == 0 {
		return text, false
	}
	if n > 1 {
		cut := make([]identifier, 0, n)
		for _, id := range ids {
			if _, ok := id.kind.standIn(); ok {
				cut = append(cut, id)
			}
		}
		slices.SortStableFunc(cut, func(a, b identifier) int { return len(b.value) - len(a.value) })
		ids = cut
	}
	for _, id := range ids {
		if w, ok := id.kind.standIn(); ok {
			text = strings.ReplaceAll(text, id.value, w)
		}
	}
	return text, true
}

// identifier is one exact id found in a request.
type identifier struct {
	kind  idKind
	value string
}

var (
	reURL = regexp.MustCompile(`\bhttps?://[^\s<>"']+`)
	// reEmail is an e-mail address: what emailLocs finds by hand, held
	// to it by the tests.
	reEmail = regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b`)
	rePath  = regexp.MustCompile(`(?:^|[\s"'(])((?:~|\.{1,2})?/[\w.\-/]+|[A-Za-z]:\\[^\s"']+)`)
	reFile  = regexp.MustCompile(`\b[\w-]+\.(?:` + strings.Join(fileExts, "|") + `)\b`)
	// reDomain is a bare web address, a host name without a scheme
	// ("example.com", "docs.example.org/start"), under the common top-level
	// domains that are not also file extensions reFile knows.
	reDomain = regexp.MustCompile(`\b(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+(?:com|org|net|io|dev|ai|app|edu|gov|co|uk|de|fr|es|pl|eu)\b(?:/[^\s<>"']*)?`) // TLDs: domainTLDs
	// reRepo is an owner/repo: what repoMatches finds by hand, held to
	// it by the tests.
	reRepo = regexp.MustCompile(`(?:^|[\s"'(])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:$|[\s"'),.;:?!])`)
	reKey  = regexp.MustCompile(`\b[A-Z][A-Z0-9]{1,9}-\d+\b`)
	reHash = regexp.MustCompile(`#(\d+)\b`)
	// reSQL is a SQL statement written into a request, from its keyword
	// to the end of the line: what only a tool that runs SQL can take.
	// Keywords in capitals are SQL enough; in lower case a statement needs
	// a mark that English lacks ("select count(", "delete from t where",
	// "update t set c ="), so that "delete from my inbox" stays a request.
	reSQL = regexp.MustCompile(`(?:\b(?:SELECT\s.+?\sFROM|INSERT\s+INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|(?:CREATE|ALTER|DROP|TRUNCATE)\s+(?:TABLE|INDEX|VIEW|SCHEMA))\b` +
		`|(?i:\bselect\s+(?:\*|count\s*\(|distinct\b|[\w.]+\s*,)[^\n]*?\bfrom\b)` +
		`|(?i:\binsert\s+into\s+[\w."]+\s*(?:\(|values\b))` +
		`|(?i:\bdelete\s+from\s+[\w."]+\s+where\b)` +
		`|(?i:\bupdate\s+[\w."]+\s+set\s+[\w."]+\s*=)` +
		`|(?i:\b(?:create|alter)\s+table\s+[\w."]+\s*\())[^\n]*`)
	// rePhone is a telephone number: international (a plus, then 7 to 15
	// digits, which single spaces, dots, dashes or parentheses may group)
	// or the North American national forms "(415) 555-0100" and
	// "415-555-0100". A date (2026-12-05) or a version has other groups.
	rePhone = regexp.MustCompile(`(?:\+\d(?:[\s.()-]{0,2}\d){6,14}|\(\d{3}\)\s?\d{3}[-.\s]\d{4}|\b\d{3}[-.]\d{3}[-.]\d{4})\b`)
	// reChannel is a chat channel written the way chat programs write
	// one: a hash at the start of a word, then a letter, then letters,
	// digits, dots, dashes or underscores ("#general", "#eng-alerts").
	// "#42" is a number (reHash); "C#" and "# heading" are neither.
	reChannel = regexp.MustCompile(`(?:^|[\s"'(])(#\pL[\pL\pN_.-]{0,79})`)
	// reRange is a range of a spreadsheet's cells in A1 notation, from
	// one cell to another, perhaps absolute ($A$1) and after its sheet's
	// name (Sheet1!A1:B10). A single cell ("A4", "S3", "B2B") is too
	// often a word of its own.
	reRange  = regexp.MustCompile(`(?:\b(?:[A-Za-z_]\w*!)?\$?|\B\$)[A-Z]{1,3}\$?[0-9]{1,7}:\$?[A-Z]{1,3}\$?[0-9]{1,7}\b`)
	reNumRef = regexp.MustCompile(`(?i)\b(?:issue|pr|pull request|ticket|order|invoice|number|no\.?|nr\.?|numer|número|n[º°])\s*#?(\d+)\b`)
)

// lookFor names the identifier kinds looked for only in a catalog with a
// tool that takes one: a SQL statement (the look costs a pass over the
// text) and a chat channel (elsewhere "#golang" is a hashtag, whose word
// is the request's).
type lookFor struct{ sql, channel bool }

// identifiers extracts the exact ids in text, at most one per value, of
// every kind but those look leaves out.
func identifiers(text string, look lookFor) []identifier {
	if len(text) > 4096 {
		text = text[:4096]
	}
	var out []identifier
	seen := map[string]bool{}
	add := func(k idKind, v string) {
		if v == "" || seen[v] {
			return
		}
		seen[v] = true
		out = append(out, identifier{k, v})
	}
	// Cheap byte tests skip the expressions that cannot match.
	has := func(chars string) bool { return strings.ContainsAny(text, chars) }
	rest := text
	if look.sql && mayHaveSQL(text) {
		var ms []string
		ms, rest = findCut(reSQL, rest, 8)
		for _, m := range ms {
			add(idSQL, strings.TrimSpace(m))
		}
	}
	if strings.Contains(rest, "://") {
		var us []string
		us, rest = findCut(reURL, rest, 8)
		for _, u := range us {
			add(idURL, strings.TrimRight(u, ".,;:)?!"))
		}
	}
	if has("@") {
		var ms []string
		ms, rest = cutLocs(emailLocs(rest), rest, 8)
		for _, m := range ms {
			add(idEmail, m)
		}
	}
	if mayHavePath(rest) {
		for _, m := range rePath.FindAllStringSubmatch(rest, 8) {
			add(idPath, m[1])
		}
	}
	if mayHaveFile(rest) {
		if mayHaveDomain(rest) {
			var ms []string
			ms, rest = findCut(reDomain, rest, 8)
			for _, m := range ms {
				add(idURL, strings.TrimRight(m, ".,;:)?!"))
			}
		}
		if mayHaveExt(rest) {
			for _, m := range reFile.FindAllString(rest, 8) {
				add(idPath, m)
			}
		}
	}
	if mayHaveRepo(rest) {
		for _, m := range repoMatches(rest, 8) {
			if !seen[m] && !strings.HasPrefix(m, "/") && !seen["/"+m] {
				add(idRepo, m)
			}
		}
	}
	if look.channel && mayHave(rest, '#', isChannelStart, isChannelLetter) {
		for _, m := range reChannel.FindAllStringSubmatch(rest, 8) {
			add(idChannel, strings.TrimRight(m[1], ".-"))
		}
	}
	if !has("0123456789") {
		return out
	}
	if mayHave(rest, ':', isDigit, isRangeStart) {
		var ms []string
		ms, rest = findCut(reRange, rest, 8)
		for _, m := range ms {
			add(idRange, m)
		}
	}
	if mayHavePhone(rest) {
		var ms []string
		ms, rest = findCut(rePhone, rest, 8)
		for _, m := range ms {
			add(idPhone, m)
		}
	}
	if mayHave(rest, '-', isKeyByte, isDigit) {
		for _, m := range reKey.FindAllString(rest, 8) {
			add(idKey, m)
		}
	}
	if mayHave(rest, '#', func(byte) bool { return true }, isDigit) {
		for _, m := range reHash.FindAllStringSubmatch(rest, 8) {
			add(idNumber, m[1])
		}
	}
	if mayHaveNumRef(rest) {
		for _, m := range reNumRef.FindAllStringSubmatch(rest, 8) {
			add(idNumber, m[1])
		}
	}
	return out
}

// findCut returns re's first n matches in text (FindAllString(text, n))
// and text with every match replaced by a space (ReplaceAllString(text,
// " ")), from one pass of the expression instead of two: both visit the
// same matches, and none of these expressions matches the empty string.
func findCut(re *regexp.Regexp, text string, n int) ([]string, string) {
	return cutLocs(re.FindAllStringIndex(text, -1), text, n)
}

// cutLocs is findCut for the matches locs (what FindAllStringIndex(text,
// -1) returns).
func cutLocs(locs [][]int, text string, n int) ([]string, string) {
	if len(locs) == 0 {
		return nil, text
	}
	ms := make([]string, 0, min(n, len(locs)))
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for i, l := range locs {
		if i < n {
			ms = append(ms, text[l[0]:l[1]])
		}
		b.WriteString(text[last:l[0]])
		b.WriteByte(' ')
		last = l[1]
	}
	b.WriteString(text[last:])
	return ms, b.String()
}

// The byte tests below are necessary conditions of the expressions they
// guard, so that a request without any id runs none of them: they never
// change what is found.

func isDigit(c byte) bool   { return '0' <= c && c <= '9' }
func isLower(c byte) bool   { return 'a' <= c && c <= 'z' }
func isKeyByte(c byte) bool { return 'A' <= c && c <= 'Z' || isDigit(c) }
func isWordByte(c byte) bool {
	return isLower(c) || 'A' <= c && c <= 'Z' || isDigit(c) || c == '_' || c == '-'
}

// mayHave reports whether text has the byte sep preceded by a byte that
// before accepts (or at the start, when before accepts 0) and followed by
// one that after accepts.
func mayHave(text string, sep byte, before, after func(byte) bool) bool {
	// IndexByte jumps from sep to sep (most requests have none) where a
	// loop read every byte.
	for i := 0; i+1 < len(text); i++ {
		j := strings.IndexByte(text[i:len(text)-1], sep)
		if j < 0 {
			return false
		}
		i += j
		if after(text[i+1]) && (i == 0 && before(0) || i > 0 && before(text[i-1])) {
			return true
		}
	}
	return false
}

// mayHaveFile guards reFile: a word byte, a dot, a lower-case letter.
func mayHaveFile(text string) bool { return mayHave(text, '.', isWordByte, isLower) }

// domainTLDs are reDomain's top-level domains.
var domainTLDs = []string{"com", "org", "net", "io", "dev", "ai", "app", "edu", "gov", "co", "uk", "de", "fr", "es", "pl", "eu"}

// mayHaveDomain guards reDomain: a letter or digit, a dot, one of its
// top-level domains, then no letter, digit or underscore.
func mayHaveDomain(text string) bool {
	for i := 1; i+2 < len(text); i++ {
		if text[i] != '.' || !isAlnum(text[i-1]) {
			continue
		}
		for _, tld := range domainTLDs {
			if end := i + 1 + len(tld); strings.HasPrefix(text[i+1:], tld) && (end == len(text) || !isAlnum(text[end]) && text[end] != '_') {
				return true
			}
		}
	}
	return false
}

// isRangeStart is what may follow the colon of reRange: a column's
// capital or the dollar of an absolute one.
func isRangeStart(c byte) bool { return 'A' <= c && c <= 'Z' || c == '$' }

func isAlnum(c byte) bool { return isLower(c) || 'A' <= c && c <= 'Z' || isDigit(c) }

// isWord is the expressions' \w: an ASCII letter, digit or underscore.
func isWord(c byte) bool { return isAlnum(c) || c == '_' }

// isSpace is the expressions' \s: tab, newline, form feed, carriage
// return, space.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// mayHavePath guards rePath: a slash that follows the start, a \s, a
// quote, a parenthesis, '~' or '.', and precedes a \w, '.', '-' or '/';
// or a letter, a colon and a backslash before a byte other than a \s or
// a quote.
func mayHavePath(text string) bool {
	for i := 0; i+1 < len(text); i++ {
		switch c := text[i]; {
		case c == '/':
			if n := text[i+1]; (isWord(n) || n == '.' || n == '-' || n == '/') &&
				(i == 0 || isSpace(text[i-1]) || strings.IndexByte("\"'(~.", text[i-1]) >= 0) {
				return true
			}
		case c == ':':
			if i > 0 && isLetter(text[i-1]) && text[i+1] == '\\' && i+2 < len(text) && !isSpace(text[i+2]) && text[i+2] != '"' && text[i+2] != '\'' {
				return true
			}
		}
	}
	return false
}

func isLetter(c byte) bool { return isLower(c) || 'A' <= c && c <= 'Z' }

// isChannelStart and isChannelLetter guard reChannel: its hash follows
// the start (0), a \s, a quote or a parenthesis, and precedes a letter
// (an ASCII one, or the first byte of any other: the expression decides).
func isChannelStart(c byte) bool  { return c == 0 || isSpace(c) || c == '"' || c == '\'' || c == '(' }
func isChannelLetter(c byte) bool { return isLetter(c) || c >= 0x80 }

// isRepoByte is a byte of reRepo's [\w.-].
func isRepoByte(c byte) bool { return isWord(c) || c == '.' || c == '-' }

// mayHaveRepo guards repoMatches (reRepo): a slash between two runs of [\w.-], the
// first starting with a letter or digit at the start or after a \s, a
// quote or a parenthesis, the second starting with a letter or digit and
// able to end (at its own end or at one of its dots) before the end or
// one of the expression's closing bytes.
func mayHaveRepo(text string) bool {
	for i := 1; i+1 < len(text); i++ {
		if text[i] != '/' || !isAlnum(text[i+1]) {
			continue
		}
		l := i
		for l > 0 && isRepoByte(text[l-1]) {
			l--
		}
		if l == i || !isAlnum(text[l]) || l > 0 && !isSpace(text[l-1]) && strings.IndexByte("\"'(", text[l-1]) < 0 {
			continue
		}
		j := i + 1
		for j < len(text) && isRepoByte(text[j]) {
			j++
		}
		if j == len(text) || isSpace(text[j]) || strings.IndexByte("\"'),.;:?!", text[j]) >= 0 || strings.IndexByte(text[i+2:j], '.') >= 0 {
			return true
		}
	}
	return false
}

// repoMatches returns the owner/repo of each of reRepo's first n
// matches in text (group 1 of FindAllStringSubmatch(text, n)), found by
// hand: the expression cost a request with a unit such as "m/s " a
// quarter of a million instructions. A match starts at the start of text
// or after a \s, a quote or a parenthesis, which it takes; the next
// match is looked for after the byte that ended this one, which it takes
// too.
func repoMatches(text string, n int) []string {
	var out []string
	for p := 0; p < len(text) && len(out) < n; p++ {
		s := p + 1 // the owner's first byte, after the opening byte
		if p == 0 && isAlnum(text[0]) {
			s = 0 // ^ is the expression's first choice
		} else if !isSpace(text[p]) && strings.IndexByte("\"'(", text[p]) < 0 {
			continue
		}
		if end, repo, ok := repoAt(text, s); ok {
			out = append(out, repo)
			p = end - 1
		}
	}
	return out
}

// repoAt matches reRepo's owner/repo at text[s:], and returns where the
// match ends (after its closing byte, if any) and owner/repo. The repo's
// run of [\w.-] is taken whole where the byte after it may close the
// match, else up to its last dot that is not its first byte: the
// expression's greedy choice.
func repoAt(text string, s int) (int, string, bool) {
	if s >= len(text) || !isAlnum(text[s]) {
		return 0, "", false
	}
	i := s + 1
	for i < len(text) && isRepoByte(text[i]) {
		i++
	}
	if i+1 >= len(text) || text[i] != '/' || !isAlnum(text[i+1]) {
		return 0, "", false
	}
	e := i + 2
	for e < len(text) && isRepoByte(text[e]) {
		e++
	}
	switch {
	case e == len(text):
		return e, text[s:e], true
	case isSpace(text[e]) || strings.IndexByte("\"'),.;:?!", text[e]) >= 0:
		return e + 1, text[s:e], true
	}
	if j := strings.LastIndexByte(text[i+2:e], '.'); j >= 0 {
		return i + 2 + j + 1, text[s : i+2+j], true
	}
	return 0, "", false
}

// emailLocs returns where reEmail matches in text
// (FindAllStringIndex(text, -1)), found by hand: the expression cost a
// request with an address some 14 µs, twenty times this. A match is a run
// of the local part's bytes that starts at a word boundary (\b) and
// ends at an @, then a domain (emailEnd); the next is looked for after
// it.
func emailLocs(text string) [][]int {
	var locs [][]int
	for p := 0; p < len(text); {
		at := strings.IndexByte(text[p:], '@')
		if at < 0 {
			break
		}
		at += p
		r := at
		for r > p && isEmailLocal(text[r-1]) {
			r--
		}
		next := at + 1
		if q, ok := emailEnd(text, at+1); ok {
			for s := r; s < at; s++ {
				if wordBoundary(text, s) { // the leftmost start
					locs = append(locs, []int{s, q})
					next = q
					break
				}
			}
		}
		p = next
	}
	return locs
}

// emailEnd returns where reEmail's domain, from d on, ends: labels of
// [A-Za-z0-9-] joined by single dots, two at least, taken as far as they
// go and then given back a byte at a time (never its dots) until a word
// boundary (\b) follows: the expression's greedy choice.
func emailEnd(text string, d int) (int, bool) {
	e := d
	for e < len(text) && isDomainByte(text[e]) {
		e++
	}
	if e == d {
		return 0, false
	}
	second := -1 // where the second label starts
	for e+1 < len(text) && text[e] == '.' && isDomainByte(text[e+1]) {
		if second < 0 {
			second = e + 1
		}
		e++
		for e < len(text) && isDomainByte(text[e]) {
			e++
		}
	}
	if second < 0 {
		return 0, false
	}
	for q := e; q > second; q-- {
		if text[q-1] != '.' && wordBoundary(text, q) {
			return q, true
		}
	}
	return 0, false
}

// isEmailLocal is a byte of reEmail's local part, [A-Za-z0-9._%+-];
// isDomainByte one of its domain's labels, [A-Za-z0-9-].
func isEmailLocal(c byte) bool { return isAlnum(c) || strings.IndexByte("._%+-", c) >= 0 }
func isDomainByte(c byte) bool { return isAlnum(c) || c == '-' }

// wordBoundary reports whether \b holds before text[i]: a byte of \w on
// one side and not on the other, the ends of text counting as not.
func wordBoundary(text string, i int) bool {
	return (i > 0 && isWord(text[i-1])) != (i < len(text) && isWord(text[i]))
}

// fileExts are reFile's extensions, each spelling: the expression is
// built from them, and mayHaveExt looks for them.
var fileExts = []string{"txt", "md", "json", "yaml", "yml", "toml", "csv", "tsv", "log", "go", "py", "js", "ts", "java", "rs", "c", "h", "cpp",
	"html", "css", "xml", "pdf", "png", "jpeg", "jpg", "gif", "svg", "mp3", "mp4", "wav", "zip", "gz", "tar", "sql", "sh", "ini", "conf", "cfg", "env"}

// mayHaveExt guards reFile: a \w or '-', a dot, one of its extensions,
// then the end or a byte other than a \w.
func mayHaveExt(text string) bool {
	for i := 1; i+1 < len(text); i++ {
		if text[i] != '.' || !isWord(text[i-1]) && text[i-1] != '-' || !isLower(text[i+1]) {
			continue
		}
		for _, ext := range fileExts {
			if end := i + 1 + len(ext); strings.HasPrefix(text[i+1:], ext) && (end == len(text) || !isWord(text[end])) {
				return true
			}
		}
	}
	return false
}

// mayHaveSQL guards reSQL: one of its statements' pairs of words, each
// word in any case at the start of a word ("select" and "from", "update"
// and "set", "create" and "table"). One pass marks the words seen.
func mayHaveSQL(text string) bool {
	var seen uint16
	for i := 0; i < len(text); i++ {
		if i > 0 && isAlnum(text[i-1]) {
			continue
		}
		c := lower(text[i])
		if c < 'a' || c > 'z' {
			continue
		}
		for _, k := range sqlByLetter[c-'a'] {
			w := sqlWords[k]
			if len(text)-i >= len(w) && lower(text[i+1]) == w[1] && containsFold(text[i+2:i+len(w)], w[2:]) {
				seen |= 1 << k
			}
		}
	}
	has := func(ws ...int) bool {
		for _, w := range ws {
			if seen&(1<<w) != 0 {
				return true
			}
		}
		return false
	}
	return has(sqlSelect) && has(sqlFrom) || has(sqlInsert) && has(sqlInto) || has(sqlUpdate) && has(sqlSet) ||
		has(sqlDelete) && has(sqlFrom) || has(sqlCreate, sqlAlter, sqlDrop, sqlTruncate) && has(sqlTable, sqlIndex, sqlView, sqlSchema)
}

// sqlWords are the words mayHaveSQL looks for, numbered by the constants
// below.
var sqlWords = [...]string{"select", "from", "insert", "into", "update", "set", "delete", "create", "alter",
	"drop", "truncate", "table", "index", "view", "schema"}

// sqlByLetter lists, by first letter, the numbers of the sqlWords that
// start with it.
var sqlByLetter = func() (by [26][]uint8) {
	for k, w := range sqlWords {
		by[w[0]-'a'] = append(by[w[0]-'a'], uint8(k))
	}
	return by
}()

const (
	sqlSelect = iota
	sqlFrom
	sqlInsert
	sqlInto
	sqlUpdate
	sqlSet
	sqlDelete
	sqlCreate
	sqlAlter
	sqlDrop
	sqlTruncate
	sqlTable
	sqlIndex
	sqlView
	sqlSchema
)

// mayHavePhone guards rePhone: a plus before a digit, a dash or a dot
// between three digits and three more (415-555-0100; not a date's
// 2026-12-05), or a parenthesis closing three digits, before a digit or
// a \s ((415) 555-0100).
func mayHavePhone(text string) bool {
	for i := 0; i+1 < len(text); i++ {
		switch c, next := text[i], text[i+1]; c {
		case '+':
			if isDigit(next) {
				return true
			}
		case '-', '.':
			if i >= 3 && i+3 < len(text) && isDigits(text[i-3:i]) && isDigits(text[i+1:i+4]) {
				return true
			}
		case ')':
			if i >= 4 && text[i-4] == '(' && isDigits(text[i-3:i]) && (isDigit(next) || isSpace(next)) {
				return true
			}
		}
	}
	return false
}

// mayHaveNumRef guards reNumRef: a digit that follows, past an optional
// '#' and spaces, one of the expression's keywords (ASCII, any case). Near
// a byte above ASCII it says yes, since (?i) also folds non-ASCII letters
// into the keywords (ſ for s, the Kelvin sign for k) and número, nº and
// n° are not ASCII.
func mayHaveNumRef(text string) bool {
	for j := 0; j < len(text); j++ {
		// Only a run's first digit can follow a keyword; a later one's
		// bytes before it are digits and what the first one's were.
		if !isDigit(text[j]) || j > 0 && isDigit(text[j-1]) {
			continue
		}
		k := j - 1
		if k >= 0 && text[k] == '#' {
			k--
		}
		for k >= 0 && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' || text[k] == '\r' || text[k] == '\f') {
			k--
		}
		if k < 0 {
			continue
		}
		before := text[:k+1]
		for i := max(0, len(before)-numRefLongest); i < len(before); i++ {
			if before[i] >= 0x80 {
				return true
			}
		}
		for _, w := range numRefWords {
			if len(before) >= len(w) && strings.EqualFold(before[len(before)-len(w):], w) {
				return true
			}
		}
	}
	return false
}

// numRefWords are reNumRef's ASCII keywords; numRefLongest bounds the bytes
// a keyword spelled with non-ASCII folds can take (pull request with ſ).
var numRefWords = []string{"issue", "pr", "pull request", "ticket", "order", "invoice", "number", "no", "no.", "nr", "nr.", "numer"}

const numRefLongest = 16

// acceptor says that a tool has a parameter able to take an identifier of
// some kind: by its JSON Schema pattern (strongest), its format, or its name.
type acceptor struct {
	kind    idKind // by format or name; numKinds when only a pattern is known
	strong  bool   // format said so (vs. a name hint)
	pattern string // JSON Schema pattern, "" when none
}

// acceptorRef is an acceptor placed in the index.
type acceptorRef struct {
	doc    uint32
	strong bool
}

type compiledPattern struct {
	re   *regexp2.Regexp
	docs []uint32
}

// param is one property of an input schema, flattened.
type param struct {
	name string
	text string // description, title and enum values
}

// schemaParams flattens an input schema's properties (two levels deep, into
// objects and array items) and finds what identifiers each can take.
func schemaParams(raw json.RawMessage) ([]param, []acceptor, error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, nil, err
	}
	params, accepts := walkParams(root)
	return params, accepts, nil
}

// walkParams is schemaParams of a decoded schema, which it only reads.
func walkParams(root map[string]any) ([]param, []acceptor) {
	var params []param
	var accepts []acceptor
	var walk func(s map[string]any, depth int)
	walk = func(s map[string]any, depth int) {
		if depth > 2 {
			return
		}
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ps, _ := props[n].(map[string]any)
			p := param{name: n}
			var text []string
			if v, ok := ps["description"].(string); ok {
				text = append(text, v)
			}
			if v, ok := ps["title"].(string); ok {
				text = append(text, v)
			}
			if en, ok := ps["enum"].([]any); ok {
				for _, e := range en {
					if s, ok := e.(string); ok && len(en) <= 32 {
						text = append(text, s)
					}
				}
			}
			p.text = strings.Join(text, " ")
			params = append(params, p)
			accepts = append(accepts, paramAcceptors(n, ps)...)
			if items, ok := ps["items"].(map[string]any); ok {
				accepts = append(accepts, paramAcceptors(n, items)...)
				walk(items, depth+1)
			}
			walk(ps, depth+1)
		}
	}
	walk(root, 0)
	return params, accepts
}

var nameKinds = []struct {
	kind  idKind
	words []string
}{
	{idURL, []string{"url", "uri", "link", "href", "website", "endpoint"}},
	{idEmail, []string{"email", "mail", "recipient", "sender"}},
	{idPath, []string{"path", "paths", "file", "filename", "filepath", "dir", "directory", "folder", "source", "destination"}},
	{idRepo, []string{"repo", "repository", "owner", "project"}},
	{idKey, []string{"account", "invoice", "ticket", "key", "order", "sku", "reference", "ref", "code"}},
	{idNumber, []string{"number", "issue", "pull", "index", "id", "num", "no"}},
	{idSQL, []string{"sql", "statement", "statements"}}, // not "query": a search's too
	{idPhone, []string{"phone", "telephone", "tel", "mobile", "msisdn", "sms", "caller", "callee"}},
	{idChannel, []string{"channel", "channels"}},
	{idRange, []string{"range", "ranges"}},
}

// phoneDescWords bounds how far into a parameter's description "phone
// number" may stand for the parameter to take one ("The phone number to
// call", "Only show calls made to this phone number"), and not only to be
// about one ("A descriptive string that you created to describe this
// phone number").
const phoneDescWords = 8

// describesPhone reports whether a parameter's description says it takes
// a telephone number: E.164 anywhere, or "phone number" (not "phone
// numbers": a count or a filter of them) among its first phoneDescWords
// words.
func describesPhone(desc string) bool {
	if desc == "" {
		return false
	}
	if strings.Contains(desc, "E.164") || strings.Contains(desc, "E164") {
		return true
	}
	words := 0
	for i := 0; i < len(desc) && words < phoneDescWords; i++ {
		if desc[i] == ' ' {
			words++
			continue
		}
		const pn = "phone number"
		if end := i + len(pn); (i == 0 || desc[i-1] == ' ') && end <= len(desc) && strings.EqualFold(desc[i:end], pn) &&
			(end == len(desc) || !isLetter(desc[end])) {
			return true
		}
	}
	return false
}

func paramAcceptors(name string, s map[string]any) []acceptor {
	var out []acceptor
	if p, ok := s["pattern"].(string); ok && p != "" {
		out = append(out, acceptor{kind: numKinds, pattern: p})
	}
	switch f, _ := s["format"].(string); f {
	case "uri", "url", "iri", "uri-reference", "iri-reference":
		out = append(out, acceptor{kind: idURL, strong: true})
	case "email", "idn-email":
		out = append(out, acceptor{kind: idEmail, strong: true})
	}
	if d, _ := s["description"].(string); describesPhone(d) {
		out = append(out, acceptor{kind: idPhone})
	}
	words := splitName(name)
	for _, nk := range nameKinds {
		for _, w := range words {
			if contains(nk.words, w) {
				out = append(out, acceptor{kind: nk.kind})
				break
			}
		}
	}
	return out
}

// splitName splits a parameter name into lower-case words.
func splitName(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
			prevLower = false
		case r >= 'A' && r <= 'Z':
			if prevLower {
				flush()
			}
			cur = append(cur, r)
			prevLower = false
		default:
			cur = append(cur, r)
			prevLower = true
		}
	}
	flush()
	return words
}

func contains(list []string, w string) bool {
	for _, l := range list {
		if l == w {
			return true
		}
	}
	return false
}

// buildAcceptors lays the tools' acceptors out by kind, and compiles each
// distinct pattern once (ECMAScript semantics, as JSON Schema specifies).
// A pattern that does not compile is ignored here; catalog validation
// reports it.
func (x *Index) buildAcceptors() {
	byPattern := map[string]*compiledPattern{}
	var order []string
	for i, dc := range x.docs {
		seen := [numKinds]int8{}
		for _, a := range dc.accepts {
			if a.pattern != "" {
				cp := byPattern[a.pattern]
				if cp == nil {
					re, err := regexp2.Compile(a.pattern, regexp2.ECMAScript)
					if err != nil {
						continue
					}
					re.MatchTimeout = 10 * time.Millisecond
					cp = &compiledPattern{re: re}
					byPattern[a.pattern] = cp
					order = append(order, a.pattern)
				}
				if n := len(cp.docs); n == 0 || cp.docs[n-1] != uint32(i) {
					cp.docs = append(cp.docs, uint32(i))
				}
				continue
			}
			lvl := int8(1)
			if a.strong {
				lvl = 2
			}
			if lvl > seen[a.kind] {
				seen[a.kind] = lvl
			}
		}
		for k, lvl := range seen {
			if lvl > 0 {
				x.kinds[k] = append(x.kinds[k], acceptorRef{doc: uint32(i), strong: lvl == 2})
			}
		}
	}
	for _, p := range order {
		x.patterns = append(x.patterns, byPattern[p])
	}
}
