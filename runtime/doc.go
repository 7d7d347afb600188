// Package runtime is the agent loop: each step it authorizes, discovers the
// few tools the conversation needs, compiles them into one output
// constraint, asks the model, and executes the model's tool call exactly
// once through the gateway, feeding the result (or a structured error) back
// until the model answers or the step budget ends.
//
//	agent, err := runtime.New(reg, disc, gw, backend, nil)
//	sess := agent.NewSession(principal, "session-42")
//	turn, err := sess.Run(ctx, "move 25 dollars from ACC-00001 to ACC-00002")
//	fmt.Println(turn.Answer)
//
// What the model sees is computed from the principal's authorized View
// only: the shortlist, its schemas, the grammar or structured-output spec,
// the names of the tool groups in the system prompt, and find_tools
// results. A tool the principal may not use never appears in a request
// (docs/design.md invariant 1), and the gateway checks every call again
// (invariant 2), so a hijacked model that names a hidden tool gets a
// refusal back as a tool result, not an execution.
//
// Steps are numbered per session. A call made at step N owns the gateway
// slot (tenant, principal, session, N, tool); when the runtime retries that step
// (IN_PROGRESS, a downstream failure, an uncertain outcome), it reuses the
// slot and the key, so a retried step is replayed, never executed twice.
// A model that calls again, at a later step of the same turn, a tool that
// is not read-only with the arguments of a call that already succeeded is
// not executed again ([Options.Repeats], [RepeatPolicy]): the model reads the
// earlier result, marked as already done, and [EventRepeatedCall] reports
// it. The rule is per turn; the user's same request in a later turn runs.
//
// Strategy by catalog size ([Options.Strategy], automatic by default): up to
// about 10 authorized tools are all injected; up to about 30 the workflow
// groups of the best candidates are injected; above that, or when all
// definitions would take more than a share of the context, the loop is
// progressive: the top-K shortlist plus find_tools, through which the model
// searches the authorized catalog itself ("select:<name>" loads a tool by
// name; package findtools, shared with the MCP facade). Tools found this
// way join the shortlist for later steps.
//
// Prompts are cache-stable: the system prompt and every tool definition a
// session has shown stay byte-identical from step to step, tools found
// later are appended after them (in the envelope modes introduced by a
// message where they were found), and each request reports how many of its
// leading bytes equal the previous request's ([EventRequest]), so the prompt
// caches of hosted APIs and local servers hold.
//
// A [Team] is a supervisor over workers; each [TeamSession] owns the user and
// the taint its delegations carry, and [TeamOptions.Store] keeps the
// delegations in the caller's store.
package runtime
