// Package store defines what the gateway keeps durably and the interfaces
// a store implements, as database/sql/driver does for database/sql: the
// gateway ([github.com/toolgate/toolgate/runtime/gateway]) calls these
// interfaces, and a store driver (memstore, sqlitestore, redisstore,
// pgstore) implements them. This package imports nothing of the gateway,
// and neither does a driver.
//
// The data model is the claim protocol of one idempotency slot ([Slot],
// [ClaimRequest], [Claim], [Completion], [Record]), the approvals of calls
// that need a human ([Approval]), the audit log and its hash chain
// ([AuditEntry], [AuditChain]) and the rate-limit buckets ([RateLimit]).
// Its JSON field names and string values are what the stores' columns,
// the audit export and the audit hash chain hold: they do not change.
//
// The durable state is split by concern, in the manner of hashicorp/raft's
// LogStore, StableStore and SnapshotStore: [RecordStore] (claims, leases,
// fencing tokens, outcomes), [ApprovalStore], [AuditLog], [RateLimitStore]
// and [Purger]. A store may implement any of them; [Store] is all of them
// in one, which every store of this module is, and the gateway's
// Options.Stores takes each concern from a different place (the audit log
// elsewhere, rate limits in Redis while claims live in SQLite).
//
// The contract common to all of them: every method is safe for concurrent
// use, and each is atomic: no caller observes a half-applied method. Times
// come from the caller (the gateway's injected clock); a store never reads
// a clock of its own. ctx bounds the call; the gateway passes a
// [context.WithoutCancel] context for recording so that a caller's
// cancellation never loses an outcome. Returned values are copies the
// caller owns. [ErrFenced], [ErrNotFound] and [ErrApprovalState] are
// answers, not failures: the method changed nothing. Any other error is a
// store failure; the gateway then acknowledges nothing to its caller.
//
// Every string the gateway passes a store (a slot's names, a bucket's
// name, an approval's and an audit entry's text) is valid UTF-8 without
// NUL bytes, which PostgreSQL's text columns require; tenants, principals
// and session IDs hold no control characters either, so a store may join
// them with one (redisstore's keys use U+001F). A store need not check.
// Several gateways may share one store (and thereby their claims,
// approvals and rate limits).
//
// Package runtime/gateway/storetest is the conformance kit: storetest.Run
// checks a [Store], and storetest.RunRecords, RunApprovals, RunAudit and
// RunRateLimits check one concern each. Package runtime/gateway/memstore is
// the in-memory reference.
package store

