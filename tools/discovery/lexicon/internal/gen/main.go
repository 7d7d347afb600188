// Command gen derives the lexicon's WordNet data files from a WordNet 3.0
// database (Debian: apt-get install wordnet-base; files under
// /usr/share/wordnet). It is run by hand, not at build time:
//
//	go run ./tools/discovery/lexicon/internal/gen -wordnet /usr/share/wordnet -out tools/discovery/lexicon/data
//
// It writes two embedded files, each headed by the Debian package version
// it was read from (dpkg-query, or -version):
//
//   - wordnet_en.txt: synonym sets ("synset: lemma, lemma, ...") restricted
//     to common words and their common senses. A lemma is common when it is
//     a single lower-case word whose senses are attested at least once in
//     the SemCor sense-tagged corpus (the index files' tagsense_cnt ≥ 1: a
//     general-English frequency signal that ships with WordNet itself,
//     independent of any benchmark). A lemma belongs to a synset in the
//     output only when that synset is one of its MaxSenses most frequent
//     senses (WordNet orders a lemma's senses by SemCor frequency), and
//     only among its attested senses. Synsets with fewer than two such
//     lemmas are dropped.
//   - irregular_en.txt: irregular noun and verb forms ("sent: send") from
//     noun.exc and verb.exc whose lemma is common, leaving out forms with
//     more than one lemma and forms that are common words themselves
//     ("data", "left", "found"), whose mapping would be a guess.
//
// With -optional DIR it also writes files that are not embedded; a user
// points discovery at them (toolgate --lexicon es=DIR/es_en_mythes.txt):
//
//   - derived_en.txt (kind derived): WordNet's derivationally related forms
//     from a noun to a verb ("deletion: delete"; "upload: upload" is
//     skipped as the same word), restricted to nouns made of the verb and a
//     nominal suffix (-ion, -ment, -al, -er, ...; the verb's last two
//     letters may change), so that the link is morphological, not a loose
//     association ("directory" is not kept as a noun of "direct"). Its
//     license (WordNet's) would allow embedding it, but it did not raise
//     recall on the labeled sets (docs/benchmarks.md, Sourced lexicon).
//   - es_en_mythes.txt, pl_en_mythes.txt (-mythes-es, -mythes-pl: the
//     LibreOffice thesauri, Debian mythes-es and mythes-pl, LGPL-2.1): a
//     synonym of a word the embedded Spanish or Polish list translates
//     gets that word's English ("suprimir: delete, erase, remove").
//   - es_en_freedict.txt, pl_en_freedict.txt (-freedict DIR: Debian
//     dict-freedict-spa-eng, GPL-2+, and dict-freedict-pol-eng,
//     CC-BY-SA-3.0): every single-word headword with its single- and
//     two-word English translations.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	wordnetDir  = flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 database directory")
	outDir      = flag.String("out", "tools/discovery/lexicon/data", "output directory")
	maxSenses   = flag.Int("senses", 2, "keep a lemma in at most this many of its most frequent synsets")
	version     = flag.String("version", "", "the WordNet package version to record (default: dpkg-query -W wordnet-base)")
	optDir      = flag.String("optional", "", "directory for the optional (not embedded) es/pl files; empty writes none")
	mythesEs    = flag.String("mythes-es", "/usr/share/mythes/th_es_ES_v2.dat", "Spanish MyThes thesaurus (with -optional)")
	mythesPl    = flag.String("mythes-pl", "/usr/share/mythes/th_pl_PL_v2.dat", "Polish MyThes thesaurus (with -optional)")
	freedict    = flag.String("freedict", "/usr/share/dictd", "directory of freedict-spa-eng and freedict-pol-eng .index/.dict.dz (with -optional)")
	hunspellDir = flag.String("hunspell", "", "with a directory of Hunspell dictionaries (Debian hunspell-pl, hunspell-es: /usr/share/hunspell), write only forms_pl.txt and forms_es.txt")
)

var plainWord = regexp.MustCompile(`^[a-z]{2,}$`)

type sense struct {
	pos    byte
	offset string
}

