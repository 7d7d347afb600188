// Package pgledger is the transfer example's ledger in PostgreSQL: the same
// accounts, keyed transfers and refunds, and refusals as package ledger, for
// `transfer serve --store postgres://…`, so that every serve process, on any
// host, moves money in the database that holds the gateway's store.
//
// Every write takes the gateway's idempotency key and commits the money
// movement (or the refusal) and the key in one transaction: a repeated key
// returns the original transaction, or the original refusal, instead of
// moving money again. Writes with one key are serialized by a
// transaction-scoped advisory lock on the key, and the accounts a write
// touches are locked (SELECT … FOR UPDATE, in id order, so two transfers
// never deadlock), so concurrent writes from many processes are safe under
// READ COMMITTED. Types, codes and messages are package ledger's.
package pgledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/tools"
)

// Options configures Open. A nil *Options means defaults.
type Options struct {
	// Options are the seeding and the clock, as for package ledger's Open.
	ledger.Options
	// Schema holds the ledger's tables, created when missing. Zero means
	// "transfer_ledger".
	Schema string
	// MaxConns caps the connection pool. Zero means the URL's
	// pool_max_conns, else 32 (a write waits on its commit's fsync, so more
	// connections than cores keep the database busy).
	MaxConns int
}

// Ledger is a PostgreSQL-backed ledger, safe for concurrent use by many
// goroutines and processes.
type Ledger struct {
	pool *pgxpool.Pool
	now  func() time.Time
}

const schemaSQL = `
CREATE TABLE IF NOT EXISTS accounts (
	id            text PRIMARY KEY,
	balance_cents bigint NOT NULL CHECK (balance_cents >= 0)
);
CREATE TABLE IF NOT EXISTS transactions (
	seq             bigserial PRIMARY KEY,
	id              text NOT NULL UNIQUE,
	idempotency_key text NOT NULL UNIQUE,
	kind            text NOT NULL CHECK (kind IN ('transfer', 'refund')),
	source          text NOT NULL REFERENCES accounts(id),
	target          text NOT NULL REFERENCES accounts(id),
	amount_cents    bigint NOT NULL CHECK (amount_cents > 0),
	refund_of       text UNIQUE REFERENCES transactions(id),
	created_ms      bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS transactions_by_source ON transactions(source, seq);
CREATE INDEX IF NOT EXISTS transactions_by_target ON transactions(target, seq);
CREATE TABLE IF NOT EXISTS declines (
	idempotency_key text PRIMARY KEY,
	request         text NOT NULL,
	code            text NOT NULL,
	message         text NOT NULL,
	created_ms      bigint NOT NULL
);`

// setupLock serializes schema creation and seeding across processes.
const setupLock = 0x6c6564676572 // "ledger"

// Open connects to the database at url, creates the schema and seeds the
// accounts on first use (under an advisory lock, so several processes may
// open it at once).
func Open(ctx context.Context, url string, opts *Options) (*Ledger, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if err := o.Resolve(); err != nil {
		return nil, fmt.Errorf("pgledger: %w", err)
	}
	if o.MaxConns < 0 {
		return nil, fmt.Errorf("pgledger: Options.MaxConns = %d, want >= 0", o.MaxConns)
	}
	if o.Schema == "" {
		o.Schema = "transfer_ledger"
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("pgledger: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = o.Schema
	switch {
	case o.MaxConns > 0:
		cfg.MaxConns = int32(o.MaxConns)
	case !strings.Contains(url, "pool_max_conns"):
		cfg.MaxConns = 32
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgledger: %w", err)
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(setupLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{o.Schema}.Sanitize()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, schemaSQL); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM accounts`).Scan(&n); err != nil || n > 0 {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO accounts(id, balance_cents)
			SELECT 'ACC-' || lpad(i::text, 5, '0'), $2 FROM generate_series(1, $1) AS i`, o.Accounts, int64(o.Opening))
		return err
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgledger: set up: %w", err)
	}
	return &Ledger{pool: pool, now: o.Now}, nil
}

// Close closes the connection pool.
func (l *Ledger) Close() error {
	l.pool.Close()
	return nil
}

// Balance returns the account's balance, or a [*tools.DomainError] with code
// UNKNOWN_ACCOUNT.
func (l *Ledger) Balance(ctx context.Context, account string) (ledger.Cents, error) {
	var c int64
	err := l.pool.QueryRow(ctx, `SELECT balance_cents FROM accounts WHERE id = $1`, account).Scan(&c)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ledger.UnknownAccount(account)
	}
	if err != nil {
		return 0, fmt.Errorf("pgledger: balance: %w", err)
	}
	return ledger.Cents(c), nil
}

