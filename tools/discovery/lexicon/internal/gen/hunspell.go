package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/encoding/charmap"

	"github.com/toolgate/toolgate/tools/discovery/analysis"
)

// Hunspell affix expansion, enough of the format
// (https://man.archlinux.org/man/hunspell.5) to list the inflected forms of
// a dictionary word: SET (UTF-8 or ISO8859-2), FLAG (single characters, the
// default, or UTF-8), SFX and PFX classes with their strip, add and
// condition fields, cross products of one prefix and one suffix, and one
// level of continuation classes on a suffix ("buscar" → "busca" →
// "búscame"). Compounding, AF aliases and long or numeric flags are not
// read; an affix file that needs them is refused with its line.

// affix is one SFX or PFX rule.
type affix struct {
	strip, add string
	cont       []rune // continuation flags of the added affix
	cond       []condPart
}

// condPart is one position of a condition: a set of letters, or its
// complement; a nil set with neg matches any letter (".").
type condPart struct {
	set map[rune]bool
	neg bool
}

type affixClass struct {
	suffix bool
	cross  bool
	rules  []affix
}

// hunspell is a parsed affix file with the dictionary's words and flags.
type hunspell struct {
	classes map[rune]*affixClass
	words   map[string][]rune // word → union of its flags
}

// readHunspell parses an .aff and its .dic (in the affix file's SET
// encoding).
func readHunspell(affPath, dicPath string) (*hunspell, error) {
	h := &hunspell{classes: map[rune]*affixClass{}, words: map[string][]rune{}}
	raw, err := os.ReadFile(affPath)
	if err != nil {
		return nil, err
	}
	enc := encodingOf(raw)
	aff, err := decode(raw, enc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", affPath, err)
	}
	if err := h.parseAff(affPath, aff); err != nil {
		return nil, err
	}
	rawDic, err := os.ReadFile(dicPath)
	if err != nil {
		return nil, err
	}
	dic, err := decode(rawDic, enc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dicPath, err)
	}
	h.parseDic(dic)
	return h, nil
}

func encodingOf(aff []byte) string {
	for _, line := range bytes.Split(aff, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) == 2 && f[0] == "SET" {
			return f[1]
		}
	}
	return "ISO8859-1"
}

func decode(b []byte, enc string) (string, error) {
	switch strings.ToUpper(enc) {
	case "UTF-8":
		return string(b), nil
	case "ISO8859-2":
		out, err := charmap.ISO8859_2.NewDecoder().Bytes(b)
		return string(out), err
	case "ISO8859-1":
		out, err := charmap.ISO8859_1.NewDecoder().Bytes(b)
		return string(out), err
	}
	return "", fmt.Errorf("unsupported SET %q", enc)
}

func (h *hunspell) parseAff(path, text string) error {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch f[0] {
		case "FLAG":
			if len(f) < 2 || f[1] != "UTF-8" {
				return fmt.Errorf("%s:%d: FLAG %v is not supported (single-character or UTF-8 flags only)", path, n, f[1:])
			}
		case "AF":
			return fmt.Errorf("%s:%d: AF flag aliases are not supported", path, n)
		case "SFX", "PFX":
			if len(f) < 4 {
				return fmt.Errorf("%s:%d: short %s line", path, n, f[0])
			}
			flag := []rune(f[1])
			if len(flag) != 1 {
				return fmt.Errorf("%s:%d: flag %q is not one character", path, n, f[1])
			}
			c := h.classes[flag[0]]
			if c == nil {
				// Header: SFX flag cross_product count.
				if _, err := strconv.Atoi(f[3]); err != nil {
					return fmt.Errorf("%s:%d: %s header count %q: %v", path, n, f[0], f[3], err)
				}
				h.classes[flag[0]] = &affixClass{suffix: f[0] == "SFX", cross: f[2] == "Y"}
				continue
			}
			if len(f) < 5 {
				return fmt.Errorf("%s:%d: %s rule needs strip, add and condition", path, n, f[0])
			}
			r := affix{strip: zero(f[2])}
			add, cont, _ := strings.Cut(f[3], "/")
			r.add, r.cont = zero(add), []rune(cont)
			cond, err := parseCond(f[4])
			if err != nil {
				return fmt.Errorf("%s:%d: condition %q: %v", path, n, f[4], err)
			}
			r.cond = cond
			c.rules = append(c.rules, r)
		}
	}
	return sc.Err()
}

func zero(s string) string {
	if s == "0" {
		return ""
	}
	return s
}

// parseCond reads a condition: letters, "." and bracketed sets, [^...]
// for a complement.
func parseCond(s string) ([]condPart, error) {
	if s == "." {
		return nil, nil
	}
	var out []condPart
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '.':
			out = append(out, condPart{neg: true})
		case '[':
			j := i + 1
			p := condPart{set: map[rune]bool{}}
			if j < len(rs) && rs[j] == '^' {
				p.neg = true
				j++
			}
			for ; j < len(rs) && rs[j] != ']'; j++ {
				p.set[rs[j]] = true
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unclosed [")
			}
			out = append(out, p)
			i = j
		default:
			out = append(out, condPart{set: map[rune]bool{rs[i]: true}})
		}
	}
	return out, nil
}

// matches reports whether a condition holds at the end (suffix) or start
// (prefix) of word.
func matches(cond []condPart, word []rune, suffix bool) bool {
	if len(cond) > len(word) {
		return false
	}
	at := 0
	if suffix {
		at = len(word) - len(cond)
	}
	for i, p := range cond {
		if p.set[word[at+i]] == p.neg {
			return false
		}
	}
	return true
}

func (h *hunspell) parseDic(text string) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if _, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
				continue
			}
		}
		if i := strings.IndexAny(line, " \t"); i >= 0 {
			line = line[:i] // morphological fields
		}
		word, flags, _ := strings.Cut(line, "/")
		if word == "" {
			continue
		}
		h.words[word] = append(h.words[word], []rune(flags)...)
	}
}

// forms returns the inflected forms of word (itself excluded) its flags
// make: each suffix, one level of its continuation suffixes, each prefix,
// and a cross-product prefix on a cross-product suffix's forms.
func (h *hunspell) forms(word string) []string {
	seen := map[string]bool{word: true}
	var out []string
	note := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	flags := h.words[word]
	var crossed []string
	for _, fl := range flags {
		c := h.classes[fl]
		if c == nil || !c.suffix {
			continue
		}
		for _, r := range c.rules {
			w, ok := apply(word, r, true)
			if !ok {
				continue
			}
			note(w)
			if c.cross {
				crossed = append(crossed, w)
			}
			for _, cf := range r.cont {
				cc := h.classes[cf]
				if cc == nil || !cc.suffix {
					continue
				}
				for _, r2 := range cc.rules {
					if w2, ok := apply(w, r2, true); ok {
						note(w2)
					}
				}
			}
		}
	}
	for _, fl := range flags {
		c := h.classes[fl]
		if c == nil || c.suffix {
			continue
		}
		for _, r := range c.rules {
			if w, ok := apply(word, r, false); ok {
				note(w)
			}
			if c.cross {
				for _, base := range crossed {
					if w, ok := apply(base, r, false); ok {
						note(w)
					}
				}
			}
		}
	}
	return out
}

func apply(word string, r affix, suffix bool) (string, bool) {
	rs := []rune(word)
	if !matches(r.cond, rs, suffix) {
		return "", false
	}
	if suffix {
		if !strings.HasSuffix(word, r.strip) || len(r.strip) >= len(word) && r.strip != "" {
			return "", false
		}
		return word[:len(word)-len(r.strip)] + r.add, true
	}
	if !strings.HasPrefix(word, r.strip) {
		return "", false
	}
	return r.add + word[len(r.strip):], true
}

// maxFormGrowth bounds how much longer than its lemma a kept form may be:
// the long forms are the rare ones in requests (Polish conditional plurals,
// "pokazalibyscie"; Spanish double clitics, "mostrarosla") and would double
// the embedded data.
const maxFormGrowth = 3

