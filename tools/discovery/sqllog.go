package discovery

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SQLLog records discovery queries in a SQL database, one row per query in
// the table discovery_log, so that misses can be found with a query (low
// confidence, a tool never shortlisted, one principal's requests). It is
// written for SQLite (modernc.org/sqlite, the embedded store toolgate uses
// elsewhere): its "?" placeholders and "INTEGER PRIMARY KEY" row IDs are
// SQLite's (and MySQL's placeholders), not PostgreSQL's. Safe for
// concurrent use as far as the [*sql.DB] is.
type SQLLog struct {
	db *sql.DB
}

var _ Log = (*SQLLog)(nil)

// NewSQLLog creates the discovery_log table in db if it does not exist and
// returns a log writing to it. The caller owns db and closes it.
func NewSQLLog(ctx context.Context, db *sql.DB) (*SQLLog, error) {
	const ddl = `CREATE TABLE IF NOT EXISTS discovery_log (
		id INTEGER PRIMARY KEY,
		time TEXT NOT NULL,
		principal TEXT NOT NULL,
		tenant TEXT NOT NULL,
		query TEXT NOT NULL,
		lang TEXT NOT NULL,
		candidates TEXT NOT NULL,
		top_tool TEXT NOT NULL,
		confidence REAL NOT NULL,
		reformulated INTEGER NOT NULL,
		reformulated_query TEXT NOT NULL,
		authorized INTEGER NOT NULL,
		entry TEXT NOT NULL
	)`
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		return nil, fmt.Errorf("discovery: create discovery_log: %w", err)
	}
	return &SQLLog{db: db}, nil
}

// Record inserts e. candidates holds the JSON array of {id, score}; entry
// the whole entry as JSON.
func (l *SQLLog) Record(ctx context.Context, e Entry) error {
	cands, err := json.Marshal(e.Candidates)
	if err != nil {
		return fmt.Errorf("discovery: log: %w", err)
	}
	whole, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("discovery: log: %w", err)
	}
	top := ""
	if len(e.Candidates) > 0 {
		top = e.Candidates[0].ID
	}
	_, err = l.db.ExecContext(ctx, `INSERT INTO discovery_log
		(time, principal, tenant, query, lang, candidates, top_tool, confidence, reformulated, reformulated_query, authorized, entry)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.Time.UTC().Format(time.RFC3339Nano), e.Principal, e.Tenant, e.Query, e.Lang, string(cands), top,
		e.Confidence, e.Reformulated, e.ReformulatedQuery, e.Authorized, string(whole))
	if err != nil {
		return fmt.Errorf("discovery: log: %w", err)
	}
	return nil
}

// Entries returns every logged entry in the order recorded (the entry
// column of each row, by id). The caller bounds the table's size.
func (l *SQLLog) Entries(ctx context.Context) ([]Entry, error) {
	return ReadSQLLog(ctx, l.db)
}

// ErrNoSQLLog is returned by [ReadSQLLog] for a database without the
// discovery_log table: one that holds no discovery log.
var ErrNoSQLLog = errors.New("discovery: no discovery_log table")

// ReadSQLLog reads the discovery_log table of db in the order recorded,
// without creating it. A database without the table is [ErrNoSQLLog]; a
// row whose entry is not valid JSON is an error naming its id.
func ReadSQLLog(ctx context.Context, db *sql.DB) ([]Entry, error) {
	var tables int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'discovery_log'`).Scan(&tables)
	if err != nil {
		return nil, fmt.Errorf("discovery: read discovery_log: %w", err)
	}
	if tables == 0 {
		return nil, ErrNoSQLLog
	}
	rows, err := db.QueryContext(ctx, `SELECT id, entry FROM discovery_log ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("discovery: read discovery_log: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var id int64
		var raw string
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, fmt.Errorf("discovery: read discovery_log: %w", err)
		}
		var e Entry
		if err := json.Unmarshal([]byte(raw), &e); err != nil {
			return nil, fmt.Errorf("discovery: discovery_log row %d: invalid entry: %v", id, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("discovery: read discovery_log: %w", err)
	}
	return out, nil
}
