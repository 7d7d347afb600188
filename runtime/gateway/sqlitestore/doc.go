// Package sqlitestore is the embedded default store.Store: one SQLite file
// (modernc.org/sqlite, pure Go, no cgo) holding the idempotency records,
// approvals, the audit log and the rate-limit buckets.
//
//	st, err := sqlitestore.Open(ctx, filepath.Join(dir, "gateway.db"), nil)
//	if err != nil { ... }
//	defer st.Close()
//	gw, err := gateway.New(reg, st, &gateway.Options{...})
//
// Durability: the database runs in WAL mode with synchronous=FULL, so every
// method that returns nil has had its transaction fsynced to the WAL: an
// acknowledged claim or recorded outcome survives kill -9 and power loss.
//
// Atomicity and concurrency: all writes go through one writer connection
// whose transactions begin IMMEDIATE, so each method's read-check-write
// (a claim, a fenced completion, a grant, a token take) runs serially and
// atomically, also against other processes opening the same file (they wait
// up to [Options.BusyTimeout] for the write lock). Reads (Get, GetApproval,
// QueryAudit) use a pool of reader connections and see committed data only.
//
// Group commit: writes that arrive while a transaction is being committed
// are batched into the next transaction, each inside its own savepoint (a
// failing write rolls back alone), so N concurrent callers share one fsync.
// The writer waits, boundedly and without a timer, for the writes of the
// callers its last commit woke (see sqliteutil.Writer). A method returns
// only after the batch holding its write has committed; a failed batch
// acknowledges no one. The hot path is short: a fresh claim is one INSERT
// … ON CONFLICT DO NOTHING (a taken slot reads its record and decides), a
// completion one fenced UPDATE, and the audit entries appended while a
// batch fills are written by one multi-row INSERT. CompleteAudited
// (store.AuditedRecorder) writes a completion and its call's audit entry
// in one write, so a gateway over this store waits for two commits per
// call (the claim, the outcome with its entry), not three.
//
// The audit log is a hash chain (store.AuditChain): the entries of a
// batch are chained after the head row (audit_chain) inside the batch's
// transaction, so every process sharing the file writes one chain. The
// canonical body's digest is computed by the caller; the writer only
// hashes the link.
//
// Fencing tokens come from one counter in the database (read when a batch
// begins under the write lock, written back before it commits), so they
// grow strictly across all claims, including a slot released and claimed
// again, and stay unique between processes sharing the file.
//
// Indexes are few on purpose: every commit writes each page it dirtied to
// the WAL, so records have no index by idempotency key (Get, an operator's
// lookup, scans) and the audit log is indexed by time only.
// Times are stored as Unix nanoseconds and returned in UTC; the store never
// reads a clock (the gateway's injected clock decides).
//
// The schema is created and migrated on Open from migrations embedded in
// the package (PRAGMA user_version counts the applied steps); a file
// written by a newer schema is refused. [Options.ReadOnly] migrates
// nothing: it refuses a file of an older schema with [ErrOlderSchema].
package sqlitestore