import (
	"context"
	"encoding/json"
	"errors"
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
	Attempts int `json:"attempts"`
	// Owner is the [ClaimRequest.Owner] of the claim that last acquired
	// the slot; empty in a record written before stores kept it.
	Owner     string    `json:"owner,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// ExpiresAt is when the record may be purged; a record past it is
	// treated as absent by [RecordStore.Claim].
	ExpiresAt time.Time `json:"expires_at"`
}

// ClaimRequest asks a Store to claim a slot for one execution.
type ClaimRequest struct {
	Slot Slot
	// Principal is the claiming principal's ID. It must equal
	// [Slot.Principal]; stores bind the record to [Slot.Principal].
	Principal   string
	Key         string
	Fingerprint string
	// Now is the gateway clock's time of the claim.
	Now time.Time
	// LeaseExpires is the end of the lease a successful claim gets.
	LeaseExpires time.Time
	// ExpiresAt is the new record's retention deadline.
	ExpiresAt time.Time
	// Owner names this one claim (the gateway draws a fresh random one
	// for each): a claim that acquires the slot records it as
	// [Record.Owner], so that a caller whose Claim returned an error can
	// tell with [RecordStore.Get] whether its claim took the slot after
	// all (the store committed it, and its answer was lost).
	Owner string
	// TakeOver allows the claim to take over an uncertain record or an
	// expired lease (the gateway's UncertainRerun policy). When false such
	// a slot yields [ClaimUncertain].
	TakeOver bool
}

// ClaimStatus is what a claim found.
type ClaimStatus int

// Claim statuses.
const (
	// ClaimAcquired: the caller now owns the slot with [Claim.Token] and
	// must finish with Complete, MarkUncertain or Release. [Record.Attempts]
	// is above 1 when it took over an uncertain record or an expired lease.
	ClaimAcquired ClaimStatus = iota + 1
	// ClaimInProgress: another owner holds a live lease (Record shows it).
	ClaimInProgress
	// ClaimDone: the call completed; Record holds the outcome to replay.
	ClaimDone
	// ClaimUncertain: the record is uncertain (or its in-progress lease
	// expired) and the request did not ask to take it over
	// ([ClaimRequest.TakeOver] false); nothing changed.
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
// and argument fingerprint (docs/design.md invariant 6), and the tool's
// definition the approver was shown.
type Approval struct {
	ID          string          `json:"approval_id"`
	Slot        Slot            `json:"slot"`
	Key         string          `json:"key"`
	Fingerprint string          `json:"fingerprint"`
	Requester   string          `json:"requester"`       // principal ID of the caller
	Arguments   json.RawMessage `json:"arguments"`       // canonical JSON, shown to the approver
	Taint       string          `json:"taint,omitempty"` // the untrusted output that made it needed, if any
	// Definition is the hash of the tool's definition when the approval
	// was requested (gateway.DefinitionHash): the approval lets the call
	// run only while the tool still has that definition. Empty in an
	// approval stored before approvals recorded it; such an approval is
	// not bound to a definition.
	Definition string `json:"definition,omitempty"`
	Granted    bool   `json:"granted"`
	// Denied says an approver refused the call ([ApprovalDenier]): it
	// will not run under this approval, and a re-send of it is refused
	// until the approval expires.
	Denied    bool      `json:"denied,omitempty"`
	Approver  string    `json:"approver,omitempty"` // principal ID of the one who granted or denied it
	CreatedAt time.Time `json:"created_at"`
	GrantedAt time.Time `json:"granted_at,omitzero"`
	DeniedAt  time.Time `json:"denied_at,omitzero"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Decided reports whether an approver granted or denied a.
func (a *Approval) Decided() bool { return a.Granted || a.Denied }

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

// The outcomes, by the gateway's error_type of the answer where there is one.
const (
	OutcomeOK                   Outcome = "ok"                    // the tool ran and returned a result
	OutcomeReplayed             Outcome = "replayed"              // a recorded outcome sent again (Cached)
	OutcomeDomainError          Outcome = "domain_error"          // the tool ran and returned a [tools.DomainError]
	OutcomeUnauthenticated      Outcome = "unauthenticated"       // UNAUTHENTICATED
	OutcomeDenied               Outcome = "denied"                // PERMISSION_DENIED
	OutcomeUnknownTool          Outcome = "unknown_tool"          // UNKNOWN_TOOL
	OutcomeInvalid              Outcome = "invalid"               // VALIDATION_ERROR
	OutcomeRateLimited          Outcome = "rate_limited"          // RATE_LIMITED
	OutcomeInProgress           Outcome = "in_progress"           // IN_PROGRESS
	OutcomeMismatch             Outcome = "mismatch"              // IDEMPOTENCY_MISMATCH
	OutcomeConfirmationRequired Outcome = "confirmation_required" // CONFIRMATION_REQUIRED
	OutcomeNoEffect             Outcome = "no_effect"             // DOWNSTREAM_FAILURE before any effect
	OutcomeUncertain            Outcome = "uncertain"             // DOWNSTREAM_FAILURE after a possible effect, or OUTCOME_UNCERTAIN
	OutcomeInternal             Outcome = "internal"              // any other error (INTERNAL_ERROR, a store failure)
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
	// ConcernRecords: idempotency records ([RecordStore]).
	ConcernRecords Concerns = 1 << iota
	// ConcernApprovals: approvals ([ApprovalStore]).
	ConcernApprovals
	// ConcernAudit: the audit log ([AuditLog]).
	ConcernAudit
	// ConcernRateLimits: token buckets ([RateLimitStore]).
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

// RecordStore keeps the idempotency records: the claims of slots, their
// leases and fencing tokens, and the outcomes replayed to retries. A
// durable RecordStore returns from Claim, Complete, MarkUncertain and
// Release only once the change is durable.
type RecordStore interface {
	// Claim atomically claims req.Slot. Against the slot's record (a record
	// whose ExpiresAt <= req.Now counts as absent):
	//   - absent: a new in-progress record binding Key, Fingerprint and
	//     Slot.Principal, Attempts 1, Owner, with a fresh Token → ClaimAcquired;
	//   - Key differs (other arguments) → ClaimMismatch, whatever the state;
	//   - done → ClaimDone;
	//   - in progress with LeaseExpires > req.Now → ClaimInProgress;
	//   - in progress with an expired lease, or uncertain: with req.TakeOver
	//     it is taken over: in progress again with a new, larger Token, the
	//     new lease, ExpiresAt, Owner and Attempts+1 → ClaimAcquired with Previous
	//     set; without it → ClaimUncertain, nothing changed.
	// Of many concurrent claims of one free slot exactly one acquires it.
	Claim(ctx context.Context, req ClaimRequest) (Claim, error)

	// Complete records the outcome of the claim holding c.Token: the record
	// becomes done with c.Value or c.DomainError. It returns [ErrFenced], and
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

	// Get returns the record with idempotency key key, or [ErrNotFound].
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

	// GetApproval returns the approval with that ID, or [ErrNotFound].
	GetApproval(ctx context.Context, id string) (Approval, error)

	// GrantApproval atomically marks the pending approval id as granted by
	// approver at now. It returns [ErrNotFound] when absent, and
	// [ErrApprovalState] (changing nothing) when it is already granted,
	// denied or expired (ExpiresAt <= now). The policy checks (who may
	// grant) are the gateway's.
	GrantApproval(ctx context.Context, id, approver string, now time.Time) (Approval, error)
}

// ApprovalDenier is an optional interface of a Store that records an
// approver's refusal of a pending approval, so that the call it covers is
// refused, not asked about again (gateway.Gateway.Deny). The four stores
// of this module implement it; the gateway answers a denial on a store
// without it with an error saying so.
type ApprovalDenier interface {
	// DenyApproval atomically marks the pending approval id as denied by
	// approver at now, with [GrantApproval]'s errors: [ErrNotFound], and
	// [ErrApprovalState] when it is already granted, denied or expired.
	DenyApproval(ctx context.Context, id, approver string, now time.Time) (Approval, error)
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
// transaction; redisstore: one script; pgstore: one statement). When the
// gateway's records and audit log are one such store, it records a
// completed call with CompleteAudited instead of Complete followed by
// AppendAudit, so the call waits for one durable write instead of two in
// a row.
type AuditedRecorder interface {
	// CompleteAudited is Complete(ctx, c) and, when that records the
	// outcome, AppendAudit(ctx, e), as one atomic write: a nil error means
	// both are stored (durably, for a durable store); [ErrFenced] or any
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

// Store is every concern in one store: what the gateway's New takes, and what each of
// this module's stores (memstore, sqlitestore, redisstore, pgstore) is.
type Store interface {
	RecordStore
	ApprovalStore
	AuditLog
	RateLimitStore
	Purger
}

// AuditAnchor is where the chain held by a store begins: the sequence
// number and hash of the last entry no longer held, because the retention
// purge removed it (or it was written before the store kept a chain). The
// first entry held has Seq = Anchor.Seq+1 and Prev = Anchor.Hash. A store
// that never pruned has the anchor {0, auditchain.Genesis}.
type AuditAnchor struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// AuditHeader is an [AuditChain] that keeps its head (the sequence number
// and hash of the last entry appended) apart from the entries, moved by the
// same write that appends one: the SQLite, PostgreSQL and Redis stores. It
// lets verification find entries removed from the end of the log, which
// the entries alone cannot show.
type AuditHeader interface {
	// AuditHead returns the chain's head: the anchor's values while the
	// chain has had no entry appended.
	AuditHead(ctx context.Context) (AuditAnchor, error)
}

// AuditCheckpoint is an Ed25519 signature over the chain's state at one
// entry: whoever holds the public key can check that the entries up to Seq
// are those the key's holder saw, so a chain rewritten after it (every hash
// recomputed) or a tail forged under a made-up checkpoint is found out.
type AuditCheckpoint struct {
	Seq  uint64    `json:"seq"`
	Hash string    `json:"hash"` // the hash of entry [AuditCheckpoint.Seq]
	Time time.Time `json:"time"` // when it was signed
	// KeyID names the signing key: the first 16 hex digits of the SHA-256
	// of its public key.
	KeyID string `json:"key_id"`
	// Sig is the standard base64 of the Ed25519 signature of
	// AuditCheckpointMessage.
	Sig string `json:"sig"`
}

// AuditChain is an [AuditLog] that keeps its entries in a hash chain: every
// store of this module is one. Verification and export read it in sequence
// order.
type AuditChain interface {
	AuditLog
	// ReadAuditChain returns at most limit entries with Seq > after, in
	// sequence order, with their chain fields as stored.
	ReadAuditChain(ctx context.Context, after uint64, limit int) ([]AuditEntry, error)
	// LastAudit returns the chain's last entry (the highest Seq), or
	// [ErrNotFound] when the log holds none.
	LastAudit(ctx context.Context) (AuditEntry, error)
	// AuditAnchor returns the chain's anchor.
	AuditAnchor(ctx context.Context) (AuditAnchor, error)
	// AddAuditCheckpoint stores c (replacing one at the same Seq).
	AddAuditCheckpoint(ctx context.Context, c AuditCheckpoint) error
	// AuditCheckpoints returns the stored checkpoints in sequence order.
	// The retention purge removes those at or before the anchor.
	AuditCheckpoints(ctx context.Context) ([]AuditCheckpoint, error)
}

// Store errors. A Store returns them (possibly wrapped) so that the gateway
// and the conformance kit can branch on them with [errors.Is].
var (
	// ErrFenced: a completion, release or uncertain mark came from an owner
	// whose claim is no longer current (another owner took over, the lease
	// expired, or the record is not in progress).
	ErrFenced = errors.New("store: fenced: claim is no longer held")
	// ErrNotFound: no record or approval with that key or ID.
	ErrNotFound = errors.New("store: not found")
	// ErrApprovalState: the approval cannot be granted (already granted,
	// expired).
	ErrApprovalState = errors.New("store: approval cannot be granted in its state")
)

// ErrInvalidOptions is wrapped by the error a store driver's constructor
// returns for options it cannot use, naming the field, so that a program
// opening a store tells a configuration mistake from an unreachable
// server.
var ErrInvalidOptions = errors.New("store: invalid options")
