// Package finance is the transfer example's tool set: get_balance,
// list_transactions, transfer_funds and issue_full_refund over a
// [ledger.Ledger], as [tools.Tool] values with hand-written JSON Schemas
// (every object closed with additionalProperties:false).
//
// The handlers take the call's idempotency key from their context
// ([tools.IdempotencyKey], which the gateway sets) and pass it to the ledger,
// which commits the money movement and the key together: a re-run of an
// uncertain call with the same key never moves money twice. A call without
// a key is refused before any effect.
//
// Rules JSON Schema cannot state exactly live in Validators (the gateway's
// domain checks, run before anything is claimed or executed) and are checked
// again by the handlers: the two accounts differ, and the amount is a whole
// number of cents, decided on the decimal text of the JSON number rather
// than on a float64 (multipleOf: 0.01 is float-fragile).
//
// [NeedsApproval] is the example's approval policy: every issue_full_refund,
// and transfer_funds above [ApprovalThreshold]. Wire both into the gateway:
//
//	gw, err := gateway.New(reg, store, &gateway.Options{
//		Validators: finance.Validators(), NeedsApproval: finance.NeedsApproval})
package finance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/toolgate/toolgate/examples/transfer/ledger"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/tools"
)

// Namespace is the namespace of the finance tools' IDs ("bank/transfer_funds").
const Namespace = "bank"

// Tool IDs.
const (
	GetBalance       = Namespace + "/get_balance"
	ListTransactions = Namespace + "/list_transactions"
	TransferFunds    = Namespace + "/transfer_funds"
	IssueFullRefund  = Namespace + "/issue_full_refund"
)

// Scopes the tools require.
const (
	ScopeAccountsRead  = "accounts:read"
	ScopePaymentsWrite = "payments:write"
	ScopeBillingAdmin  = "billing:admin"
)

// ApprovalThreshold is the largest transfer that runs without a human
// approval: 1000.00 USD.
const ApprovalThreshold ledger.Cents = 100000

// ErrNoKey is wrapped (inside [tools.NoEffect]) by a write handler's error
// when its context carries no idempotency key: the tool must run through
// the gateway.
var ErrNoKey = errors.New("finance: no idempotency key in context (call through the gateway)")

var accountPattern = regexp.MustCompile(`^ACC-[0-9]{5}$`)

const accountSchema = `{"type":"string","pattern":"^ACC-[0-9]{5}$","description":"Account ID, e.g. ACC-00001"}`

// Ledger is what the tools need of a ledger: package ledger's SQLite
// Ledger, or the PostgreSQL one (examples/transfer/pgledger) with the same
// keyed semantics.
type Ledger interface {
	Balance(ctx context.Context, account string) (ledger.Cents, error)
	ListTransactions(ctx context.Context, account string, limit int) ([]ledger.Transaction, error)
	Transfer(ctx context.Context, key, src, dst string, amount ledger.Cents) (ledger.Transaction, error)
	Refund(ctx context.Context, key, txID string) (ledger.Transaction, error)
}

// Tools returns the four finance tools over l. Their handlers are safe for
// concurrent use.
func Tools(l Ledger) []tools.Tool {
	return []tools.Tool{
		{
			ID: GetBalance,
			Card: tools.Card{Name: "get_balance", Summary: "Show the current balance of a bank account in USD.",
				Scopes: []string{ScopeAccountsRead}, Aliases: []string{"how much money do I have", "account balance", "check funds"},
				NotFor: "Listing past payments; use list_transactions.", Tags: []string{"bank", "balance"},
				Group: "payments", ReadOnly: true, Idempotent: true},
			Description: "Returns the current balance, in USD, of one account.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"account":` + accountSchema + `},"required":["account"],"additionalProperties":false}`),
			Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				var in struct {
					Account string `json:"account"`
				}
				if err := decode(args, &in); err != nil {
					return nil, err
				}
				bal, err := l.Balance(ctx, in.Account)
				if err != nil {
					return nil, err
				}
				return marshal(map[string]any{"account": in.Account, "balance": bal})
			},
		},
		{
			ID: ListTransactions,
			Card: tools.Card{Name: "list_transactions", Summary: "List the recent transfers and refunds of a bank account, newest first.",
				Scopes: []string{ScopeAccountsRead}, Aliases: []string{"payment history", "recent transactions", "statement"},
				NotFor: "The current balance; use get_balance.", Tags: []string{"bank", "history"},
				Group: "payments", ReadOnly: true, Idempotent: true},
			Description: "Returns up to limit (default 20) transactions that debited or credited the account, newest first.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"account":` + accountSchema +
				`,"limit":{"type":"integer","minimum":1,"maximum":100,"description":"How many transactions, default 20"}},"required":["account"],"additionalProperties":false}`),
			Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				var in struct {
					Account string `json:"account"`
					Limit   int    `json:"limit"`
				}
				if err := decode(args, &in); err != nil {
					return nil, err
				}
				txs, err := l.ListTransactions(ctx, in.Account, in.Limit)
				if err != nil {
					return nil, err
				}
				if txs == nil {
					txs = []ledger.Transaction{}
				}
				return marshal(map[string]any{"account": in.Account, "transactions": txs})
			},
		},
		{
			ID: TransferFunds,
			Card: tools.Card{Name: "transfer_funds", Summary: "Send money in USD from one bank account to another.",
				Scopes: []string{ScopePaymentsWrite}, Aliases: []string{"pay someone", "wire money", "move funds", "send a payment"},
				NotFor: "Reversing an earlier payment; use issue_full_refund.", Tags: []string{"bank", "payment"},
				Group: "payments"},
			Description: "Moves amount USD (at most 2 decimals) from source_account to target_account. Transfers above 1000.00 USD need a human approval. Insufficient funds is refused.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"source_account":` + accountSchema +
				`,"target_account":` + accountSchema +
				`,"amount":{"type":"number","exclusiveMinimum":0,"maximum":1000000000000,"description":"Amount in USD, more than 0, at most 2 decimals"}},` +
				`"required":["source_account","target_account","amount"],"additionalProperties":false}`),
			Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				in, err := decodeTransfer(args)
				if err != nil {
					return nil, err
				}
				key, ok := tools.IdempotencyKey(ctx)
				if !ok {
					return nil, tools.NoEffect(ErrNoKey)
				}
				t, err := l.Transfer(ctx, key, in.source, in.target, in.amount)
				if err != nil {
					return nil, err
				}
				return marshal(map[string]any{"transaction_id": t.ID, "amount": t.Amount})
			},
		},
		{
			ID: IssueFullRefund,
			Card: tools.Card{Name: "issue_full_refund", Summary: "Refund the whole amount of an earlier transfer to the account that paid it.",
				Scopes: []string{ScopeBillingAdmin}, Aliases: []string{"reverse a payment", "give money back", "chargeback"},
				NotFor: "Sending new money; use transfer_funds.", Tags: []string{"bank", "refund"},
				Group: "payments", Irreversible: true},
			Description: "Reverses a transfer in full: its amount goes back from the target to the source account. Irreversible; always needs a human approval.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"transaction_id":{"type":"string","pattern":"^TX-[0-9a-f]{16}$","description":"The transfer to refund, e.g. TX-0123456789abcdef"}},"required":["transaction_id"],"additionalProperties":false}`),
			Handler: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				var in struct {
					TransactionID string `json:"transaction_id"`
				}
				if err := decode(args, &in); err != nil {
					return nil, err
				}
				key, ok := tools.IdempotencyKey(ctx)
				if !ok {
					return nil, tools.NoEffect(ErrNoKey)
				}
				t, err := l.Refund(ctx, key, in.TransactionID)
				if err != nil {
					return nil, err
				}
				return marshal(map[string]any{"transaction_id": t.ID, "refund_of": t.RefundOf, "amount": t.Amount})
			},
		},
	}
}

