// Package gateway executes tool calls exactly once, whatever a model, a
// prompt injection or a raw client sends: it re-checks authorization on
// every call, validates the arguments, derives the idempotency key itself,
// lets one step have one effect, asks a human for irreversible calls, runs
// the handler with a deadline, and records and audits the outcome.
//
//	g, err := gateway.New(reg, memstore.New(), nil)
//	res, err := g.Execute(ctx, gateway.Call{Principal: p, SessionID: "s1", Step: 3,
//		Tool: "bank/transfer_funds", Arguments: args})
//	var gerr *gateway.Error
//	if errors.As(err, &gerr) { /* gerr.Type, gerr.Retryable, gerr.RetryAfter, gerr.Details */ }
//
// # The order of one call
//
// Execute authenticates (a principal with an ID and a tenant), authorizes
// with tools.Authorize on the registry's current snapshot (deny by default;
// the decision and its reason are logged and audited), takes a rate-limit
// token (principal × tool), validates (the tool's JSON Schema, with
// ECMA-262 `pattern` semantics, then the tool's Validator for typed
// decoding and domain rules), derives the idempotency key ([DeriveKey]:
// sha256 over the length-prefixed tenant, principal, session id, step, tool
// and RFC 8785 canonical arguments — never a model-generated id), claims
// the slot (tenant, principal, session, step, tool) in the store, checks the approval
// when the tool is irreversible or [Options.NeedsApproval] says so, runs the
// handler with its timeout and the key in its context (IdempotencyKey),
// records the outcome, and audits.
//
// # Decide, then do
//
// After authorization, what a call does next is decided by a pure function
// of what the gateway knows so far (the rate-limit token, the validation,
// the claim, the approval, the handler's classified outcome, the record),
// kept apart from doing it as etcd raft keeps Step apart from Ready:
// Execute performs the one action decided (a store operation, the
// validation, the policy hook, the handler), adds its result to what it
// knows and asks again, until the answer. Every row of the table below is
// a row of the decision's table test.
//
// # What the gateway records
//
//	outcome                                stored?                 a retry with the same key gets
//	-------------------------------------  ----------------------  -------------------------------------------
//	unauthenticated, permission denied,    no (nothing ran)        the same checks again (an approval an
//	unknown tool, validation error, rate                           approver denied stays denied until it
//	limited, confirmation required                                 expires, at every step of its session)
//
//	handler succeeded, or returned a       yes, for the retention  the stored result, Cached (a domain error
//	*tools.DomainError (insufficient       (Options.Retention,     comes back as DOMAIN_ERROR, Cached)
//	funds)                                 default 24 h)
//
//	handler failed before any side effect  claim released (a re-   a fresh execution (the uncertain record's
//	(tools.NoEffect, tools.Unavailable:    run of an uncertain     rules, for a re-run of an uncertain call)
//	DOWNSTREAM_FAILURE, and for the        call leaves it
//	latter CodeServerReconnecting)         uncertain)
//
//	outcome unknown: timeout, panic,       yes, state uncertain    UncertainRerun (default): the handler runs
//	unmarked error, or the owner vanished  (for the retention)     again with the SAME key, which the downstream
//	(its lease expired)                                            must deduplicate; UncertainReconcile:
//	                                                               OUTCOME_UNCERTAIN until reconciled.
//	                                                               Never a silent new key.
//
//	any of the three above, when the       held in memory, and     from this gateway: the held outcome (a value
//	store fails to record it (down,        recorded in the         or domain error, Cached) or IN_PROGRESS
//	connection lost mid-write)             background until the    (uncertain, no effect) until recorded; never
//	                                       store takes it          a new execution. The caller itself gets the
//	                                                               outcome, never "nothing was acknowledged".
//
//	unknown tool, but this key's record    nothing more (one read  that record's answer: the result or domain
//	exists: the call ran, then its tool    of the record; nothing  error, Cached, as a replay; IN_PROGRESS
//	went (dropped from its server's        claimed or written)     while it runs; OUTCOME_UNCERTAIN for an
//	listing, quarantined, restricted to                            uncertain record, which cannot re-run;
//	other tenants)                                                 a held outcome as in the row above
//
// The last row keeps invariant 9 when a tool goes after one of its calls
// ran: a well-formed call named by a tool ID that admission finds no tool
// for is keyed as a call of that ID (its own checks and RFC 8785
// arguments), and its record, when one exists and has not expired,
// answers. A bare name, a malformed call, no record or a store error
// (logged) is UNKNOWN_TOOL as before.
//
// A call whose slot is bound to other arguments (or another principal) is
// IDEMPOTENCY_MISMATCH and never runs; a duplicate of a call in flight is
// IN_PROGRESS with a retry-after hint. A result says how many executions
// its slot has had ([Result.Attempts]) and whether an earlier one's outcome
// was uncertain ([Result.PreviousUncertain]); so do the HTTP body
// ("attempts", "previous_attempt_uncertain") and runtime/mcpserver's
// _meta. [Options.UncertainTools] sets the uncertain policy per tool.
//
// # Held outcomes
//
// Once a handler has returned, the gateway owns its outcome (invariant 9
// of docs/design.md). When the store fails to record it, the gateway holds
// it in memory, answers with it, and retries the write with backoff on a
// context.WithoutCancel of the call's context until the store takes it (or
// refuses it as fenced: recorded after all, or taken over). Every
// execution reserves its place before its handler runs
// ([Options.MaxHeldOutcomes], [Options.MaxHeldBytes]); at the bound a call is
// refused before it runs, retryably, and no held outcome is dropped.
// [Gateway.Close] waits for the held outcomes to be recorded until its
// context ends. A process that dies while holding one leaves its claim in
// progress: the lease expires and the call becomes uncertain. Only the
// gateway holding an outcome answers from it; another process sharing the
// store answers IN_PROGRESS until the lease expires, then follows the
// uncertain policy.
//
// # Leases and fencing
//
// A claim holds the slot for the tool's timeout plus [Options.LeaseGrace]
// (leases, retention and approval expiry follow the injected Clock; the
// handler's own deadline is a real-time context deadline). The handler
// starts only while its whole timeout and half the grace are left of the
// lease, so that an outcome within the timeout reaches the store in time;
// a claim granted later than that (a store slow to answer) is given back
// and the caller told to retry, nothing having run. So is a claim the
// store applied although Claim returned an error (its answer lost after
// the commit): each claim carries a random [store.ClaimRequest.Owner], and
// after a failed claim the gateway reads the slot's record and gives back
// the claim its owner shows to be its own, so that the retry runs at once,
// not as a second attempt after an owner that seemed to vanish.
// After that a retry of the same call sent to another gateway takes the
// slot over with a larger fencing token and re-runs the handler with the
// same key; the old owner's late completion is rejected ([store.ErrFenced]) and its
// caller told to retry. The gateway that is itself still running the call,
// or recording its outcome, answers its re-sends IN_PROGRESS whatever the
// lease says: one gateway never runs a call twice at once. The
// handler runs detached from the caller's cancellation, so a client that
// gives up does not turn a known outcome into an unknown one.
//
// # Approvals
//
// An approval is bound to the call's idempotency key and its arguments'
// fingerprint, so it cannot be replayed for other arguments. The model
// cannot produce one: a different principal of the same tenant holding
// [ApprovalScope] grants it (Approve, or POST /v1/approvals/{id}); the
// requester cannot approve its own call. The approval ID is derived from
// the key, so the retried call finds its approval. An approver may instead
// deny it ([Gateway.Deny]): the call, sent again, is PERMISSION_DENIED
// without running or asking again until the approval expires, so a model
// that loops on a refused payment meets the same refusal. The denial
// covers the session: the same principal sending the same arguments to
// the same tool at another step of the session (an MCP client, which
// gives every call a step of its own) meets it too; another session,
// principal or set of arguments is asked about anew. A call whose own
// approval was granted before the denial still runs under that grant.
//
// # Plugging in a tool's own idempotency
//
// A handler reads the key with tools.IdempotencyKey(ctx) and hands it downstream
// (a ledger stores it in the same transaction as the effect; an HTTP API
// gets an Idempotency-Key header). That is what makes a re-run after an
// uncertain outcome safe.
//
// # Stores
//
// What the gateway keeps, and the interfaces a store implements, are
// package [store]'s, as database/sql/driver sits beside database/sql: a
// store driver implements that package's interfaces, and this package
// calls them. The durable state is split by concern: [store.RecordStore] (claims, leases, fencing tokens,
// outcomes), [store.ApprovalStore], [store.AuditLog],
// [store.RateLimitStore] and [store.Purger]; [store.Store] is all of them
// in one, which [New] takes. memstore is the in-memory reference;
// sqlitestore is the embedded durable default; redisstore and pgstore serve
// several hosts. [Options.Stores] takes some concerns from other stores (the
// audit log elsewhere, rate limits in Redis beside a SQLite store). Every
// store passes storetest.Run; a store of one concern passes that concern's
// suite (storetest.RunRecords and the like). A store keeping both the
// records and the audit log may implement [store.AuditedRecorder]; the
// gateway then writes a completed call's outcome and audit entry in one
// atomic, durable step instead of two in a row.
//
// # The audit log
//
// Every call's decision and outcome is a [store.AuditEntry]: who, what, the
// decision and its reason, the idempotency key (never the arguments), the
// outcome and the latency. Each store keeps its entries in a hash chain
// ([store.AuditChain]): an entry carries its sequence number, the hash of the
// entry before it and its own, over the canonical (JCS) encoding of its
// content, assigned inside the store's write, so the entries of many
// gateways on one store form one chain. Package runtime/gateway/auditchain
// computes those hashes; its Verify names the first
// entry edited, removed, moved or appended outside the chain; Ed25519
// checkpoints (its Sign) expose a chain rewritten as a whole or
// a removed tail. The retention purge keeps an anchor, the hash of the last
// entry removed, so verification starts there. "toolgate audit" verifies
// and exports the log (runtime/gateway/auditexport, JSON Lines).
//
// # Transports
//
// The gateway knows nothing of HTTP. runtime/server serves docs/design.md's
// HTTP contract over it (bearer tokens, status codes, the error body);
// runtime/mcpserver serves it as MCP tools. A program that opens a store
// by URL uses runtime/gateway/storeurl, the one package that links every
// store driver.
//
// # Dependencies
//
// JSON Schema validation uses internal/jsonschema, the one setup the
// catalog loader, the gateway and the grammar share: the compiler
// github.com/santhosh-tekuri/jsonschema/v6 (a complete implementation of
// drafts 4 to 2020-12 that passes the official test suite), numbers
// compared on their decimal text, ECMA-262 `pattern` semantics (a pattern
// in the subset where ECMA-262 and RE2 provably agree runs on Go's
// linear-time regexp, any other — lookarounds, backreferences, '.', \s,
// negated classes — on github.com/dlclark/regexp2 in ECMAScript mode), and
// one deadline for the whole validation of a call
// ([Options.ValidationTimeout]), shared by all its backtracking matches.
// Metrics use the Prometheus client.
package gateway
