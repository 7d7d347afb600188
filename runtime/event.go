package runtime

import (
	"encoding/json"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/tools/discovery"
)

// EventKind names a stage of a step.
type EventKind string

// The stages an [Options.Observer] sees, in the order a step goes through them.
const (
	// EventShortlist: the tools chosen for the step (Shortlist, Strategy,
	// Tools, Authorized, tokens).
	EventShortlist EventKind = "shortlist"
	// EventConstraint: the compiled constraint sent with the request.
	EventConstraint EventKind = "constraint"
	// EventTrimmed: with [Options.FitContext], the request leaves out the
	// conversation's oldest turns to fit [Options.ContextTokens] (Omitted,
	// PromptTokens, ReplyTokens).
	EventTrimmed EventKind = "trimmed"
	// EventDeferredOff: with [Options.Deferred], the backend refused
	// deferred loading (a model or API version without tool search,
	// Reason); the session sends its shortlists as plain native tools from
	// this step on, which it sends again.
	EventDeferredOff EventKind = "deferred_off"
	// EventRequest: the request is about to go to the model (PromptBytes,
	// PrefixBytes).
	EventRequest EventKind = "request"
	// EventReply: the model's parsed reply (Response).
	EventReply EventKind = "reply"
	// EventFindTools: a find_tools search and what it loaded (Found).
	EventFindTools EventKind = "find_tools"
	// EventApproval: a call held for approval and the human's decision.
	EventApproval EventKind = "approval"
	// EventRepeatedCall: the model repeated a call that already succeeded
	// (or whose outcome is unknown) earlier in the turn, with the same
	// arguments (Tool, Arguments, Repeat, RepeatOf; for [RepeatRefused] the
	// earlier Result and Err, a [*RepeatedCallError]). Unless refused, the
	// call then goes through the gateway and [EventCall] follows.
	EventRepeatedCall EventKind = "repeated_call"
	// EventCall: a call went through the gateway (Call, Result or Err).
	EventCall EventKind = "call"
	// EventAnswer: the model answered; the turn ends.
	EventAnswer EventKind = "answer"
)

// Event reports one stage of a step to [Options.Observer]. Only the fields
// of its Kind are set. Values are shared with the session: observers must
// not modify them.
type Event struct {
	Kind EventKind
	Step int

	// [EventShortlist]
	Strategy        Strategy
	Shortlist       *discovery.Shortlist // nil for [StrategyInjectAll]
	Tools           []string             // tool IDs shown, in order
	Authorized      int
	ShortlistTokens int // tokens of the shown tools' definitions
	CatalogTokens   int // tokens of every authorized tool's definitions

	// [EventConstraint]
	Constraint  llm.Constraint
	Excluded    []string // tools left out because their schema did not compile
	Relaxations []string // constraints the grammar could not express (the gateway checks them)

	// [EventTrimmed]: the messages of the conversation left out of this
	// request and of every later one (the oldest whole turns), and the
	// estimated tokens of the prompt sent and of the reply's budget.
	Omitted      int
	PromptTokens int
	ReplyTokens  int

	// [EventRequest]: the prompt's size and how many of its leading bytes
	// equal the previous request's of the session (0 for the first), over
	// the rendering of tool definitions and messages described in the
	// package doc; PrefixBytes/PromptBytes is what a prompt cache can reuse.
	PromptBytes int
	PrefixBytes int

	// [EventDeferredOff]: the backend's reason.
	Reason string

	// [EventReply]
	Response *llm.Response

	// [EventFindTools]
	Query string
	Found []string

	// [EventApproval]
	Approval *ApprovalRequest
	Approved bool

	// [EventRepeatedCall]: what the runtime did with the repeat, and the
	// step of the earlier call it repeats.
	Repeat   RepeatAction
	RepeatOf int

	// [EventCall] (and [EventRepeatedCall])
	Tool      string
	Arguments json.RawMessage
	Result    json.RawMessage
	Cached    bool
	Err       error

	// [EventAnswer]
	Answer string
}
