package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/toolgate/toolgate/tools"
)

// Slot is the unit of "one step, one effect" (docs/design.md invariant 4): the
// first call claiming a slot binds it to its idempotency key and argument
// fingerprint until the record is released or purged.
//
// The slot belongs to its principal: two principals of one tenant who use
// the same session id, step and tool have two slots, so no principal can
// occupy, block or probe another's.
type Slot struct {
	Tenant    string `json:"tenant"`
	Principal string `json:"principal"` // the principal ID making the call
	SessionID string `json:"session_id"`
	Step      int    `json:"step"`
	Tool      string `json:"tool"` // tool ID
}

// State is the state of an idempotency record.
type State string

// Record states. A released claim leaves no record at all.
const (
	// StateInProgress: an owner holds the claim until LeaseExpires.
	StateInProgress State = "in_progress"
	// StateDone: the handler returned a value or a domain error; it is replayed.
	StateDone State = "done"
	// StateUncertain: the handler failed after its effect may have begun
	// (timeout, panic, unmarked error) or its owner vanished.
	StateUncertain State = "uncertain"
)

// Record is the stored state of one slot. Stores return copies; callers
// may keep and modify them.
type Record struct {
	Slot        Slot   `json:"slot"`
	Principal   string `json:"principal"`   // the principal ID that claimed the slot: [Slot.Principal]
	Key         string `json:"key"`         // idempotency key, lowercase hex
	Fingerprint string `json:"fingerprint"` // sha256 of the canonical arguments, lowercase hex
	State       State  `json:"state"`
	// Token is the fencing token of the current (or last) owner. It grows
	// strictly with every successful claim of the slot.
	Token uint64 `json:"token"`
	// LeaseExpires bounds an in-progress claim; after it the slot may be
	// taken over by a new claim with the same key.
	LeaseExpires time.Time `json:"lease_expires"`
	// Value is the handler's result ([StateDone] without [Record.DomainError]).
	Value json.RawMessage `json:"value,omitempty"`
	// DomainError is the handler's business refusal ([StateDone]).
	DomainError *tools.DomainError `json:"domain_error,omitempty"`
	// Reason says why the record is uncertain.
	Reason string `json:"reason,omitempty"`
	// Attempts counts the claims that acquired the slot (1 for the first).
	Attempts  int       `json:"attempts"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// ExpiresAt is when the record may be purged; a record past it is
	// treated as absent by [Claim].
	ExpiresAt time.Time `json:"expires_at"`
}

// ClaimRequest asks a Store to claim a slot for one execution.
type ClaimRequest struct {
	Slot Slot
	// Principal is the claiming principal's ID. It must equal
	// [Slot.Principal]; stores bind the record to Slot.Principal.
	Principal   string
	Key         string
	Fingerprint string
	// Now is the gateway clock's time of the claim.
	Now time.Time
	// LeaseExpires is the end of the lease a successful claim gets.
	LeaseExpires time.Time
	// ExpiresAt is the new record's retention deadline.
	ExpiresAt time.Time
	// TakeOver allows the claim to take over an uncertain record or an
	// expired lease (the gateway's [UncertainRerun] policy). When false such
	// a slot yields [ClaimUncertain].
	TakeOver bool
}

// ClaimStatus is what a claim found.
type ClaimStatus int

// Claim statuses.
const (
	// ClaimAcquired: the caller now owns the slot with Claim.Token and
	// must finish with Complete, MarkUncertain or Release. Record.Attempts
	// is above 1 when it took over an uncertain record or an expired lease.
	ClaimAcquired ClaimStatus = iota + 1
	// ClaimInProgress: another owner holds a live lease (Record shows it).
	ClaimInProgress
	// ClaimDone: the call completed; Record holds the outcome to replay.
	ClaimDone
	// ClaimUncertain: the record is uncertain (or its in-progress lease
	// expired) and the request did not ask to take it over
	// (ClaimRequest.TakeOver false); nothing changed.
	ClaimUncertain
	// ClaimMismatch: the slot is bound to another key (the same principal
	// called it with other arguments); Record shows the binding.
	ClaimMismatch
)

// Claim is the result of Store.Claim.
type Claim struct {
	Status ClaimStatus
	// Token is the fencing token of the new ownership ([ClaimAcquired] only).
	Token uint64
	// Record is the slot's record after the claim (a copy).
	Record Record
	// Previous is the state the slot had before an acquiring claim took it
	// over ([StateUncertain] or [StateInProgress] with an expired lease); empty
	// for a fresh slot.
	Previous State
}

// Completion records a handler's outcome on a claimed slot.
type Completion struct {
	Slot  Slot
	Token uint64
	// Value is the result; [Completion.DomainError], when set, is recorded instead.
	Value       json.RawMessage
	DomainError *tools.DomainError
	Now         time.Time
	// ExpiresAt is the record's retention deadline.
	ExpiresAt time.Time
}

// Approval is a human confirmation bound to one call: its idempotency key
// and argument fingerprint (docs/design.md invariant 6).
type Approval struct {
	ID          string          `json:"approval_id"`
	Slot        Slot            `json:"slot"`
	Key         string          `json:"key"`
	Fingerprint string          `json:"fingerprint"`
	Requester   string          `json:"requester"`       // principal ID of the caller
	Arguments   json.RawMessage `json:"arguments"`       // canonical JSON, shown to the approver
	Taint       string          `json:"taint,omitempty"` // the untrusted output that made it needed, if any
	Granted     bool            `json:"granted"`
	Approver    string          `json:"approver,omitempty"` // principal ID of the granter
	CreatedAt   time.Time       `json:"created_at"`
	GrantedAt   time.Time       `json:"granted_at,omitzero"`
	ExpiresAt   time.Time       `json:"expires_at"`
}

// AuditEntry is one line of the audit log: who, what, the decision, the
// key, the outcome and the latency, and its place in the store's hash
// chain. It holds no call arguments and no tool result: the key (a hash of
// the arguments) stands for them.
type AuditEntry struct {
	Time      time.Time `json:"time"`
	Tenant    string    `json:"tenant"`
	Principal string    `json:"principal"`
	Actor     string    `json:"actor,omitempty"` // the worker acting for the principal, if any
	Taint     string    `json:"taint,omitempty"` // untrusted output read before the call, if any
	SessionID string    `json:"session_id"`
	Step      int       `json:"step"`
	Tool      string    `json:"tool"`
	Key       string    `json:"key,omitempty"`
	Decision  Decision  `json:"decision"` // [DecisionAllow] or [DecisionDeny]
	Reason    string    `json:"reason,omitempty"`
	// Outcome is how the call ended: [OutcomeOK], [OutcomeDenied], … (see
	// [Outcome]).
	Outcome    Outcome       `json:"outcome"`
	ApprovalID string        `json:"approval_id,omitempty"`
	Latency    time.Duration `json:"latency"`

	// The chain fields (see [AuditChain]), set by the store that appends the
	// entry, inside that write; what a caller passes to
	// [AuditLog.AppendAudit] in them is ignored. Seq is the entry's
	// number in the store's log (1, 2, …), Prev the Hash of entry Seq-1
	// (auditchain.Genesis for the first), Hash this entry's
	// (auditchain.Hash), V the chain version. An entry written before its
	// store kept a chain has V 0 and no hashes.
	Seq  uint64 `json:"seq,omitempty"`
	Prev string `json:"prev,omitempty"`
	Hash string `json:"hash,omitempty"`
	V    int    `json:"v,omitempty"`
}

// Decision is an [AuditEntry]'s authorization decision. Its values are
// the strings the audit log's JSON, the stores' columns and the audit
// hash chain hold.
type Decision string

// The two decisions.
const (
	DecisionAllow Decision = "allow" // authorized (what followed is the Outcome)
	DecisionDeny  Decision = "deny"  // refused before anything ran
)

// Outcome is how a call or an approval ended: an [AuditEntry]'s Outcome and
// the outcome label of toolgate_gateway_calls_total. The set is closed; its
// values are the strings the audit log's JSON, the stores' columns and the
// audit hash chain hold.
type Outcome string

// The outcomes, by the [ErrorType] of the answer where there is one.
const (
	OutcomeOK                   Outcome = "ok"                    // the tool ran and returned a result
	OutcomeReplayed             Outcome = "replayed"              // a recorded outcome sent again (Cached)
	OutcomeDomainError          Outcome = "domain_error"          // the tool ran and returned a [DomainError]
	OutcomeUnauthenticated      Outcome = "unauthenticated"       // [Unauthenticated]
	OutcomeDenied               Outcome = "denied"                // [PermissionDenied]
	OutcomeUnknownTool          Outcome = "unknown_tool"          // [UnknownTool]
	OutcomeInvalid              Outcome = "invalid"               // [ValidationError]
	OutcomeRateLimited          Outcome = "rate_limited"          // [RateLimited]
	OutcomeInProgress           Outcome = "in_progress"           // [InProgress]
	OutcomeMismatch             Outcome = "mismatch"              // [IdempotencyMismatch]
	OutcomeConfirmationRequired Outcome = "confirmation_required" // [ConfirmationRequired]
	OutcomeNoEffect             Outcome = "no_effect"             // [DownstreamFailure] before any effect
	OutcomeUncertain            Outcome = "uncertain"             // [DownstreamFailure] after a possible effect, or [UncertainOutcome]
	OutcomeInternal             Outcome = "internal"              // any other error ([Internal], a store failure)
)

// AuditQuery selects audit entries. Zero fields do not filter.
type AuditQuery struct {
	Tenant    string
	Principal string
	Tool      string
	Key       string
	Since     time.Time // inclusive
	Until     time.Time // exclusive
	// Limit caps the entries returned; 0 means 1000.
	Limit int
}

// RateLimit is a token bucket: Rate tokens per second refill a bucket of
// Burst tokens. A zero Rate or Burst means no limit.
type RateLimit struct {
	Rate  float64
	Burst int
}

// Concerns is a set of the gateway's stored concerns, as a bit set.
type Concerns uint8

// The concerns a store may hold.
const (
	// ConcernRecords: idempotency records (RecordStore).
	ConcernRecords Concerns = 1 << iota
	// ConcernApprovals: approvals (ApprovalStore).
	ConcernApprovals
	// ConcernAudit: the audit log (AuditLog).
	ConcernAudit
	// ConcernRateLimits: token buckets (RateLimitStore).
	ConcernRateLimits

	// allConcerns is every concern.
	allConcerns = ConcernRecords | ConcernApprovals | ConcernAudit | ConcernRateLimits
)

// Has reports whether c holds every concern of d. A zero c means
// every concern.
func (c Concerns) Has(d Concerns) bool {
	if c == 0 {
		c = allConcerns
	}
	return c&d == d
}

// PurgeRequest says what Purge removes.
type PurgeRequest struct {
	// Now removes idempotency records and approvals whose ExpiresAt <= Now,
	// and rate-limit buckets that would be full again by Now.
	Now time.Time
	// AuditBefore removes the oldest audit entries, in the log's order,
	// while their Time < AuditBefore; zero keeps all. The chain stays
	// whole: an entry older than the bound that follows a newer one (the
	// clocks of several gateways differ a little) waits for that one, and
	// the last entry removed becomes the chain's [AuditAnchor].
	AuditBefore time.Time
	// Concerns limits the purge to these concerns; zero means all. A
	// gateway whose concerns live in several stores purges each store only
	// of what it keeps there, so a store that also serves another gateway
	// (its audit log, say) keeps what is not this gateway's to remove.
	Concerns Concerns
}

// PurgeStats counts what Purge removed.
type PurgeStats struct {
	Records, Approvals, Audit int
}

// The gateway's durable state is split by concern, in the manner of
// hashicorp/raft's LogStore, StableStore and SnapshotStore: RecordStore
// (claims, leases, fencing tokens, outcomes), ApprovalStore, AuditLog,
// RateLimitStore and Purger. A store may implement any of them; Store is
// all of them in one, which every store of this module is, and
// Options.Stores takes each concern from a different place (the audit log
// elsewhere, rate limits in Redis while claims live in SQLite).
//
// The contract common to all of them: every method is safe for concurrent
// use, and each is atomic: no caller observes a half-applied method. Times
// come from the caller (the gateway's injected clock); a store never reads
// a clock of its own. ctx bounds the call; the gateway passes a
// context.WithoutCancel context for recording so that a caller's
// cancellation never loses an outcome. Returned values are copies the
// caller owns. ErrFenced, ErrNotFound and ErrApprovalState are answers, not
// failures: the method changed nothing. Any other error is a store
// failure; the gateway then acknowledges nothing to its caller. Several
// gateways may share one store (and thereby their claims, approvals and
// rate limits).
//
// storetest.Run is the conformance kit for a Store; storetest.RunRecords,
// RunApprovals, RunAudit and RunRateLimits check one concern each.

// RecordStore keeps the idempotency records: the claims of slots, their
// leases and fencing tokens, and the outcomes replayed to retries. A
// durable RecordStore returns from Claim, Complete, MarkUncertain and
// Release only once the change is durable.
type RecordStore interface {
	// Claim atomically claims req.Slot. Against the slot's record (a record
	// whose ExpiresAt <= req.Now counts as absent):
	//   - absent: a new in-progress record binding Key, Fingerprint and
	//     Slot.Principal, Attempts 1, with a fresh Token → ClaimAcquired;
	//   - Key differs (other arguments) → ClaimMismatch, whatever the state;
	//   - done → ClaimDone;
	//   - in progress with LeaseExpires > req.Now → ClaimInProgress;
	//   - in progress with an expired lease, or uncertain: with req.TakeOver
	//     it is taken over: in progress again with a new, larger Token, the
	//     new lease, ExpiresAt and Attempts+1 → ClaimAcquired with Previous
	//     set; without it → ClaimUncertain, nothing changed.
	// Of many concurrent claims of one free slot exactly one acquires it.
	Claim(ctx context.Context, req ClaimRequest) (Claim, error)

	// Complete records the outcome of the claim holding c.Token: the record
	// becomes done with c.Value or c.DomainError. It returns ErrFenced, and
	// changes nothing, unless the record is in progress with Token ==
	// c.Token and LeaseExpires > c.Now (a late completion from an expired or
	// superseded owner is rejected). A nil error means the outcome is
	// stored (durably, for a durable store).
	Complete(ctx context.Context, c Completion) error

	// MarkUncertain marks the claim holding token as uncertain with reason,
	// keeping its binding until expiresAt. Fencing as in Complete.
	MarkUncertain(ctx context.Context, slot Slot, token uint64, reason string, now, expiresAt time.Time) error

	// Release deletes the record of the claim holding token (the handler
	// failed before any effect, or the call awaits approval), so the slot
	// is free. Fencing as in Complete.
	Release(ctx context.Context, slot Slot, token uint64, now time.Time) error

	// Get returns the record with idempotency key key, or ErrNotFound.
	// Expired records may still be returned until purged.
	Get(ctx context.Context, key string) (Record, error)
}

// ApprovalStore keeps the approvals of calls that need a human's
// confirmation.
type ApprovalStore interface {
	// CreateApproval stores a pending approval a unless one with a.ID exists
	// whose ExpiresAt > a.CreatedAt, in which case it returns that one
	// unchanged. It returns the stored approval.
	CreateApproval(ctx context.Context, a Approval) (Approval, error)

	// GetApproval returns the approval with that ID, or ErrNotFound.
	GetApproval(ctx context.Context, id string) (Approval, error)

	// GrantApproval atomically marks the pending approval id as granted by
	// approver at now. It returns ErrNotFound when absent, and
	// ErrApprovalState (changing nothing) when it is already granted or
	// expired (ExpiresAt <= now). The policy checks (who may grant) are the
	// gateway's.
	GrantApproval(ctx context.Context, id, approver string, now time.Time) (Approval, error)
}

// AuditLog is the append-only log of every call's decision and outcome.
type AuditLog interface {
	// AppendAudit appends e to the audit log.
	AppendAudit(ctx context.Context, e AuditEntry) error

	// QueryAudit returns the entries matching q, oldest first (by Time,
	// then by insertion order), at most q.Limit (1000 when zero).
	QueryAudit(ctx context.Context, q AuditQuery) ([]AuditEntry, error)
}

// AuditedRecorder is an optional interface of a Store that keeps the
// records and the audit log together and can write a completion and the
// call's audit entry in one atomic step (sqlitestore: one group-committed
// transaction; redisstore: one script; pgstore: one statement). When the gateway's records and audit log are one such
// store, it records a completed call with CompleteAudited instead of
// Complete followed by AppendAudit, so the call waits for one durable
// write instead of two in a row.
type AuditedRecorder interface {
	// CompleteAudited is Complete(ctx, c) and, when that records the
	// outcome, AppendAudit(ctx, e), as one atomic write: a nil error means
	// both are stored (durably, for a durable store); ErrFenced or any
	// other error means neither is.
	CompleteAudited(ctx context.Context, c Completion, e AuditEntry) error
}

// RateLimitStore keeps the per principal×tool token buckets. Buckets in a
// shared store are shared by every gateway using it.
type RateLimitStore interface {
	// TakeToken takes one token from the bucket named bucket with limit l at
	// now. A bucket first seen is full (Burst tokens); it refills
	// continuously at Rate tokens per second up to Burst. With a token
	// available it returns ok; otherwise !ok and the wait until one token is
	// available: (1 - tokens) / Rate seconds. A zero Rate or Burst never
	// limits. Time going backwards refills nothing.
	TakeToken(ctx context.Context, bucket string, l RateLimit, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// Purger removes what has outlived its retention. A store holding several
// concerns implements it once for all of them.
type Purger interface {
	// Purge removes what r says has expired, of the concerns r.Concerns
	// names (all when zero), and reports the counts. In-progress records
	// are removed only when their ExpiresAt has passed too.
	Purge(ctx context.Context, r PurgeRequest) (PurgeStats, error)
}

// Store is every concern in one store: what New takes, and what each of
// this module's stores (memstore, sqlitestore, redisstore, pgstore) is.
type Store interface {
	RecordStore
	ApprovalStore
	AuditLog
	RateLimitStore
	Purger
}

// Stores takes some of the gateway's concerns from stores other than the
// one passed to New. A nil field means that store.
type Stores struct {
	Records    RecordStore
	Approvals  ApprovalStore
	Audit      AuditLog
	RateLimits RateLimitStore
}

// compose returns the Store the gateway works on: base itself when parts
// names nothing else, else a Store that sends each concern to its part.
func compose(base Store, parts Stores) (Store, error) {
	if base == nil && (parts.Records == nil || parts.Approvals == nil || parts.Audit == nil || parts.RateLimits == nil) {
		return nil, fmt.Errorf("%w: nil store, and Options.Stores does not name every concern", ErrInvalidOptions)
	}
	c := &composite{RecordStore: parts.Records, ApprovalStore: parts.Approvals, AuditLog: parts.Audit, RateLimitStore: parts.RateLimits}
	if c.RecordStore == nil {
		c.RecordStore = base
	}
	if c.ApprovalStore == nil {
		c.ApprovalStore = base
	}
	if c.AuditLog == nil {
		c.AuditLog = base
	}
	if c.RateLimitStore == nil {
		c.RateLimitStore = base
	}
	if base != nil && same(c.RecordStore, base) && same(c.ApprovalStore, base) && same(c.AuditLog, base) && same(c.RateLimitStore, base) {
		return base, nil
	}
	return c, nil
}

// composite sends each concern to its own store.
type composite struct {
	RecordStore
	ApprovalStore
	AuditLog
	RateLimitStore
}

// Purge purges each distinct store that is a Purger of the concerns it
// holds for this gateway, and sums the counts. A store that is no Purger
// keeps what it holds (its owner purges it).
func (c *composite) Purge(ctx context.Context, r PurgeRequest) (PurgeStats, error) {
	type part struct {
		store    any
		concerns Concerns
	}
	var parts []part
	add := func(s any, cs Concerns) {
		if !r.Concerns.Has(cs) {
			return
		}
		for i := range parts {
			if same(parts[i].store, s) {
				parts[i].concerns |= cs
				return
			}
		}
		parts = append(parts, part{s, cs})
	}
	add(c.RecordStore, ConcernRecords)
	add(c.ApprovalStore, ConcernApprovals)
	add(c.AuditLog, ConcernAudit)
	add(c.RateLimitStore, ConcernRateLimits)
	var total PurgeStats
	for _, p := range parts {
		pu, ok := p.store.(Purger)
		if !ok {
			continue
		}
		req := r
		req.Concerns = p.concerns
		st, err := pu.Purge(ctx, req)
		if err != nil {
			return total, err
		}
		total.Records += st.Records
		total.Approvals += st.Approvals
		total.Audit += st.Audit
	}
	return total, nil
}

// same reports whether a and b are the same store value. Values of
// incomparable types are never the same.
func same(a, b any) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta != nil && ta.Comparable() && a == b
}

// Clock tells the gateway the time. It is injected so that the decision
// core is deterministic and tests can move time by hand. Implementations
// must be safe for concurrent use.
type Clock interface {
	Now() time.Time
}

// systemClock is the wall clock, the Clock of a nil [Options.Clock].
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }
