package pgstore

import "github.com/toolgate/toolgate/runtime/gateway/auditchain"

// migrations[i] takes the schema from version i to i+1. Append only: a
// released step is never edited, so every existing database can be brought
// forward on open. Open applies them under a transaction-scoped advisory
// lock, so several processes can start at once.
//
// Times are Unix nanoseconds (bigint), exact; the zero time.Time is stored
// as zeroTime so that it sorts before every real instant.
var migrations = []string{`
CREATE TABLE records (
	tenant        text    NOT NULL,
	session_id    text    NOT NULL,
	step          integer NOT NULL,
	tool          text    NOT NULL,
	principal     text    NOT NULL,
	key           text    NOT NULL,
	fingerprint   text    NOT NULL,
	state         text    NOT NULL CHECK (state IN ('in_progress', 'done', 'uncertain')),
	token         bigint  NOT NULL,
	lease_expires bigint  NOT NULL,
	value         bytea,
	domain_error  bytea,
	reason        text    NOT NULL DEFAULT '',
	attempts      integer NOT NULL,
	created       bigint  NOT NULL,
	updated       bigint  NOT NULL,
	expires       bigint  NOT NULL,
	PRIMARY KEY (tenant, session_id, step, tool)
);
CREATE INDEX records_by_key ON records(key);
CREATE INDEX records_by_expiry ON records(expires);

-- The fencing counter: every acquiring claim takes the next value, so a
-- token is never reused, even for a slot released and claimed again.
CREATE SEQUENCE fencing;

CREATE TABLE approvals (
	id          text PRIMARY KEY,
	tenant      text    NOT NULL,
	session_id  text    NOT NULL,
	step        integer NOT NULL,
	tool        text    NOT NULL,
	key         text    NOT NULL,
	fingerprint text    NOT NULL,
	requester   text    NOT NULL,
	arguments   bytea,
	taint       text    NOT NULL,
	granted     boolean NOT NULL,
	approver    text    NOT NULL,
	created     bigint  NOT NULL,
	granted_at  bigint  NOT NULL,
	expires     bigint  NOT NULL
);
CREATE INDEX approvals_by_expiry ON approvals(expires);

CREATE TABLE audit (
	seq         bigserial PRIMARY KEY,
	at          bigint  NOT NULL,
	tenant      text    NOT NULL,
	principal   text    NOT NULL,
	actor       text    NOT NULL,
	taint       text    NOT NULL,
	session_id  text    NOT NULL,
	step        integer NOT NULL,
	tool        text    NOT NULL,
	key         text    NOT NULL,
	decision    text    NOT NULL,
	reason      text    NOT NULL,
	outcome     text    NOT NULL,
	approval_id text    NOT NULL,
	latency     bigint  NOT NULL
);
CREATE INDEX audit_by_time ON audit(at, seq);

CREATE TABLE buckets (
	name    text PRIMARY KEY,
	tokens  double precision NOT NULL,
	updated bigint           NOT NULL,
	rate    double precision NOT NULL,
	burst   integer          NOT NULL,
	took    boolean          NOT NULL
);
`, `
-- 2: the slot belongs to its principal (docs/design.md invariant 4): the
-- primary key gains the principal, so two principals of a tenant using the
-- same session step have two slots. Every row stays usable: each was
-- claimed by the principal it names, so it stays that principal's slot.
-- Approvals record the slot's principal too; a pending one was requested
-- by it.
ALTER TABLE records DROP CONSTRAINT records_pkey,
	ADD PRIMARY KEY (tenant, principal, session_id, step, tool);
ALTER TABLE approvals ADD COLUMN principal text NOT NULL DEFAULT '';
UPDATE approvals SET principal = requester;
`, `
-- 3: the audit log is a hash chain (store.AuditChain). audit_chain's one
-- row is the chain's head and anchor; an append updates it (taking its row
-- lock, so appends from every process are chained one after another, in
-- the order they commit) and inserts the entry in the same statement.
-- Entries written before this step are not chained: the anchor is set past
-- them, so verification starts after them.
ALTER TABLE audit ADD COLUMN prev text NOT NULL DEFAULT '',
	ADD COLUMN hash text NOT NULL DEFAULT '',
	ADD COLUMN v integer NOT NULL DEFAULT 0;
CREATE TABLE audit_chain (
	id          integer PRIMARY KEY CHECK (id = 1),
	head_seq    bigint NOT NULL,
	head_prev   text   NOT NULL,
	head_hash   text   NOT NULL,
	anchor_seq  bigint NOT NULL,
	anchor_hash text   NOT NULL
);
INSERT INTO audit_chain(id, head_seq, head_prev, head_hash, anchor_seq, anchor_hash)
	SELECT 1, coalesce(max(seq), 0), '', '` + genesis + `', coalesce(max(seq), 0), '` + genesis + `' FROM audit;
CREATE TABLE audit_checkpoints (
	seq    bigint PRIMARY KEY,
	hash   text   NOT NULL,
	at     bigint NOT NULL,
	key_id text   NOT NULL,
	sig    text   NOT NULL
);
`, `
-- 4: an approval binds the tool's definition it was requested for
-- (gateway.DefinitionHash). An approval stored before has none ('') and
-- is not bound to one.
ALTER TABLE approvals ADD COLUMN definition text NOT NULL DEFAULT '';
`, `
-- 5: a record names the claim that acquired it (store.ClaimRequest.Owner),
-- so that a gateway whose claim's answer was lost can find its claim. A
-- record stored before has none ('').
ALTER TABLE records ADD COLUMN owner text NOT NULL DEFAULT '';
`}

const genesis = auditchain.Genesis