// formsLines returns, for each single-word key of the es/pl → English list
// at listPath that the dictionary has, the line "lemma: form, form, ..."
// of its folded inflected forms that the lexicon could not already reach:
// forms that are not keys themselves, at most maxFormGrowth bytes longer
// than the lemma, and whose stem in lang differs from the lemma's (a form with the lemma's stem finds it through the stemmer).
// A form that several lemmas share is left out: which one is meant is a
// guess.
func formsLines(h *hunspell, listPath string, lang analysis.Lang) ([]string, error) {
	list, err := readLexicon(listPath)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range list {
		keys[k] = true
	}
	lemmaOf := map[string]string{}
	ambiguous := map[string]bool{}
	for k := range list {
		if strings.Contains(k, " ") {
			continue
		}
		for _, w := range dictWords(h, k) {
			stem := analysis.Stem(lang, k)
			for _, f := range h.forms(w) {
				f = analysis.Fold(f)
				if f == k || keys[f] || strings.ContainsAny(f, " ") || len(f) > len(k)+maxFormGrowth || analysis.Stem(lang, f) == stem {
					continue
				}
				if prev, ok := lemmaOf[f]; ok && prev != k {
					ambiguous[f] = true
				}
				lemmaOf[f] = k
			}
		}
	}
	byLemma := map[string][]string{}
	for f, k := range lemmaOf {
		if !ambiguous[f] {
			byLemma[k] = append(byLemma[k], f)
		}
	}
	for _, fs := range byLemma {
		sort.Strings(fs) // the map gave them in any order
	}
	return sortedLines(byLemma), nil
}

// dictWords returns the dictionary's spellings of a folded key: the key
// itself, or the words that fold to it ("usun" → "usuń").
func dictWords(h *hunspell, key string) []string {
	if _, ok := h.words[key]; ok {
		return []string{key}
	}
	return h.folded()[key]
}

var foldedIndex map[*hunspell]map[string][]string

func (h *hunspell) folded() map[string][]string {
	if foldedIndex == nil {
		foldedIndex = map[*hunspell]map[string][]string{}
	}
	if m, ok := foldedIndex[h]; ok {
		return m
	}
	m := map[string][]string{}
	words := make([]string, 0, len(h.words))
	for w := range h.words {
		words = append(words, w)
	}
	sort.Strings(words)
	for _, w := range words {
		f := analysis.Fold(w)
		m[f] = append(m[f], w)
	}
	foldedIndex[h] = m
	return m
}

// writeForms writes forms_LANG.txt for one language from a Hunspell
// dictionary (dictPrefix.aff, dictPrefix.dic) and the embedded list.
func writeForms(w io.Writer, dictPrefix, listPath string, lang analysis.Lang, header string) error {
	h, err := readHunspell(dictPrefix+".aff", dictPrefix+".dic")
	if err != nil {
		return err
	}
	lines, err := formsLines(h, listPath, lang)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// writeAllForms writes forms_pl.txt and forms_es.txt into dir from the
// Hunspell dictionaries under hunspellDir (Debian hunspell-pl, hunspell-es),
// for the keys of dir's pl_en.txt and es_en.txt.
func writeAllForms(hunspellDir, dir string) error {
	for _, l := range []struct {
		lang            analysis.Lang
		dict, pkg, list string
		license         string
	}{
		{analysis.Polish, "pl_PL", "hunspell-pl", "pl_en.txt", "used under Apache-2.0, one of its five licenses (GPL, LGPL, MPL, Apache-2.0, CC-SA-1.0)"},
		{analysis.Spanish, "es_ES", "hunspell-es", "es_en.txt", "MPL-1.1 or later, used under MPL-2.0 (also GPL-3+ or LGPL-3+)"},
	} {
		var b strings.Builder
		fmt.Fprintf(&b, "# Source: Debian %s %s (%s.dic/.aff, LibreOffice dictionaries).\n", l.pkg, packageVersion(l.pkg), l.dict)
		fmt.Fprintf(&b, "# License: %s; see README.md.\n", l.license)
		fmt.Fprintf(&b, "# Generated by tools/discovery/lexicon/internal/gen -hunspell: the inflected forms of the\n")
		fmt.Fprintf(&b, "# single-word keys of %s that the stemmer does not bring to the key. Lemma: forms. Do not edit.\n", l.list)
		if err := writeForms(&b, filepath.Join(hunspellDir, l.dict), filepath.Join(dir, l.list), l.lang, ""); err != nil {
			return err
		}
		write(dir, "forms_"+string(l.lang)+".txt", b.String())
	}
	return nil
}