func main() {
	flag.Parse()
	if *hunspellDir != "" {
		if err := writeAllForms(*hunspellDir, *outDir); err != nil {
			log.Fatal(err)
		}
		return
	}
	members := map[sense][]string{} // synset → common lemmas for which it is a top sense
	common := map[string]bool{}
	commonNounVerb := map[string]bool{}
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		if err := readIndex(filepath.Join(*wordnetDir, "index."+pos), members, common); err != nil {
			log.Fatal(err)
		}
		if pos == "verb" {
			for w := range common {
				commonNounVerb[w] = true // after noun and verb, common holds exactly those
			}
		}
	}
	var keys []sense
	for s, lemmas := range members {
		if len(lemmas) >= 2 {
			keys = append(keys, s)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].pos != keys[j].pos {
			return keys[i].pos < keys[j].pos
		}
		return keys[i].offset < keys[j].offset
	})
	wnVersion := *version
	if wnVersion == "" {
		wnVersion = packageVersion("wordnet-base")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Source: Debian wordnet-base %s.\n", wnVersion)
	b.WriteString("# Generated by tools/discovery/lexicon/internal/gen from WordNet 3.0 (see README.md and\n")
	b.WriteString("# LICENSE-WordNet.txt). Do not edit: rerun the generator.\n")
	fmt.Fprintf(&b, "# Common lemmas (SemCor-attested), each in at most its %d most frequent senses.\n", *maxSenses)
	b.WriteString("# Format: synset offset and part of speech: lemma, lemma, ...\n")
	for _, k := range keys {
		lemmas := members[k]
		sort.Strings(lemmas)
		fmt.Fprintf(&b, "%s%c: %s\n", k.offset, k.pos, strings.Join(lemmas, ", "))
	}
	write(*outDir, "wordnet_en.txt", b.String())

	b.Reset()
	fmt.Fprintf(&b, "# Source: Debian wordnet-base %s.\n", wnVersion)
	b.WriteString("# Generated by tools/discovery/lexicon/internal/gen from WordNet 3.0 noun.exc and verb.exc\n")
	b.WriteString("# (see README.md and LICENSE-WordNet.txt). Irregular form: lemma. Do not edit.\n")
	seen := map[string]bool{}
	var lines []string
	for _, pos := range []string{"verb", "noun"} {
		f, err := os.Open(filepath.Join(*wordnetDir, pos+".exc"))
		if err != nil {
			log.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 2 || !plainWord.MatchString(fields[0]) || !common[fields[1]] || seen[fields[0]] {
				continue
			}
			if len(fields) > 2 { // ambiguous (more than one lemma): skip
				continue
			}
			if commonNounVerb[fields[0]] { // the form is a common noun or verb itself ("data", "left", "found"): ambiguous
				continue
			}
			seen[fields[0]] = true
			lines = append(lines, fields[0]+": "+fields[1])
		}
		f.Close()
	}
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, "\n"))
	b.WriteString("\n")
	write(*outDir, "irregular_en.txt", b.String())

	if *optDir == "" {
		return
	}
	derived, err := derivations(*wordnetDir)
	if err != nil {
		log.Fatal(err)
	}
	b.Reset()
	fmt.Fprintf(&b, "# Source: Debian wordnet-base %s.\n", wnVersion)
	b.WriteString("# Generated by tools/discovery/lexicon/internal/gen from WordNet 3.0 data.noun derivationally\n")
	b.WriteString("# related forms (WordNet 3.0 license: tools/discovery/lexicon/data/LICENSE-WordNet.txt).\n")
	b.WriteString("# Noun: verbs. Do not edit.\n")
	b.WriteString(derived)
	if err := os.MkdirAll(*optDir, 0o755); err != nil {
		log.Fatal(err)
	}
	write(*optDir, "derived_en.txt", b.String())
	if err := writeOptional(*optDir); err != nil {
		log.Fatal(err)
	}
}

// packageVersion asks dpkg for an installed package's version.
func packageVersion(pkg string) string {
	out, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil || len(out) == 0 {
		log.Fatalf("version of %s unknown (dpkg-query: %v): pass -version", pkg, err)
	}
	return string(out)
}

