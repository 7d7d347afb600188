package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
)

// Once a handler has returned, the gateway owns its outcome (docs/design.md
// invariant 9). When the store cannot record it (the store is down, the
// connection broke mid-write), the gateway does not tell the caller
// "nothing happened, retry": it holds the outcome in memory, answers the
// caller with it, answers re-sends of the call with it (or with
// IN_PROGRESS), and records it in the background, with backoff, until the
// store takes it. A process that dies before that leaves the claim in
// progress; its lease expires and the call becomes uncertain (the recording
// table in the package documentation).
//
// The held outcomes are bounded ([Options.MaxHeldOutcomes],
// [Options.MaxHeldBytes]). Every execution reserves its place before its
// handler runs, since any may need to be held: at the bound, a call is
// refused before it runs, with a retryable error, and no held outcome is
// ever dropped.
//
// From its claim until its outcome is recorded or held, an execution is
// also known to the holder as running (begin, end): a re-send of the call to this gateway
// gets IN_PROGRESS even after the claim's lease has expired in the store
// (a process starved past the lease, a store that took longer than the
// lease to fail or come back), so that one gateway never runs a call it is
// itself still running or recording. Another gateway over the same store
// still takes an expired lease over (invariant 5, with fencing).

// recordOp is the store write a held outcome waits for.
type recordOp uint8

const (
	opComplete      recordOp = iota + 1 // Complete (or CompleteAudited)
	opMarkUncertain                     // MarkUncertain
	opRelease                           // Release
)

var recordOpNames = [...]string{"", "complete", "mark uncertain", "release"}

func (o recordOp) String() string { return recordOpNames[o] }

// heldOutcome is one outcome the store has not recorded yet: the write to
// retry, and what a re-send of the call gets meanwhile.
type heldOutcome struct {
	op         recordOp
	slot       store.Slot
	key        string
	tool       string
	token      uint64
	completion store.Completion  // opComplete
	audit      *store.AuditEntry // opComplete through an AuditedRecorder: written with it
	reason     string            // opMarkUncertain
	now        time.Time         // opMarkUncertain, opRelease
	expiresAt  time.Time         // opMarkUncertain
	kind       ranKind           // what the handler did
	attempts   int
	bytes      int64
	abandoned  bool // Close has counted it as left unrecorded (under holder.mu)
}

// heldBytes estimates what e keeps in memory.
func heldBytes(e *heldOutcome) int64 {
	n := 256 + len(e.slot.Tenant) + len(e.slot.Principal) + len(e.slot.SessionID) + len(e.slot.Tool) +
		len(e.key) + len(e.reason) + len(e.completion.Value)
	if d := e.completion.DomainError; d != nil {
		n += len(d.Code) + len(d.Message)
		if d.Details != nil {
			if b, err := json.Marshal(d.Details); err == nil {
				n += len(b)
			}
		}
	}
	if e.audit != nil {
		n += 256 + len(e.audit.Reason) + len(e.audit.SessionID) + len(e.audit.Taint)
	}
	return int64(n)
}

// heldLookup is what actCheckHeld found for the call's slot.
type heldLookup struct {
	found bool
	// running: the gateway is running this slot's handler, or recording
	// its outcome, in another call (no outcome to give yet).
	running  bool
	key      string
	kind     ranKind
	value    json.RawMessage
	domain   *tools.DomainError
	attempts int
}

// The facts of the common case, shared so that it allocates nothing; no
// one writes through them.
var (
	nothingHeld           heldLookup
	reserved, notReserved = true, false
)

// Backoff of the background recording: the first retry after
// recordRetryMin, doubling up to recordRetryMax.
const (
	recordRetryMin = 50 * time.Millisecond
	recordRetryMax = 5 * time.Second
)