// Validators returns the gateway Validators of the finance tools: the
// domain rules JSON Schema cannot state exactly. For transfer_funds the
// accounts differ and the amount is a positive whole number of cents, read
// from the decimal text the caller sent (call.Arguments), not from the
// canonical form: RFC 8785 writes numbers as shortest doubles, which could
// round 1.0000000000000000001 to 1 and hide the extra decimals. Violations
// come back as a VALIDATION_ERROR with JSON pointers.
func Validators() map[string]gateway.Validator {
	return map[string]gateway.Validator{TransferFunds: validateTransfer}
}

func validateTransfer(_ context.Context, call gateway.Call, _ json.RawMessage) error {
	var in transferArgs
	if err := decode(call.Arguments, &in); err != nil {
		return gateway.Invalid(gateway.Violation{Pointer: "", Message: err.Error()})
	}
	var vs []gateway.Violation
	if in.Source == in.Target {
		vs = append(vs, gateway.Violation{Pointer: "/target_account", Message: "must differ from source_account"})
	}
	if _, err := ledger.ParseAmount(in.Amount.String()); err != nil {
		vs = append(vs, gateway.Violation{Pointer: "/amount",
			Message: fmt.Sprintf("must be a positive USD amount with at most 2 decimals, got %s", in.Amount)})
	}
	if len(vs) > 0 {
		return gateway.Invalid(vs...)
	}
	return nil
}

// NeedsApproval is the example's approval policy for [gateway.Options.NeedsApproval]:
// transfer_funds above [ApprovalThreshold]. (issue_full_refund is marked
// Irreversible, so the gateway asks for an approval of every call anyway.)
func NeedsApproval(_ context.Context, call gateway.Call, args json.RawMessage) bool {
	switch call.Tool {
	case IssueFullRefund:
		return true
	case TransferFunds:
		in, err := decodeTransfer(args)
		return err == nil && in.amount > ApprovalThreshold
	}
	return false
}

// transferArgs is transfer_funds' arguments as sent: the amount keeps its
// decimal text.
type transferArgs struct {
	Source string      `json:"source_account"`
	Target string      `json:"target_account"`
	Amount json.Number `json:"amount"`
}

type transfer struct {
	source, target string
	amount         ledger.Cents
}

// decodeTransfer decodes and checks transfer_funds arguments; a failure is
// a NoEffect error wrapping [tools.ErrInvalidArguments].
func decodeTransfer(args json.RawMessage) (transfer, error) {
	var in transferArgs
	if err := decode(args, &in); err != nil {
		return transfer{}, err
	}
	switch {
	case !accountPattern.MatchString(in.Source) || !accountPattern.MatchString(in.Target):
		return transfer{}, invalid("accounts must match %s", accountPattern)
	case in.Source == in.Target:
		return transfer{}, invalid("source_account and target_account are the same")
	}
	amount, err := ledger.ParseAmount(in.Amount.String())
	if err != nil {
		return transfer{}, invalid("%v", err)
	}
	return transfer{source: in.Source, target: in.Target, amount: amount}, nil
}

// decode decodes an arguments object strictly: numbers as [json.Number],
// unknown fields and trailing data refused.
func decode(args json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalid("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return invalid("trailing data after the arguments object")
	}
	return nil
}

func invalid(format string, a ...any) error {
	return tools.NoEffect(fmt.Errorf("%w: %s", tools.ErrInvalidArguments, fmt.Sprintf(format, a...)))
}

func marshal(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("finance: encode result: %w", err)
	}
	return b, nil
}
