package gateway

import (
	"context"
	"time"
)

// AuditAnchor is where the chain held by a store begins: the sequence
// number and hash of the last entry no longer held, because the retention
// purge removed it (or it was written before the store kept a chain). The
// first entry held has Seq = Anchor.Seq+1 and Prev = Anchor.Hash. A store
// that never pruned has the anchor {0, auditchain.Genesis}.
type AuditAnchor struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
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

// AuditChain is an AuditLog that keeps its entries in a hash chain: every
// store of this module is one. Verification and export read it in sequence
// order.
type AuditChain interface {
	AuditLog
	// ReadAuditChain returns at most limit entries with Seq > after, in
	// sequence order, with their chain fields as stored.
	ReadAuditChain(ctx context.Context, after uint64, limit int) ([]AuditEntry, error)
	// LastAudit returns the chain's last entry (the highest Seq), or
	// ErrNotFound when the log holds none.
	LastAudit(ctx context.Context) (AuditEntry, error)
	// AuditAnchor returns the chain's anchor.
	AuditAnchor(ctx context.Context) (AuditAnchor, error)
	// AddAuditCheckpoint stores c (replacing one at the same Seq).
	AddAuditCheckpoint(ctx context.Context, c AuditCheckpoint) error
	// AuditCheckpoints returns the stored checkpoints in sequence order.
	// The retention purge removes those at or before the anchor.
	AuditCheckpoints(ctx context.Context) ([]AuditCheckpoint, error)
}