// holder keeps the held outcomes of one gateway.
type holder struct {
	maxCount int64
	maxBytes int64
	// reserved counts the executions that may need to hold an outcome
	// (handlers running) and the outcomes held.
	reserved atomic.Int64
	bytes    atomic.Int64
	count    atomic.Int64 // outcomes held: lets lookup skip the lock
	nrunning atomic.Int64 // executions running: lets lookup skip the lock
	closed   atomic.Bool

	mu     sync.Mutex
	bySlot map[store.Slot]*heldOutcome
	wg     sync.WaitGroup

	// runMu guards running, apart from mu: every claimed call takes it
	// twice (begin, end), while mu is for the rare held outcomes.
	runMu sync.Mutex
	// running maps the slots this gateway has claimed and not yet
	// finished (handler running, outcome being recorded) to the call
	// (begin, end); f.valid.key is its key.
	running map[store.Slot]*facts
	// stop ends the background recording (Close, once its ctx is done).
	stop    context.Context
	stopNow context.CancelFunc
}

func newHolder(maxCount int, maxBytes int64) *holder {
	stop, cancel := context.WithCancel(context.Background())
	return &holder{maxCount: int64(maxCount), maxBytes: maxBytes, bySlot: map[store.Slot]*heldOutcome{},
		running: map[store.Slot]*facts{}, stop: stop, stopNow: cancel}
}

// reserve takes a place for an execution's outcome; false means the
// gateway is at its bound, or closed, and the execution must not start.
func (h *holder) reserve() bool {
	if h.closed.Load() || h.bytes.Load() >= h.maxBytes {
		return false
	}
	if h.reserved.Add(1) > h.maxCount {
		h.reserved.Add(-1)
		return false
	}
	return true
}

// unreserve gives back a place whose outcome was recorded (or never came).
func (h *holder) unreserve() { h.reserved.Add(-1) }

// begin marks slot as running the call f, until end.
func (h *holder) begin(slot store.Slot, f *facts) {
	h.runMu.Lock()
	h.running[slot] = f
	h.nrunning.Add(1)
	h.runMu.Unlock()
}

// end marks slot as no longer running: its outcome is recorded, held, or
// given up as fenced.
func (h *holder) end(slot store.Slot) {
	h.runMu.Lock()
	delete(h.running, slot)
	h.nrunning.Add(-1)
	h.runMu.Unlock()
}

// lookup returns what the gateway holds for slot, or that it is running
// it (&nothingHeld when neither). A held outcome is looked for first: an
// execution holds its outcome before it ends running, so a call that is
// in neither place has been recorded in the store.
func (h *holder) lookup(slot store.Slot) *heldLookup {
	if h.count.Load() != 0 {
		if l := h.lookupHeld(slot); l != nil {
			return l
		}
	}
	if h.nrunning.Load() != 0 {
		h.runMu.Lock()
		f, ok := h.running[slot]
		h.runMu.Unlock()
		if ok {
			return &heldLookup{found: true, running: true, key: f.valid.key}
		}
	}
	return &nothingHeld
}

// lookupHeld returns the outcome held for slot, or nil.
func (h *holder) lookupHeld(slot store.Slot) *heldLookup {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.bySlot[slot]
	if e == nil {
		return nil
	}
	l := &heldLookup{found: true, key: e.key, kind: e.kind, attempts: e.attempts}
	if e.op == opComplete {
		l.value = append(json.RawMessage(nil), e.completion.Value...)
		if d := e.completion.DomainError; d != nil {
			dc := *d
			l.domain = &dc
		}
	}
	return l
}

// hold keeps e, whose place was reserved, and reports whether a
// background recorder may take it (false once the gateway is closed).
func (h *holder) hold(e *heldOutcome) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bySlot[e.slot] = e
	h.count.Add(1)
	h.bytes.Add(e.bytes)
	if h.closed.Load() {
		return false
	}
	h.wg.Add(1)
	return true
}

// drop removes e once it is recorded (or superseded), and frees its place.
func (h *holder) drop(e *heldOutcome) {
	h.mu.Lock()
	if h.bySlot[e.slot] == e {
		delete(h.bySlot, e.slot)
		h.count.Add(-1)
		h.bytes.Add(-e.bytes)
		h.reserved.Add(-1)
	}
	h.mu.Unlock()
}

// abandon returns the outcomes held now, and how many of them no Close
// had reported yet.
func (h *holder) abandon() (left []*heldOutcome, fresh int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.bySlot {
		left = append(left, e)
		if !e.abandoned {
			e.abandoned = true
			fresh++
		}
	}
	return left, fresh
}