// derivations reads data.noun's "+" pointers to verb synsets (wndb(5):
// offset lex_filenum ss_type w_cnt word lex_id ... p_cnt ptr... | gloss,
// each ptr "symbol offset pos source/target" with source/target as two
// hex word numbers) and returns the kept pairs as lexicon lines, sorted.
func derivations(dir string) (string, error) {
	verbs, err := readSynsetWords(filepath.Join(dir, "data.verb"), nil)
	if err != nil {
		return "", err
	}
	pairs := map[string]map[string]bool{}
	_, err = readSynsetWords(filepath.Join(dir, "data.noun"), func(words []string, ptrs [][4]string) {
		for _, p := range ptrs {
			if p[0] != "+" || p[2] != "v" {
				continue
			}
			src, err1 := strconv.ParseUint(p[3][:2], 16, 8)
			dst, err2 := strconv.ParseUint(p[3][2:], 16, 8)
			vw := verbs[p[1]]
			if err1 != nil || err2 != nil || src == 0 || dst == 0 || int(src) > len(words) || int(dst) > len(vw) {
				continue
			}
			noun, verb := words[src-1], vw[dst-1]
			if noun == verb || !plainWord.MatchString(noun) || !plainWord.MatchString(verb) || !morphological(noun, verb) {
				continue
			}
			if pairs[noun] == nil {
				pairs[noun] = map[string]bool{}
			}
			pairs[noun][verb] = true
		}
	})
	if err != nil {
		return "", err
	}
	var lines []string
	for noun, vs := range pairs {
		var list []string
		for v := range vs {
			list = append(list, v)
		}
		sort.Strings(list)
		lines = append(lines, noun+": "+strings.Join(list, ", "))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

// nominal lists the English suffixes that make a noun of a verb.
var nominal = []string{"ation", "ition", "tion", "sion", "ion", "ment", "ance", "ence", "ery", "ure", "age", "ing", "al", "er", "or", "ee", "ist", "ant", "ent", "y"}

// morphological reports whether noun is verb with a nominal suffix, the
// verb's last two letters allowed to change ("deletion" of "delete",
// "notification" of "notify", "payment" of "pay"); "directory" is not a
// noun of "direct", nor "sale" of "sell".
func morphological(noun, verb string) bool {
	for _, suf := range nominal {
		root, ok := strings.CutSuffix(noun, suf)
		if !ok || len(root) < 2 || len(root) > len(verb)+1 {
			continue
		}
		n := 0
		for n < len(root) && n < len(verb) && root[n] == verb[n] {
			n++
		}
		if n >= 3 && n >= len(verb)-2 {
			return true
		}
	}
	return false
}

// readSynsetWords reads a data.POS file into offset → words (lower case,
// '_' as space), calling each (if non-nil) with every synset's words and
// pointers.
func readSynsetWords(path string, each func(words []string, ptrs [][4]string)) (map[string][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue
		}
		body, _, _ := strings.Cut(line, " | ")
		fields := strings.Fields(body)
		if len(fields) < 4 {
			return nil, fmt.Errorf("%s: malformed line %q", path, line)
		}
		wcnt, err := strconv.ParseUint(fields[3], 16, 8)
		if err != nil || len(fields) < 5+2*int(wcnt) {
			return nil, fmt.Errorf("%s: malformed w_cnt in %q", path, line)
		}
		words := make([]string, wcnt)
		for i := range words {
			words[i] = strings.ToLower(strings.ReplaceAll(fields[4+2*i], "_", " "))
		}
		out[fields[0]] = words
		rest := fields[4+2*wcnt:]
		pcnt, err := strconv.Atoi(rest[0])
		if err != nil || len(rest) < 1+4*pcnt {
			return nil, fmt.Errorf("%s: malformed p_cnt in %q", path, line)
		}
		if each != nil {
			ptrs := make([][4]string, pcnt)
			for i := range ptrs {
				copy(ptrs[i][:], rest[1+4*i:5+4*i])
			}
			each(words, ptrs)
		}
	}
	return out, sc.Err()
}

// readIndex reads one index.POS file. Line format (wndb(5)):
// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
func readIndex(path string, members map[sense][]string, common map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue // license header
		}
		fields := strings.Fields(line)
		if len(fields) < 6 {
			continue
		}
		lemma, pos := fields[0], fields[1][0]
		if pos == 's' {
			pos = 'a'
		}
		synsetCnt, err1 := strconv.Atoi(fields[2])
		pCnt, err2 := strconv.Atoi(fields[3])
		if err1 != nil || err2 != nil || len(fields) < 6+pCnt+synsetCnt {
			return fmt.Errorf("%s: malformed line %q", path, line)
		}
		tagged, err := strconv.Atoi(fields[5+pCnt])
		if err != nil {
			return fmt.Errorf("%s: malformed tagsense_cnt in %q", path, line)
		}
		offsets := fields[6+pCnt:]
		if !plainWord.MatchString(lemma) || tagged < 1 {
			continue
		}
		common[lemma] = true
		n := min(tagged, *maxSenses, len(offsets))
		for _, off := range offsets[:n] {
			s := sense{pos: pos, offset: off}
			members[s] = append(members[s], lemma)
		}
	}
	return sc.Err()
}

func write(dir, name, content string) {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s (%d bytes)", path, len(content))
}
