// Package pgstore is a store.Store in PostgreSQL (github.com/jackc/pgx/v5,
// pgxpool), for several gateway processes that must share one exactly-once
// guarantee, one set of approvals, one audit log and one set of rate limits,
// on a database operators already back up and replicate.
//
//	st, err := pgstore.Open(ctx, "postgres://toolgate@db:5432/app", nil)
//	if err != nil { ... }
//	defer st.Close()
//	gw, err := gateway.New(reg, st, &gateway.Options{...})
//
// Atomicity: a claim of a free slot is one INSERT … ON CONFLICT DO NOTHING
// (of many concurrent claims, in one process or many, exactly one inserts);
// a claim of a taken slot locks its row (SELECT … FOR UPDATE) and decides in
// that transaction. A completion and its call's audit entry
// (CompleteAudited, store.AuditedRecorder) are one statement: the fenced
// UPDATE in a WITH clause and an INSERT of the entry that reads its result,
// so the entry lands exactly when the completion does, in one commit.
// Completions, uncertain marks and releases are single
// UPDATE/DELETE statements whose WHERE clause is the fence (in progress,
// same token, live lease). An approval's creation and grant, and a token
// take (refill, take, report) are single upserts/updates on one row. Every
// method is therefore atomic under PostgreSQL's default READ COMMITTED.
//
// Durability is PostgreSQL's: with synchronous_commit on (the default) a
// method returns only after its commit is flushed to the WAL.
//
// Fencing tokens come from one sequence, so they grow strictly across all
// claims and processes. Times are the caller's (the gateway's clock), stored
// as exact Unix nanoseconds (bigint); the store never reads the database's
// clock to decide anything.
//
// The audit log is a hash chain (store.AuditChain): an append moves the
// chain's head row (audit_chain) and inserts the entry chained after it in
// one statement, hashing with PostgreSQL's sha256, so appends from every
// process form one chain in commit order. The head's row lock is held to
// each append's commit: audit appends to one database are serialized.
//
// Open creates the schema ([Options.Schema], "toolgate" by default) and
// applies the embedded migrations in one transaction under an advisory
// lock, so several processes may start at once; a schema written by a newer
// program is refused. Pool size and timeouts come from the URL (pgxpool's
// pool_max_conns, connect_timeout, …).
package pgstore