// hold hands the outcome of f's execution, which the store failed to
// record, to the holder, and starts recording it in the background. ctx is
// the call's context: the recording keeps its values, never its
// cancellation ([context.WithoutCancel]); it stops on Close.
func (g *Gateway) hold(ctx context.Context, f *facts, slot store.Slot) {
	e := &heldOutcome{slot: slot, key: f.valid.key, tool: f.tool.ID, token: f.claim.Token, kind: f.ran.kind,
		attempts: f.claim.Record.Attempts, now: f.ran.at}
	switch f.ran.kind {
	case ranValue, ranDomain:
		e.op = opComplete
		e.completion = store.Completion{Slot: slot, Token: f.claim.Token, Value: f.ran.value, DomainError: f.ran.domain,
			Now: f.ran.at, ExpiresAt: f.ran.at.Add(g.opts.Retention)}
		if _, ok := g.store.(store.AuditedRecorder); ok {
			// The call's audit entry is written with its completion: the
			// entry for the answer an unfenced completion gives.
			unfenced := *f
			unfenced.fenced, unfenced.recordFailed, unfenced.held = new(bool), false, false
			if n := decide(&unfenced); n.do == actAnswer {
				a := g.auditEntry(&unfenced, true, n.result, n.err, g.clock.Now().Sub(f.start))
				e.audit = &a
				f.audited = true
			}
		}
	case ranNoEffect:
		if f.release() {
			e.op = opRelease
			break
		}
		fallthrough
	default:
		e.op = opMarkUncertain
		e.reason = cleanText(f.ran.reason, 512)
		e.expiresAt = f.ran.at.Add(g.opts.Retention)
	}
	e.bytes = heldBytes(e)
	g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: holding an outcome the store could not record; recording it in the background",
		slog.String("tool", e.tool), slog.String("key", e.key), slog.String("op", e.op.String()))
	if !g.held.hold(e) {
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: closed; an outcome is left unrecorded (its lease will expire to uncertain)",
			slog.String("tool", e.tool), slog.String("key", e.key))
		return
	}
	rctx := context.WithoutCancel(ctx)
	go g.recordHeld(rctx, e)
}

// recordHeld retries e's write, with backoff, until the store takes it,
// refuses it as fenced (another owner took the slot over, or the write
// had landed after all), or the gateway is closed.
func (g *Gateway) recordHeld(ctx context.Context, e *heldOutcome) {
	defer g.held.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(g.held.stop, cancel)
	defer stop()
	wait := recordRetryMin
	for attempt := 1; ; attempt++ {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		err := g.writeHeld(ctx, e)
		g.metrics.recordRetry()
		switch {
		case err == nil:
			g.held.drop(e)
			g.metrics.heldEnded("recorded")
			g.log.LogAttrs(ctx, slog.LevelInfo, "gateway: a held outcome is recorded",
				slog.String("tool", e.tool), slog.String("key", e.key), slog.Int("tries", attempt))
			return
		case errors.Is(err, store.ErrFenced):
			g.held.drop(e)
			g.metrics.heldEnded("fenced")
			g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: a held outcome was refused as fenced (recorded already, or the slot was taken over)",
				slog.String("tool", e.tool), slog.String("key", e.key), slog.Int("tries", attempt))
			return
		case ctx.Err() != nil:
			return
		}
		if attempt == 1 || attempt%20 == 0 {
			g.log.LogAttrs(ctx, slog.LevelWarn, "gateway: recording a held outcome failed; retrying",
				slog.String("tool", e.tool), slog.String("key", e.key), slog.Int("tries", attempt), slog.String("error", err.Error()))
		}
		wait = min(wait*2, recordRetryMax)
	}
}

// writeHeld is e's store write.
func (g *Gateway) writeHeld(ctx context.Context, e *heldOutcome) error {
	switch e.op {
	case opComplete:
		if ar, ok := g.store.(store.AuditedRecorder); ok && e.audit != nil {
			return ar.CompleteAudited(ctx, e.completion, *e.audit)
		}
		return g.store.Complete(ctx, e.completion)
	case opMarkUncertain:
		return g.store.MarkUncertain(ctx, e.slot, e.token, e.reason, e.now, e.expiresAt)
	default:
		return g.store.Release(ctx, e.slot, e.token, e.now)
	}
}