// Total returns the sum of all balances. Transfers and refunds conserve it.
func (l *Ledger) Total(ctx context.Context) (ledger.Cents, error) {
	var c int64
	if err := l.pool.QueryRow(ctx, `SELECT coalesce(sum(balance_cents), 0)::bigint FROM accounts`).Scan(&c); err != nil {
		return 0, fmt.Errorf("pgledger: total: %w", err)
	}
	return ledger.Cents(c), nil
}

// ListTransactions returns up to limit transactions touching account, newest
// first. A limit <= 0 means 20. An unknown account is a [*tools.DomainError].
func (l *Ledger) ListTransactions(ctx context.Context, account string, limit int) ([]ledger.Transaction, error) {
	if limit <= 0 {
		limit = 20
	}
	if _, err := l.Balance(ctx, account); err != nil {
		return nil, err
	}
	return l.query(ctx, l.pool, `SELECT `+ledger.TxColumns+` FROM transactions WHERE source = $1 OR target = $1
		ORDER BY seq DESC LIMIT $2`, account, limit)
}

// AllTransactions returns every transaction in insertion order. It is
// meant for audits and tests of small ledgers.
func (l *Ledger) AllTransactions(ctx context.Context) ([]ledger.Transaction, error) {
	return l.query(ctx, l.pool, `SELECT `+ledger.TxColumns+` FROM transactions ORDER BY seq`)
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func (l *Ledger) query(ctx context.Context, q querier, sql string, args ...any) ([]ledger.Transaction, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("pgledger: %w", err)
	}
	defer rows.Close()
	out, err := ledger.CollectTransactions(rows)
	if err != nil {
		return nil, fmt.Errorf("pgledger: scan transaction: %w", err)
	}
	return out, nil
}

// Transfer moves amount from src to dst, once per key, as package ledger's
// Transfer does.
func (l *Ledger) Transfer(ctx context.Context, key, src, dst string, amount ledger.Cents) (ledger.Transaction, error) {
	r, err := ledger.TransferRequest(key, src, dst, amount)
	if err != nil {
		return ledger.Transaction{}, err
	}
	return l.write(ctx, key, r, func(tx pgx.Tx) (ledger.Transaction, *tools.DomainError, error) {
		if src == dst {
			return ledger.Transaction{}, ledger.SameAccount(), nil
		}
		return l.move(ctx, tx, ledger.Transaction{Kind: ledger.KindTransfer, Source: src, Target: dst, Amount: amount, Key: key})
	})
}

