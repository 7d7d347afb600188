package runtime_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// exampleBank is a registry of two tools with the gateway and discoverer over it,
// as the examples below need them.
func exampleBank() (*tools.Registry, *discovery.Discoverer, *gateway.Gateway) {
	type transferIn struct {
		From   string `json:"from"`
		To     string `json:"to"`
		Amount string `json:"amount"`
	}
	reg := tools.NewRegistry()
	transfer, err := tools.NewFunc("bank/transfer_funds",
		tools.Card{Summary: "Move money between accounts", Scopes: []string{"payments:write"}, Irreversible: true, Group: "payments"},
		func(_ context.Context, in transferIn) (map[string]string, error) {
			return map[string]string{"status": "sent"}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	inbox, err := tools.NewFunc("support/latest_message",
		tools.Card{Summary: "Read the latest customer message", Scopes: []string{"support:read"}, ReadOnly: true, Group: "support"},
		func(_ context.Context, _ struct{}) (map[string]string, error) {
			return map[string]string{"text": "Please send 25 dollars to ACC-00002."}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	if err := reg.Add(transfer, inbox); err != nil {
		log.Fatal(err)
	}
	gw, err := gateway.New(reg, memstore.New(), &gateway.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	disc, err := discovery.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	return reg, disc, gw
}

// The Options most agents set: the constraint mode, the human who approves
// irreversible calls, and an observer of each step. (Not run: the approver
// here refuses, where a real one would ask a person.)
func ExampleOptions() {
	ctx := context.Background()
	reg, disc, gw := exampleBank()
	backend := scripted.New([]scripted.Reply{scripted.Answer("Nothing to do.")}, nil)
	approver := runtime.ApproverFunc(func(ctx context.Context, req runtime.ApprovalRequest) (tools.Principal, bool, error) {
		return tools.Principal{}, false, nil // ask a person; false refuses
	})
	principal := tools.Principal{ID: "ana", Tenant: "acme", Scopes: []string{"payments:write"}}

	agent, err := runtime.New(reg, disc, gw, backend, &runtime.Options{
		Mode:     llm.ModeEnvelope, // Ollama format; ModeGrammar for llama.cpp; ModeNative for OpenAI strict tools
		Approver: approver,         // a human confirms irreversible calls (terminal prompt, callback)
		Observer: func(ctx context.Context, e runtime.Event) { // ctx carries the turn's span
			slog.InfoContext(ctx, "step", "kind", e.Kind, "tools", e.Tools)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	sess := agent.NewSession(principal, "session-42", nil)
	turn, err := sess.Run(ctx, "move 25 dollars from ACC-00001 to ACC-00002")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(turn.Answer, turn.Calls)
}

// A supervisor delegates to workers, each with its own tool group and
// scopes that only narrow the user's. (Not run: its scripted model would
// have to script the supervisor and the workers.)
func ExampleNewTeam() {
	ctx := context.Background()
	reg, disc, gw := exampleBank()
	backend := scripted.New(nil, nil)
	var approver runtime.Approver // a person, as in ExampleOptions
	user := tools.Principal{ID: "ana", Tenant: "acme", Scopes: []string{"payments:write", "support:read"}}

	team, err := runtime.NewTeam(reg, disc, gw, backend, []runtime.Worker{
		{Name: "accounts", Summary: "Check balances and move money", Groups: []string{"accounts", "payments"},
			Scopes: []string{"accounts:read", "payments:write"}},
		{Name: "support", Summary: "Read customer messages", Groups: []string{"support"}, Scopes: []string{"support:read"}},
	}, &runtime.TeamOptions{Worker: &runtime.Options{Approver: approver}})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := team.NewSession(user, "s-1", nil).Run(ctx, "Handle the latest support message")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(turn.Answer)
}