// ErrUnrecorded is what Close returns (wrapped) when outcomes were still
// held, unrecorded, when its context ended.
var ErrUnrecorded = errors.New("gateway: outcomes left unrecorded")

// HeldOutcomes returns how many outcomes the gateway holds because its
// store could not record them yet.
func (g *Gateway) HeldOutcomes() int { return int(g.held.count.Load()) }

// Close waits, until ctx ends, for the outcomes the gateway holds to be
// recorded (see the package documentation), then stops recording them.
// From its start the gateway runs no handler: a call that would is refused
// with a retryable INTERNAL_ERROR before it runs (replays are still
// answered). An outcome left unrecorded is logged; its claim's lease then
// expires and the call becomes uncertain, as after a crash. Close returns
// nil, or an error wrapping [ErrUnrecorded] that counts them. A call whose
// handler still runs when Close returns (a server's shutdown timeout
// passed and its process is about to exit) is audited then, outcome
// uncertain, so that the audit log tells of the attempt even if the
// process ends before the handler does; if the handler returns first,
// the call's own entry follows under the same key. It is safe to call
// more than once and concurrently with Execute.
func (g *Gateway) Close(ctx context.Context) error {
	h := g.held
	h.mu.Lock()
	h.closed.Store(true)
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		h.stopNow()
		<-done
	}
	h.stopNow()
	left, fresh := h.abandon()
	for range fresh {
		g.metrics.heldEnded("abandoned")
	}
	for _, e := range left {
		g.log.LogAttrs(ctx, slog.LevelError, "gateway: closed with an outcome unrecorded (its lease will expire to uncertain)",
			slog.String("tool", e.tool), slog.String("key", e.key), slog.String("op", e.op.String()))
	}
	g.auditRunning(ctx)
	if len(left) > 0 {
		return fmt.Errorf("%w: %d", ErrUnrecorded, len(left))
	}
	return nil
}

// auditRunning appends an audit entry, outcome uncertain, for each call
// whose handler is running (Close), once per call. It reads only what a
// call's facts hold before its claim (begin), which no one writes after.
func (g *Gateway) auditRunning(ctx context.Context) {
	h := g.held
	written := make(chan struct{})
	defer close(written)
	h.runMu.Lock()
	var running []*facts
	for _, f := range h.running {
		if f.runningAudit == nil {
			f.runningAudit = written
			running = append(running, f)
		}
	}
	h.runMu.Unlock()
	// The shutdown's own time may be spent: the entries get a bound of
	// their own, one for all, so that a dead store cannot hold Close for
	// a bound per running call.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordRetryMax)
	defer cancel()
	for _, f := range running {
		if err := g.store.AppendAudit(actx, g.runningEntry(f)); err != nil {
			g.metrics.auditFailure()
			g.log.LogAttrs(ctx, slog.LevelError, "gateway: audit append failed", slog.String("error", err.Error()))
		}
	}
}

// awaitRunningAudit waits until the entry Close writes for f as a
// running call, if it writes one, is written, so that f's own entry
// comes after it. It returns at once for a call Close did not see running.
func (h *holder) awaitRunningAudit(f *facts) {
	h.runMu.Lock()
	written := f.runningAudit
	h.runMu.Unlock()
	if written != nil {
		<-written
	}
}

// runningEntry is the audit entry of a call whose handler was running
// when the gateway closed.
func (g *Gateway) runningEntry(f *facts) store.AuditEntry {
	e := callEntry(f)
	e.Decision, e.Outcome, e.Key = store.DecisionAllow, store.OutcomeUncertain, f.valid.key
	e.Reason = cleanText(f.reason+"; running when the gateway closed: its outcome is unknown to this entry "+
		"(a later entry under the same key tells it; none if the process ended first)", 512)
	e.Latency = g.clock.Now().Sub(f.start)
	return e
}