// Refund reverses the whole transfer txID, once per key, as package
// ledger's Refund does.
func (l *Ledger) Refund(ctx context.Context, key, txID string) (ledger.Transaction, error) {
	r, err := ledger.RefundRequest(key, txID)
	if err != nil {
		return ledger.Transaction{}, err
	}
	return l.write(ctx, key, r, func(tx pgx.Tx) (ledger.Transaction, *tools.DomainError, error) {
		orig, err := l.query(ctx, tx, `SELECT `+ledger.TxColumns+` FROM transactions WHERE id = $1`, txID)
		if err != nil {
			return ledger.Transaction{}, nil, err
		}
		switch {
		case len(orig) == 0:
			return ledger.Transaction{}, ledger.UnknownTransaction(txID), nil
		case orig[0].Kind != ledger.KindTransfer:
			return ledger.Transaction{}, ledger.NotRefundable(txID, orig[0].Kind), nil
		}
		var refunded int
		// The original's row lock serializes refunds of one transfer.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM transactions WHERE id = $1 FOR UPDATE`, txID); err != nil {
			return ledger.Transaction{}, nil, err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM transactions WHERE refund_of = $1`, txID).Scan(&refunded); err != nil {
			return ledger.Transaction{}, nil, err
		}
		if refunded > 0 {
			return ledger.Transaction{}, ledger.AlreadyRefunded(txID), nil
		}
		o := orig[0]
		return l.move(ctx, tx, ledger.Transaction{Kind: ledger.KindRefund, Source: o.Target, Target: o.Source,
			Amount: o.Amount, RefundOf: txID, Key: key})
	})
}

// write runs one keyed write of r: under the key's advisory lock, a key
// seen before answers with what it committed, if r is the request it was
// first written with; otherwise apply runs and its transaction or its
// refusal is committed with the key.
func (l *Ledger) write(ctx context.Context, key string, r ledger.Request,
	apply func(pgx.Tx) (ledger.Transaction, *tools.DomainError, error)) (ledger.Transaction, error) {
	var out ledger.Transaction
	var refusal *tools.DomainError
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		out, refusal = ledger.Transaction{}, nil
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
			return err
		}
		prior, err := l.query(ctx, tx, `SELECT `+ledger.TxColumns+` FROM transactions WHERE idempotency_key = $1`, key)
		if err != nil {
			return err
		}
		if len(prior) > 0 {
			if !r.Same(prior[0]) {
				return ledger.ErrKeyReuse
			}
			out = prior[0]
			return nil
		}
		var storedReq, code, msg string
		err = tx.QueryRow(ctx, `SELECT request, code, message FROM declines WHERE idempotency_key = $1`, key).Scan(&storedReq, &code, &msg)
		if err == nil {
			if storedReq != r.Text {
				return ledger.ErrKeyReuse
			}
			refusal = &tools.DomainError{Code: code, Message: msg}
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		out, refusal, err = apply(tx)
		if err != nil || refusal == nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO declines(idempotency_key, request, code, message, created_ms) VALUES ($1, $2, $3, $4, $5)`,
			key, r.Text, refusal.Code, refusal.Message, l.now().UnixMilli())
		return err
	})
	if err != nil {
		if errors.Is(err, ledger.ErrKeyReuse) {
			return ledger.Transaction{}, tools.NoEffect(err)
		}
		return ledger.Transaction{}, fmt.Errorf("pgledger: %w", err)
	}
	if refusal != nil {
		return ledger.Transaction{}, refusal
	}
	return out, nil
}

// move applies t (a new key), or refuses it for a missing account or
// insufficient funds. It locks both accounts in id order.
func (l *Ledger) move(ctx context.Context, tx pgx.Tx, t ledger.Transaction) (ledger.Transaction, *tools.DomainError, error) {
	rows, err := tx.Query(ctx, `SELECT id, balance_cents FROM accounts WHERE id = $1 OR id = $2 ORDER BY id FOR UPDATE`, t.Source, t.Target)
	if err != nil {
		return ledger.Transaction{}, nil, err
	}
	bal := map[string]int64{}
	for rows.Next() {
		var id string
		var c int64
		if err := rows.Scan(&id, &c); err != nil {
			rows.Close()
			return ledger.Transaction{}, nil, err
		}
		bal[id] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return ledger.Transaction{}, nil, err
	}
	srcBal, ok := bal[t.Source]
	if !ok {
		return ledger.Transaction{}, ledger.UnknownAccount(t.Source), nil
	}
	if _, ok := bal[t.Target]; !ok {
		return ledger.Transaction{}, ledger.UnknownAccount(t.Target), nil
	}
	if srcBal < int64(t.Amount) {
		return ledger.Transaction{}, ledger.InsufficientFunds(t.Source, ledger.Cents(srcBal), t.Amount), nil
	}
	t.ID = ledger.TxID(t.Key)
	t.Created = l.now().UTC().Truncate(time.Millisecond)
	if _, err := tx.Exec(ctx, `UPDATE accounts SET balance_cents = balance_cents - $1 WHERE id = $2`, int64(t.Amount), t.Source); err != nil {
		return ledger.Transaction{}, nil, err
	}
	if _, err := tx.Exec(ctx, `UPDATE accounts SET balance_cents = balance_cents + $1 WHERE id = $2`, int64(t.Amount), t.Target); err != nil {
		return ledger.Transaction{}, nil, err
	}
	var refundOf any
	if t.RefundOf != "" {
		refundOf = t.RefundOf
	}
	if _, err := tx.Exec(ctx, `INSERT INTO transactions(id, idempotency_key, kind, source, target, amount_cents, refund_of, created_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, t.ID, t.Key, t.Kind, t.Source, t.Target, int64(t.Amount), refundOf, t.Created.UnixMilli()); err != nil {
		return ledger.Transaction{}, nil, err
	}
	return t, nil, nil
}
