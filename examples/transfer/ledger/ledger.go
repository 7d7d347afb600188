// Package ledger is the financial ledger behind the transfer example: USD
// accounts in a SQLite file, amounts in integer cents, and transfers that are
// idempotent downstream of the gateway.
//
// Every write takes the gateway's idempotency key and commits the money
// movement and the key in one SQLite transaction (WAL, synchronous=FULL): a
// repeated key returns the original transaction, or the original refusal,
// instead of moving money again. That is what makes a crash between the
// ledger's commit and the gateway's recording harmless: the gateway re-runs
// the handler with the same key and the ledger answers with what it already did.
//
// Business refusals (insufficient funds, unknown account, already refunded)
// are [*tools.DomainError] values, which the gateway stores and replays.
package ledger

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/sqliteutil"
	"github.com/toolgate/toolgate/tools"
)

// Domain error codes.
const (
	CodeInsufficientFunds = "INSUFFICIENT_FUNDS"
	CodeUnknownAccount    = "UNKNOWN_ACCOUNT"
	CodeUnknownTx         = "UNKNOWN_TRANSACTION"
	CodeNotRefundable     = "NOT_REFUNDABLE"
	CodeAlreadyRefunded   = "ALREADY_REFUNDED"
	CodeSameAccount       = "SAME_ACCOUNT"
)

// Errors that are not business refusals. Both are wrapped with [tools.NoEffect]:
// nothing was written.
var (
	// ErrNoKey means a write was attempted without an idempotency key.
	ErrNoKey = errors.New("ledger: missing idempotency key")
	// ErrKeyReuse means a key already used for one request came back with
	// another. The gateway's keys cover the arguments, so this signals a bug.
	ErrKeyReuse = errors.New("ledger: idempotency key reused for a different request")
)

// Kinds of transaction.
const (
	KindTransfer = "transfer"
	KindRefund   = "refund"
)

// Transaction is one applied money movement.
type Transaction struct {
	ID       string    `json:"transaction_id"`
	Kind     string    `json:"kind"`
	Source   string    `json:"source_account"`
	Target   string    `json:"target_account"`
	Amount   Cents     `json:"amount"`
	RefundOf string    `json:"refund_of,omitempty"`
	Created  time.Time `json:"created_at"`
	// Key is the idempotency key the transaction was committed with.
	Key string `json:"-"`
}

// Options configures Open. A nil *Options means defaults.
type Options struct {
	// Accounts is how many accounts (ACC-00001 ...) a new ledger is seeded
	// with. Zero means 10. An existing ledger is never reseeded.
	Accounts int
	// Opening is each seeded account's balance. Zero means 1000.00 USD.
	Opening Cents
	// Now is the clock for transaction timestamps. Nil means [time.Now].
	Now func() time.Time
}

