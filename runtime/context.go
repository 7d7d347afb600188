package runtime

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"

	"github.com/toolgate/toolgate/internal/tokens"
	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools"
)

// Fitting the context ([Options.FitContext]). A request is the system prompt
// with the tool definitions, the conversation, and room for the reply. The
// conversation is what grows: every step adds the model's reply and a tool
// result. When the estimate would pass ContextTokens, the request starts
// at a later turn: whole turns (a user's input and every step it took) are
// left out, oldest first, never part of one, so a tool result is never
// separated from the call it answers. What was left out stays out of later
// requests too (Session.from only grows), which keeps their prefix
// cacheable. The current turn is never cut: when it alone does not fit,
// the step fails with [ErrContextOverflow] before the model is called.

// perMessageTokens is what a chat template adds around one message (role
// header and separators: 4–8 tokens in the Llama 2 and 3, ChatML and Gemma
// templates); the larger is counted.
const perMessageTokens = 8

// countTokens is [Options.CountTokens], or the o200k count.
func (a *Agent) countTokens(text string) int {
	if a.opts.CountTokens != nil {
		return a.opts.CountTokens(text)
	}
	return tokens.Estimate(text)
}

// replyTokens is the room kept for req's reply: the token budget the
// session's [llm.Checked] will send with it ([llm.DefaultMaxTokens] when it
// sends none), at most an eighth of the window. The budget is the worst
// case of the constraint, most replies are a fraction of it, and one that
// runs into the window's end is cut off and repaired like one cut at the
// budget; reserving all of it would refuse requests a small window serves.
func (s *Session) replyTokens(req *llm.Request) int {
	budget := s.backend.Budget(req)
	if budget <= 0 {
		budget = llm.DefaultMaxTokens
	}
	return min(budget, s.agent.opts.ContextTokens/8)
}

// messageTokens returns the estimate of the conversation's message i,
// counting (and keeping) those not counted yet.
func (s *Session) messageTokens(i int) int {
	for len(s.msgTokens) <= i {
		s.msgTokens = append(s.msgTokens, s.agent.countTokens(messageText(s.messages[len(s.msgTokens)]))+perMessageTokens)
	}
	return s.msgTokens[i]
}

// messageText is what a chat template renders of m besides its role
// header: the content, and each native call's name and arguments.
func messageText(m llm.Message) string {
	if len(m.ToolCalls) == 0 {
		return m.Content
	}
	var b strings.Builder
	b.WriteString(m.Content)
	for _, c := range m.ToolCalls {
		b.WriteString(c.Name)
		b.WriteByte(' ')
		b.Write(c.Arguments)
	}
	return b.String()
}

// headTokens is the estimate of req's system prompt and tool
// definitions, counted again only when their rendering changed (a session
// keeps it the same from step to step; see the package doc on prompts).
func (s *Session) headTokens(req *llm.Request) int {
	head := promptText(&llm.Request{Messages: req.Messages[:1], Tools: req.Tools, PromptTools: req.PromptTools}, s.agent.opts.Mode)
	if !bytes.Equal(head, s.head) {
		s.head, s.headCount = head, s.agent.heads.count(head, s.agent.countTokens)+perMessageTokens
	}
	return s.headCount
}

// headCache keeps the token counts of recent system prompts with their
// tools across sessions (the same principal's sessions start with the same
// ones), keyed by a hash of the rendering: a collision only misestimates.
type headCache struct {
	mu   sync.Mutex
	seed maphash.Seed
	n    map[uint64]int
}

// headCacheSize bounds the cache; past it, it starts again empty.
const headCacheSize = 512

func (c *headCache) count(head []byte, count func(string) int) int {
	c.mu.Lock()
	if c.n == nil {
		c.seed, c.n = maphash.MakeSeed(), make(map[uint64]int)
	}
	k := maphash.Bytes(c.seed, head)
	n, ok := c.n[k]
	c.mu.Unlock()
	if ok {
		return n
	}
	n = count(string(head))
	c.mu.Lock()
	if len(c.n) >= headCacheSize {
		clear(c.n)
	}
	c.n[k] = n
	c.mu.Unlock()
	return n
}

// isTurnStart reports whether m, in a restored history, starts a turn: a
// user's input, not a tool result or a tools-added notice (which envelope
// modes send as user messages).
func isTurnStart(m llm.Message) bool {
	return m.Role == llm.RoleUser && !strings.HasPrefix(m.Content, toolResultPrefix) && !strings.HasPrefix(m.Content, toolsAddedPrefix)
}

// fit makes req fit [Options.ContextTokens], as the package comment above
// says, rebuilding req's messages (and, in the envelope modes, its tool
// section, when a left-out turn had introduced tools) when it starts the
// conversation later.
func (s *Session) fit(ctx context.Context, step int, view *tools.View, comp *compiled, req *llm.Request) error {
	a := s.agent
	if !a.opts.FitContext {
		return nil
	}
	limit := a.opts.ContextTokens
	omitted := 0
	for {
		reply := s.replyTokens(req)
		fixed := s.headTokens(req)
		// The earliest turn start (or s.from itself) from which the
		// conversation fits, walking back from its end; start stays -1 if
		// not even the current turn does.
		start, sum := -1, 0
		t := len(s.turns) - 1
		for i := len(s.messages) - 1; i >= s.from; i-- {
			sum += s.messageTokens(i)
			if fixed+sum+reply > limit {
				break
			}
			for t >= 0 && s.turns[t] > i {
				t--
			}
			if i == s.from || t >= 0 && s.turns[t] == i {
				start = i
			}
		}
		if start < 0 {
			current := s.from
			if len(s.turns) > 0 {
				current = max(s.turns[len(s.turns)-1], s.from)
			}
			turn := 0
			for i := current; i < len(s.messages); i++ {
				turn += s.messageTokens(i)
			}
			return fmt.Errorf("%w: the current turn needs about %d tokens (system prompt and tools %d, conversation %d, reply %d), over ContextTokens %d",
				ErrContextOverflow, fixed+turn+reply, fixed, turn, reply, limit)
		}
		if start == s.from {
			// The walk reached s.from without passing the limit, so sum
			// is the whole conversation sent.
			if omitted > 0 {
				a.observe(ctx, Event{Kind: EventTrimmed, Step: step, Omitted: s.from, PromptTokens: fixed + sum, ReplyTokens: reply})
				a.log.LogAttrs(ctx, slog.LevelInfo, "runtime: left the oldest turns out of the request to fit the context",
					slog.String("session", s.id), slog.Int("step", step), slog.Int("omitted_messages", s.from),
					slog.Int("prompt_tokens", fixed+sum), slog.Int("reply_tokens", reply), slog.Int("context_tokens", limit))
			}
			return nil
		}
		// A left-out notice had introduced tools the system prompt does
		// not list: list every tool there again.
		for _, m := range s.messages[s.from:start] {
			if m.Role == llm.RoleUser && strings.HasPrefix(m.Content, toolsAddedPrefix) {
				s.promptNames, s.announced = nil, nil
				req.PromptTools = s.announce(comp)
				break
			}
		}
		omitted += start - s.from
		s.from = start
		req.Messages = s.requestMessages(view, comp)
		if s.deferring() {
			// The left-out turns' search results loaded tools that the
			// request no longer loads: the step's shortlist arrives again.
			if err := s.deferTools(step, view, s.names(view.Snapshot()), comp, req); err != nil {
				return err
			}
		}
	}
}
