package sqlitestore

import "github.com/toolgate/toolgate/runtime/gateway/auditchain"

// migrations[i] takes the schema from user_version i to i+1. Append only:
// a released step is never edited, so every existing database can be
// brought forward on open.
//
// Times are Unix nanoseconds (INTEGER); the zero time.Time is stored as
// zeroTime so that it sorts before every real instant.
var migrations = []string{`
CREATE TABLE records (
	tenant        TEXT    NOT NULL,
	session_id    TEXT    NOT NULL,
	step          INTEGER NOT NULL,
	tool          TEXT    NOT NULL,
	principal     TEXT    NOT NULL,
	key           TEXT    NOT NULL,
	fingerprint   TEXT    NOT NULL,
	state         TEXT    NOT NULL CHECK (state IN ('in_progress', 'done', 'uncertain')),
	token         INTEGER NOT NULL,
	lease_expires INTEGER NOT NULL,
	value         BLOB,
	domain_error  BLOB,
	reason        TEXT    NOT NULL DEFAULT '',
	attempts      INTEGER NOT NULL,
	created       INTEGER NOT NULL,
	updated       INTEGER NOT NULL,
	expires       INTEGER NOT NULL,
	PRIMARY KEY (tenant, session_id, step, tool)
) STRICT, WITHOUT ROWID;
-- No index by key: keys are random hashes, so such an index would dirty one
-- more page per claim in every commit. Get (an operator's lookup, never on
-- the call path) scans instead.
CREATE INDEX records_by_expiry ON records(expires);

-- The fencing counter: every acquiring claim takes the next value, so a
-- token is never reused, even for a slot that was released and claimed again.
CREATE TABLE counters (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO counters(name, value) VALUES ('fencing', 0);

CREATE TABLE approvals (
	id          TEXT PRIMARY KEY,
	tenant      TEXT    NOT NULL,
	session_id  TEXT    NOT NULL,
	step        INTEGER NOT NULL,
	tool        TEXT    NOT NULL,
	key         TEXT    NOT NULL,
	fingerprint TEXT    NOT NULL,
	requester   TEXT    NOT NULL,
	arguments   BLOB,
	granted     INTEGER NOT NULL,
	approver    TEXT    NOT NULL DEFAULT '',
	created     INTEGER NOT NULL,
	granted_at  INTEGER NOT NULL,
	expires     INTEGER NOT NULL
) STRICT;
CREATE INDEX approvals_by_expiry ON approvals(expires);

CREATE TABLE audit (
	seq         INTEGER PRIMARY KEY,
	at          INTEGER NOT NULL,
	tenant      TEXT    NOT NULL,
	principal   TEXT    NOT NULL,
	session_id  TEXT    NOT NULL,
	step        INTEGER NOT NULL,
	tool        TEXT    NOT NULL,
	key         TEXT    NOT NULL,
	decision    TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	outcome     TEXT    NOT NULL,
	approval_id TEXT    NOT NULL,
	latency     INTEGER NOT NULL
) STRICT;
CREATE INDEX audit_by_time ON audit(at, seq);
-- No index by key or principal: every call appends here, and each index
-- costs pages in every commit. Audit queries are an operator's, rare, and
-- bounded by time.

CREATE TABLE buckets (
	name    TEXT PRIMARY KEY,
	tokens  REAL    NOT NULL,
	updated INTEGER NOT NULL,
	rate    REAL    NOT NULL,
	burst   INTEGER NOT NULL
) STRICT;
`, `
-- 2: the worker acting for a principal, and the untrusted output a
-- conversation had read, shown in approvals and the audit.
ALTER TABLE approvals ADD COLUMN taint TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN actor TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN taint TEXT NOT NULL DEFAULT '';
`, `
-- 3: the slot belongs to its principal (docs/design.md invariant 4): the
-- primary key gains the principal, so two principals of a tenant using the
-- same session step have two slots. SQLite cannot change a primary key in
-- place: the table is rebuilt, every row kept (each was claimed by the
-- principal it names, so it stays that principal's slot). Approvals record
-- the slot's principal too; a pending one was requested by it.
CREATE TABLE records_v3 (
	tenant        TEXT    NOT NULL,
	principal     TEXT    NOT NULL,
	session_id    TEXT    NOT NULL,
	step          INTEGER NOT NULL,
	tool          TEXT    NOT NULL,
	key           TEXT    NOT NULL,
	fingerprint   TEXT    NOT NULL,
	state         TEXT    NOT NULL CHECK (state IN ('in_progress', 'done', 'uncertain')),
	token         INTEGER NOT NULL,
	lease_expires INTEGER NOT NULL,
	value         BLOB,
	domain_error  BLOB,
	reason        TEXT    NOT NULL DEFAULT '',
	attempts      INTEGER NOT NULL,
	created       INTEGER NOT NULL,
	updated       INTEGER NOT NULL,
	expires       INTEGER NOT NULL,
	PRIMARY KEY (tenant, principal, session_id, step, tool)
) STRICT, WITHOUT ROWID;
INSERT INTO records_v3(tenant, principal, session_id, step, tool, key, fingerprint, state, token,
	lease_expires, value, domain_error, reason, attempts, created, updated, expires)
SELECT tenant, principal, session_id, step, tool, key, fingerprint, state, token,
	lease_expires, value, domain_error, reason, attempts, created, updated, expires FROM records;
DROP TABLE records;
ALTER TABLE records_v3 RENAME TO records;
CREATE INDEX records_by_expiry ON records(expires);
ALTER TABLE approvals ADD COLUMN principal TEXT NOT NULL DEFAULT '';
UPDATE approvals SET principal = requester;
`, `
-- 4: the audit log is a hash chain (store.AuditChain). Each entry gets
-- its chain version, the hash of the entry before it and its own; the
-- sequence number it already had is its place in the chain, now assigned
-- by the store from audit_chain's head inside the write that appends it.
-- Entries written before this step are not chained: the anchor is set past
-- them, so verification starts after them.
ALTER TABLE audit ADD COLUMN prev TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN hash TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN v INTEGER NOT NULL DEFAULT 0;
CREATE TABLE audit_chain (
	id          INTEGER PRIMARY KEY CHECK (id = 1),
	head_seq    INTEGER NOT NULL,
	head_hash   TEXT    NOT NULL,
	anchor_seq  INTEGER NOT NULL,
	anchor_hash TEXT    NOT NULL
) STRICT;
INSERT INTO audit_chain(id, head_seq, head_hash, anchor_seq, anchor_hash)
	SELECT 1, coalesce(max(seq), 0), '` + genesis + `', coalesce(max(seq), 0), '` + genesis + `' FROM audit;
CREATE TABLE audit_checkpoints (
	seq    INTEGER PRIMARY KEY,
	hash   TEXT    NOT NULL,
	at     INTEGER NOT NULL,
	key_id TEXT    NOT NULL,
	sig    TEXT    NOT NULL
) STRICT;
`, `
-- 5: an approval binds the tool's definition it was requested for
-- (gateway.DefinitionHash). An approval stored before has none ('') and
-- is not bound to one.
ALTER TABLE approvals ADD COLUMN definition TEXT NOT NULL DEFAULT '';
`, `
-- 6: a record names the claim that acquired it (store.ClaimRequest.Owner),
-- so that a gateway whose claim's answer was lost can find its claim. A
-- record stored before has none ('').
ALTER TABLE records ADD COLUMN owner TEXT NOT NULL DEFAULT '';
`}

const genesis = auditchain.Genesis
