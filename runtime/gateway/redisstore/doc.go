// Package redisstore is a store.Store in Redis (github.com/redis/go-redis/v9),
// for several gateway processes that must share one exactly-once guarantee,
// one set of approvals, one audit log and one set of rate limits.
//
//	st, err := redisstore.Open(ctx, "redis://127.0.0.1:6379/0", nil)
//	if err != nil { ... }
//	defer st.Close()
//	gw, err := gateway.New(reg, st, &gateway.Options{...})
//
// Atomicity: every method that reads and then writes (a claim, a fenced
// completion, uncertain mark or release, an approval's creation or grant, a
// token take, a purge) is one Lua script, which Redis runs alone: of many
// concurrent claims of one free slot, in one process or many, exactly one
// acquires it, and a completion is written only if the record is still in
// progress under the caller's fencing token with a live lease.
//
// Round trips: the scripts of concurrent callers (claims, completions,
// audit appends, token takes) are sent together, whatever arrived during
// the previous round trip as one pipeline of EVALSHAs ([Options.MaxPipeline]
// bounds a batch), so a busy gateway pays about one write and one read
// system call per batch instead of per call. Redis still runs each script
// alone, in order; a server that forgot the scripts gets them again. A
// completed call's outcome and audit entry are one script
// (CompleteAudited, store.AuditedRecorder), so a call is two scripts.
//
// The audit log is a hash chain (store.AuditChain): the append script
// chains the entry after the head and hashes the link in Lua (SHA-256 over
// LuaBitOp), so the entries of every client form one chain in the order
// Redis runs the scripts. The chain is a second sorted set (by sequence
// number) beside the time-ordered one that QueryAudit reads.
//
// Fencing tokens come from one INCR counter, so they grow strictly across
// all claims and processes; a missing counter (a new store, or a server
// that lost its data) is seeded with the caller's time in microseconds, so
// tokens keep growing across a data loss too. Times are the caller's (the gateway's clock),
// passed to the scripts as zero-padded Unix nanoseconds and compared as
// strings, exactly; the store never reads Redis's clock to decide anything.
// Redis's expiry is used only to let go of keys that are past their end
// anyway: a record or approval gets a TTL of ExpiresAt minus the caller's
// now (so it also leaves Redis at its retention deadline without a purge),
// and a token bucket a minute after it would be full again.
//
// Durability is Redis's: with the default snapshotting an acknowledged
// claim can be lost when the server dies, and a lost claim means a call may
// run again. Run Redis with appendonly yes and appendfsync always when the
// tools' own idempotency (the key the gateway passes them) is not enough;
// see docs/operations.md.
//
// Purge is one script, so Redis serves nothing else while it runs: purge
// often enough that each run removes a bounded number of keys (records and
// approvals also leave by their TTL without a purge).
//
// Redis Cluster is not supported (a script touches keys in several hash
// slots); use one server or a primary with replicas. [Options.Prefix]
// namespaces the keys, so several stores can share one database.
package redisstore
