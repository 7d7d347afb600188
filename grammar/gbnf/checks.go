package gbnf

// llama.cpp's left-recursion check and this package's empty-loop check, both
// run on the lowered rules.

// gbnfLlamaLeftRecursion is llama_grammar_detect_left_recursion run over every
// rule as llama_grammar_init_impl does. A rule "may be empty" only when it
// has a syntactically empty alternative, exactly as in llama.cpp; deeper
// nullable cycles are left to gbnfNullableCycle.
func gbnfLlamaLeftRecursion(rules [][]gbnfInst) (int, bool) {
	n := len(rules)
	visited := make([]bool, n)
	inProgress := make([]bool, n)
	mayBeEmpty := make([]bool, n)
	found := -1 // the rule whose left corner leads back to it
	var detect func(i int) bool
	detect = func(i int) bool {
		if inProgress[i] {
			found = i
			return true
		}
		if visited[i] {
			// llama.cpp explores it again; nothing reachable from a
			// finished rule can close a cycle, so the answer is the same
			// and the time is not exponential
			return false
		}
		inProgress[i] = true
		rule := rules[i]
		atStart := true
		for _, in := range rule {
			if in.endOfSeq() {
				if atStart {
					mayBeEmpty[i] = true
					break
				}
				atStart = true
			} else {
				atStart = false
			}
		}
		recurse := true
		for _, in := range rule {
			switch {
			case in.op == gbnfRef && recurse:
				if detect(int(in.arg)) {
					return true
				}
				if !mayBeEmpty[in.arg] {
					recurse = false
				}
			case in.endOfSeq():
				recurse = true
			default:
				recurse = false
			}
		}
		inProgress[i] = false
		visited[i] = true
		return false
	}
	for i := 0; i < n; i++ {
		if !visited[i] && detect(i) {
			return found, true
		}
	}
	return 0, false
}

// gbnfNullableCycle finds a rule that can reach itself through left corners
// that match the empty string (with nullability computed properly, to a
// fixed point). llama_grammar_advance_stack recurses forever on such a rule.
func gbnfNullableCycle(rules [][]gbnfInst) (int, bool) {
	n := len(rules)
	nullable := make([]bool, n)
	for changed := true; changed; {
		changed = false
		for i, rule := range rules {
			if nullable[i] {
				continue
			}
			ok := true
			for _, in := range rule {
				if in.endOfSeq() {
					if ok {
						nullable[i] = true
						changed = true
						break
					}
					ok = true
				} else if in.op != gbnfRef || !nullable[in.arg] {
					ok = false
				}
			}
		}
	}
	// Edges: rule -> rule referenced at a position preceded only by
	// nullable references in its alternative (a left corner).
	edgeStart := make([]int, n+1)
	var targets []int32
	for i, rule := range rules {
		edgeStart[i] = len(targets)
		prefixNullable := true
		for _, in := range rule {
			switch {
			case in.endOfSeq():
				prefixNullable = true
			case in.op == gbnfRef:
				if prefixNullable {
					targets = append(targets, in.arg)
				}
				prefixNullable = prefixNullable && nullable[in.arg]
			default:
				prefixNullable = false
			}
		}
	}
	edgeStart[n] = len(targets)
	edges := func(i int) []int32 { return targets[edgeStart[i]:edgeStart[i+1]] }
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, n)
	type frame struct{ rule, edge int }
	for start := 0; start < n; start++ {
		if color[start] != white {
			continue
		}
		stack := []frame{{start, 0}}
		color[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.edge == len(edges(top.rule)) {
				color[top.rule] = black
				stack = stack[:len(stack)-1]
				continue
			}
			next := edges(top.rule)[top.edge]
			top.edge++
			switch color[next] {
			case grey:
				return int(next), true
			case white:
				color[next] = grey
				stack = append(stack, frame{int(next), 0})
			}
		}
	}
	return 0, false
}
