package discovery

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/tools"
)

// SetTuning changes a ranking constant for the weight sweep in
// datasets_test.go and returns a function restoring it. Names: w.<field>,
// b.<field> (name, namespace, summary, description, aliases, tags, params),
// and the keys of its tables of counts and of weights (k1, bonus, ...).
func SetTuning(name string, v float64) (restore func()) {
	fields := map[string]field{"name": fieldName, "namespace": fieldNamespace, "summary": fieldSummary,
		"description": fieldDescription, "aliases": fieldAliases, "tags": fieldTags, "params": fieldParams}
	counts := map[string]*int{"companion.max": &companionMax, "companion.triggers": &companionTriggers,
		"widen.tool": &widenTool, "widen.passing.terms": &passingMaxTerms, "widen.wordnet": &widenWordNet, "phrase.tool": &phraseTool}
	if ip, ok := counts[name]; ok {
		old := *ip
		*ip = int(v)
		return func() { *ip = old }
	}
	p := map[string]*float64{"k1": &bm25K1, "bonus": &bonusScale, "sense.verb": &senseVerbWeight,
		"phrase.weight": &phraseWeight, "widen.weight": &widenWeight, "widen.passing": &passingWeight,
		"companion.trigger": &companionTriggerRatio, "companion.clear": &companionClearRatio}[name]
	weight, fname, _ := strings.Cut(name, ".")
	if f, ok := fields[fname]; ok && p == nil {
		switch weight {
		case "w":
			p = &fieldWeights[f].w
		case "b":
			p = &fieldWeights[f].b
		}
	}
	if p == nil {
		panic("unknown tuning " + name)
	}
	old := *p
	*p = v
	return func() { *p = old }
}

// BuildCompanions derives snap's companions as an Index build does and
// returns how many tools need a handle someone produces.
func BuildCompanions(snap *tools.Snapshot) int {
	c := buildCompanions(snap)
	if c == nil {
		return 0
	}
	return len(c.needs)
}

// BackgroundTSV writes the background file (background.go) of x's
// catalog: its field terms in at least min tools, sorted, after head (the
// "#" comment lines) and the tools line.
func BackgroundTSV(x *Index, head string, min int) string {
	var sb strings.Builder
	sb.WriteString(head)
	fmt.Fprintf(&sb, "tools\t%d\n", len(x.docs))
	var lines []string
	for t, id := range x.terms {
		if int(id) < len(x.postings) && len(x.postings[id]) >= min {
			lines = append(lines, fmt.Sprintf("%s\t%d\n", t, len(x.postings[id])))
		}
	}
	slices.Sort(lines)
	sb.WriteString(strings.Join(lines, ""))
	return sb.String()
}

// CompanionClearRatio is companionClearRatio, for the companion tests.
var CompanionClearRatio = companionClearRatio