// Resolve validates o and sets its zero fields to their defaults. Every
// backend of the ledger (this package's Open, pgledger's) resolves its
// options so; the error names the field.
func (o *Options) Resolve() error {
	switch {
	case o.Accounts < 0 || o.Accounts > 99999:
		return fmt.Errorf("Options.Accounts = %d, want 0..99999", o.Accounts)
	case o.Opening < 0 || o.Opening > MaxCents:
		return fmt.Errorf("Options.Opening = %s out of range", o.Opening)
	}
	o.Accounts = cmp.Or(o.Accounts, 10)
	o.Opening = cmp.Or(o.Opening, 100000)
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Ledger is a SQLite-backed ledger. It is safe for concurrent use by many
// goroutines; writes are serialized by one writer and group-committed.
type Ledger struct {
	db  *sqliteutil.DB
	w   *sqliteutil.Writer
	now func() time.Time
}

var migrations = []string{`
CREATE TABLE accounts (
	id            TEXT PRIMARY KEY,
	balance_cents INTEGER NOT NULL CHECK (balance_cents >= 0)
) STRICT;
CREATE TABLE transactions (
	seq             INTEGER PRIMARY KEY,
	id              TEXT NOT NULL UNIQUE,
	idempotency_key TEXT NOT NULL UNIQUE,
	kind            TEXT NOT NULL CHECK (kind IN ('transfer', 'refund')),
	source          TEXT NOT NULL REFERENCES accounts(id),
	target          TEXT NOT NULL REFERENCES accounts(id),
	amount_cents    INTEGER NOT NULL CHECK (amount_cents > 0),
	refund_of       TEXT UNIQUE REFERENCES transactions(id),
	created_ms      INTEGER NOT NULL
) STRICT;
CREATE INDEX transactions_by_source ON transactions(source, seq);
CREATE INDEX transactions_by_target ON transactions(target, seq);
-- Refusals are keyed too, so a retry of a refused request gets the same answer.
CREATE TABLE declines (
	idempotency_key TEXT PRIMARY KEY,
	request         TEXT NOT NULL,
	code            TEXT NOT NULL,
	message         TEXT NOT NULL,
	created_ms      INTEGER NOT NULL
) STRICT;
`}

// Open opens the ledger in the SQLite file at path, creating and seeding it
// on first use.
func Open(ctx context.Context, path string, opts *Options) (*Ledger, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if err := o.Resolve(); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	db, err := sqliteutil.Open(ctx, path, nil)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	if err := sqliteutil.Migrate(ctx, db.W, migrations); err != nil {
		db.Close()
		return nil, fmt.Errorf("ledger: %s: %w", path, err)
	}
	l := &Ledger{db: db, w: sqliteutil.NewWriter(db, 0, nil), now: o.Now}
	err = l.w.Do(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM accounts").Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		for i := 1; i <= o.Accounts; i++ {
			if _, err := tx.ExecContext(ctx, "INSERT INTO accounts(id, balance_cents) VALUES (?, ?)",
				fmt.Sprintf("ACC-%05d", i), int64(o.Opening)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("ledger: seed accounts: %w", err)
	}
	return l, nil
}

// Close closes the ledger after pending writes.
func (l *Ledger) Close() error {
	return errors.Join(l.w.Close(), l.db.Close())
}

// Balance returns the account's balance, or a [*tools.DomainError] with code
// UNKNOWN_ACCOUNT.
func (l *Ledger) Balance(ctx context.Context, account string) (Cents, error) {
	var c int64
	err := l.db.R.QueryRowContext(ctx, "SELECT balance_cents FROM accounts WHERE id = ?", account).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, UnknownAccount(account)
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: balance: %w", err)
	}
	return Cents(c), nil
}

// Total returns the sum of all balances. Transfers and refunds conserve it.
func (l *Ledger) Total(ctx context.Context) (Cents, error) {
	var c int64
	if err := l.db.R.QueryRowContext(ctx, "SELECT coalesce(sum(balance_cents), 0) FROM accounts").Scan(&c); err != nil {
		return 0, fmt.Errorf("ledger: total: %w", err)
	}
	return Cents(c), nil
}

// ListTransactions returns up to limit transactions touching account, newest
// first. A limit <= 0 means 20. An unknown account is a [*tools.DomainError].
func (l *Ledger) ListTransactions(ctx context.Context, account string, limit int) ([]Transaction, error) {
	if limit <= 0 {
		limit = 20
	}
	if _, err := l.Balance(ctx, account); err != nil {
		return nil, err
	}
	rows, err := l.db.R.QueryContext(ctx, `SELECT `+TxColumns+` FROM transactions
		WHERE source = ?1 OR target = ?1 ORDER BY seq DESC LIMIT ?2`, account, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger: list transactions: %w", err)
	}
	return scanTransactions(rows)
}

// AllTransactions returns every transaction in commit order. It is meant
// for audits and tests of small ledgers.
func (l *Ledger) AllTransactions(ctx context.Context) ([]Transaction, error) {
	rows, err := l.db.R.QueryContext(ctx, `SELECT `+TxColumns+` FROM transactions ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("ledger: transactions: %w", err)
	}
	return scanTransactions(rows)
}

// Transfer moves amount from src to dst, once per key: the movement and
// the key are committed in one transaction, and a repeated key returns the
// original transaction (or the original refusal) without moving money again.
// Refusals are [*tools.DomainError] values: INSUFFICIENT_FUNDS,
// UNKNOWN_ACCOUNT, SAME_ACCOUNT. [ErrNoKey] and [ErrKeyReuse] come wrapped in
// [tools.NoEffect]; any other error leaves the outcome to be resolved by
// retrying with the same key.
func (l *Ledger) Transfer(ctx context.Context, key, src, dst string, amount Cents) (Transaction, error) {
	r, err := TransferRequest(key, src, dst, amount)
	if err != nil {
		return Transaction{}, err
	}
	return l.write(ctx, key, r, func(ctx context.Context, tx *sqliteutil.Tx) (Transaction, *tools.DomainError, error) {
		if src == dst {
			return Transaction{}, SameAccount(), nil
		}
		return l.move(ctx, tx, Transaction{Kind: KindTransfer, Source: src, Target: dst, Amount: amount, Key: key})
	})
}

// Refund reverses the whole transfer txID, once per key: the amount goes
// from the transfer's target back to its source. A transfer can be refunded
// once (ALREADY_REFUNDED), refunds themselves cannot (NOT_REFUNDABLE), an
// unknown id is UNKNOWN_TRANSACTION, and the target may lack the funds
// (INSUFFICIENT_FUNDS); all are [*tools.DomainError] values replayed per key.
func (l *Ledger) Refund(ctx context.Context, key, txID string) (Transaction, error) {
	r, err := RefundRequest(key, txID)
	if err != nil {
		return Transaction{}, err
	}
	return l.write(ctx, key, r, func(ctx context.Context, tx *sqliteutil.Tx) (Transaction, *tools.DomainError, error) {
		orig, found, err := txByID(ctx, tx, txID)
		if err != nil {
			return Transaction{}, nil, err
		}
		switch {
		case !found:
			return Transaction{}, UnknownTransaction(txID), nil
		case orig.Kind != KindTransfer:
			return Transaction{}, NotRefundable(txID, orig.Kind), nil
		}
		var refunded int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM transactions WHERE refund_of = ?", txID).Scan(&refunded); err != nil {
			return Transaction{}, nil, err
		}
		if refunded > 0 {
			return Transaction{}, AlreadyRefunded(txID), nil
		}
		return l.move(ctx, tx, Transaction{Kind: KindRefund, Source: orig.Target, Target: orig.Source,
			Amount: orig.Amount, RefundOf: txID, Key: key})
	})
}

// TransactionByKey returns the transaction committed with key, if any.
func (l *Ledger) TransactionByKey(ctx context.Context, key string) (Transaction, bool, error) {
	rows, err := l.db.R.QueryContext(ctx, `SELECT `+TxColumns+` FROM transactions WHERE idempotency_key = ?`, key)
	if err != nil {
		return Transaction{}, false, fmt.Errorf("ledger: %w", err)
	}
	ts, err := scanTransactions(rows)
	if err != nil || len(ts) == 0 {
		return Transaction{}, false, err
	}
	return ts[0], true, nil
}

// write runs one keyed write of r in the writer's transaction: a key seen
// before answers with what it committed (replay); otherwise apply runs
// (with the writer's context) and its transaction or its refusal is
// committed with the key.
func (l *Ledger) write(ctx context.Context, key string, r Request,
	apply func(context.Context, *sqliteutil.Tx) (Transaction, *tools.DomainError, error)) (Transaction, error) {
	var out Transaction
	var refusal error
	err := l.w.Do(ctx, func(ctx context.Context, tx *sqliteutil.Tx) error {
		var done bool
		var err error
		out, refusal, done, err = l.replay(ctx, tx, key, r)
		if err != nil || done {
			return err
		}
		var de *tools.DomainError
		if out, de, err = apply(ctx, tx); err != nil || de == nil {
			return err
		}
		refusal = de
		return l.decline(ctx, tx, key, r.Text, de)
	})
	if err != nil {
		return Transaction{}, wrapWrite(err)
	}
	return out, refusal
}

// replay answers a key seen before, if r is the request it was first
// written with: the transaction it committed, or the refusal it recorded.
func (l *Ledger) replay(ctx context.Context, tx *sqliteutil.Tx, key string, r Request) (Transaction, error, bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+TxColumns+` FROM transactions WHERE idempotency_key = ?`, key)
	if err != nil {
		return Transaction{}, nil, false, err
	}
	ts, err := scanTransactions(rows)
	if err != nil {
		return Transaction{}, nil, false, err
	}
	if len(ts) > 0 {
		if !r.Same(ts[0]) {
			return Transaction{}, nil, false, ErrKeyReuse
		}
		return ts[0], nil, true, nil
	}
	var storedReq, code, msg string
	err = tx.QueryRowContext(ctx, "SELECT request, code, message FROM declines WHERE idempotency_key = ?", key).Scan(&storedReq, &code, &msg)
	if errors.Is(err, sql.ErrNoRows) {
		return Transaction{}, nil, false, nil
	}
	if err != nil {
		return Transaction{}, nil, false, err
	}
	if storedReq != r.Text {
		return Transaction{}, nil, false, ErrKeyReuse
	}
	return Transaction{}, &tools.DomainError{Code: code, Message: msg}, true, nil
}

// move applies t (a new key) or returns a refusal for a missing account or
// insufficient funds.
func (l *Ledger) move(ctx context.Context, tx *sqliteutil.Tx, t Transaction) (Transaction, *tools.DomainError, error) {
	var srcBal int64
	err := tx.QueryRowContext(ctx, "SELECT balance_cents FROM accounts WHERE id = ?", t.Source).Scan(&srcBal)
	if errors.Is(err, sql.ErrNoRows) {
		return Transaction{}, UnknownAccount(t.Source), nil
	}
	if err != nil {
		return Transaction{}, nil, err
	}
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM accounts WHERE id = ?", t.Target).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return Transaction{}, UnknownAccount(t.Target), nil
	}
	if err != nil {
		return Transaction{}, nil, err
	}
	if srcBal < int64(t.Amount) {
		return Transaction{}, InsufficientFunds(t.Source, Cents(srcBal), t.Amount), nil
	}
	t.ID = TxID(t.Key)
	t.Created = l.now().UTC().Truncate(time.Millisecond)
	if _, err := tx.ExecContext(ctx, "UPDATE accounts SET balance_cents = balance_cents - ? WHERE id = ?", int64(t.Amount), t.Source); err != nil {
		return Transaction{}, nil, err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE accounts SET balance_cents = balance_cents + ? WHERE id = ?", int64(t.Amount), t.Target); err != nil {
		return Transaction{}, nil, err
	}
	var refundOf any
	if t.RefundOf != "" {
		refundOf = t.RefundOf
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO transactions(id, idempotency_key, kind, source, target, amount_cents, refund_of, created_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, t.Key, t.Kind, t.Source, t.Target, int64(t.Amount), refundOf, t.Created.UnixMilli()); err != nil {
		return Transaction{}, nil, err
	}
	return t, nil, nil
}

func (l *Ledger) decline(ctx context.Context, tx *sqliteutil.Tx, key, req string, de *tools.DomainError) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO declines(idempotency_key, request, code, message, created_ms) VALUES (?, ?, ?, ?, ?)",
		key, req, de.Code, de.Message, l.now().UnixMilli())
	return err
}

func wrapWrite(err error) error {
	if errors.Is(err, ErrKeyReuse) {
		return tools.NoEffect(err)
	}
	return fmt.Errorf("ledger: %w", err)
}

// A Request is what a keyed write binds its key to: Text, recorded with a
// refusal, and Same, which a transaction committed under the key must
// satisfy. The key sent again with another request is [ErrKeyReuse].
// Every backend of the ledger builds its writes' requests with
// [TransferRequest] and [RefundRequest], so that a key stands for the same
// request whatever the store.
type Request struct {
	Text string
	Same func(Transaction) bool
}

// TransferRequest checks a transfer's key and amount and returns its
// [Request]. Its errors, [ErrNoKey] and [ErrAmount], come wrapped in
// [tools.NoEffect]: nothing was written.
func TransferRequest(key, src, dst string, amount Cents) (Request, error) {
	if key == "" {
		return Request{}, tools.NoEffect(ErrNoKey)
	}
	if amount <= 0 || amount > MaxCents {
		return Request{}, tools.NoEffect(fmt.Errorf("%w: %s", ErrAmount, amount))
	}
	return Request{Text: fmt.Sprintf("transfer %s %s %d", src, dst, amount), Same: func(t Transaction) bool {
		return t.Kind == KindTransfer && t.Source == src && t.Target == dst && t.Amount == amount
	}}, nil
}

// RefundRequest checks a refund's key and returns its [Request]. Its
// error, [ErrNoKey], comes wrapped in [tools.NoEffect].
func RefundRequest(key, txID string) (Request, error) {
	if key == "" {
		return Request{}, tools.NoEffect(ErrNoKey)
	}
	return Request{Text: "refund " + txID, Same: func(t Transaction) bool {
		return t.Kind == KindRefund && t.RefundOf == txID
	}}, nil
}

// The domain errors of the ledger's refusals; every backend of the ledger
// reports them so.

// UnknownAccount is the domain error for an account id no ledger holds.
func UnknownAccount(id string) *tools.DomainError {
	return &tools.DomainError{Code: CodeUnknownAccount, Message: fmt.Sprintf("no account %q", id)}
}

// SameAccount is the domain error for a transfer from an account to itself.
func SameAccount() *tools.DomainError {
	return &tools.DomainError{Code: CodeSameAccount, Message: "source and target accounts are the same"}
}

// InsufficientFunds is the domain error for moving amount out of account,
// which holds only balance.
func InsufficientFunds(account string, balance, amount Cents) *tools.DomainError {
	return &tools.DomainError{Code: CodeInsufficientFunds,
		Message: fmt.Sprintf("%s holds %s USD, less than %s USD", account, balance, amount),
		Details: map[string]any{"account": account, "balance": balance, "amount": amount}}
}

// UnknownTransaction is the domain error for a refund of a transaction id
// no ledger holds.
func UnknownTransaction(id string) *tools.DomainError {
	return &tools.DomainError{Code: CodeUnknownTx, Message: fmt.Sprintf("no transaction %q", id)}
}

// NotRefundable is the domain error for a refund of the transaction id,
// which is of kind, not a transfer.
func NotRefundable(id, kind string) *tools.DomainError {
	return &tools.DomainError{Code: CodeNotRefundable, Message: fmt.Sprintf("%s is a %s, only transfers can be refunded", id, kind)}
}

// AlreadyRefunded is the domain error for a second refund of the transfer id.
func AlreadyRefunded(id string) *tools.DomainError {
	return &tools.DomainError{Code: CodeAlreadyRefunded, Message: fmt.Sprintf("%s was already refunded", id)}
}

// TxID derives the transaction id from the idempotency key, so the id a
// retry sees is the id the first attempt created, on every backend.
func TxID(key string) string {
	sum := sha256.Sum256([]byte("toolgate-ledger-tx\x00" + key))
	return "TX-" + hex.EncodeToString(sum[:8])
}

// TxColumns are the columns of the transactions table, in the order
// [CollectTransactions] reads them: a SELECT of them over the ledger's schema
// (this package's or package pgledger's) scans into a [Transaction].
const TxColumns = `id, idempotency_key, kind, source, target, amount_cents, coalesce(refund_of, ''), created_ms`

func txByID(ctx context.Context, tx *sqliteutil.Tx, id string) (Transaction, bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+TxColumns+` FROM transactions WHERE id = ?`, id)
	if err != nil {
		return Transaction{}, false, err
	}
	ts, err := scanTransactions(rows)
	if err != nil || len(ts) == 0 {
		return Transaction{}, false, err
	}
	return ts[0], true, nil
}

func scanTransactions(rows *sql.Rows) ([]Transaction, error) {
	defer rows.Close()
	out, err := CollectTransactions(rows)
	if err != nil {
		return nil, fmt.Errorf("ledger: scan transaction: %w", err)
	}
	return out, nil
}

// CollectTransactions reads every row of rows (a [*sql.Rows] or a pgx.Rows),
// the result of a SELECT of [TxColumns], as a transaction. The caller
// closes rows.
func CollectTransactions(rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}) ([]Transaction, error) {
	var out []Transaction
	for rows.Next() {
		var t Transaction
		var amount, ms int64
		if err := rows.Scan(&t.ID, &t.Key, &t.Kind, &t.Source, &t.Target, &amount, &t.RefundOf, &ms); err != nil {
			return nil, err
		}
		t.Amount = Cents(amount)
		t.Created = time.UnixMilli(ms).UTC()
		out = append(out, t)
	}
	return out, rows.Err()
}
