package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Worker is a specialised agent of a Team: its own tool group, shortlist
// budget and instructions, and its own scopes, which only ever narrow the
// user's (least privilege).
type Worker struct {
	// Name identifies the worker ("accounts"); it must match
	// ^[a-z0-9][a-z0-9_-]{0,31}$. The supervisor sees it as the tool
	// "workers/<Name>", and the gateway audits its calls with the actor
	// "worker:<Name>".
	Name string
	// Summary says what the worker does, in the user's words (its card).
	Summary string
	// NotFor says when not to delegate to it, naming the sibling.
	NotFor string
	// Instructions are the worker's system prompt.
	Instructions string
	// Scopes are the most the worker may use. Its effective scopes are the
	// intersection with the user's: it never holds more than the user.
	Scopes []string
	// Groups, Namespaces and Tools select the worker's tools: a tool
	// belongs to the worker when its Card.Group is in Groups, its namespace
	// in Namespaces, or its ID in Tools.
	Groups, Namespaces, Tools []string
	// K is the worker's shortlist budget. Zero means 8.
	K int
}

var workerName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// owns reports whether t is in the worker's tool group.
func (w *Worker) owns(t *tools.Tool) bool {
	return slices.Contains(w.Groups, t.Card.Group) || slices.Contains(w.Namespaces, t.Namespace()) || slices.Contains(w.Tools, t.ID)
}

// EffectiveScopes returns the principal a worker acts as for user: the
// user's identity and tenant with the scopes both the user and the worker
// hold, in the user's order.
func EffectiveScopes(user tools.Principal, w Worker) tools.Principal {
	p := tools.Principal{ID: user.ID, Tenant: user.Tenant}
	for _, s := range user.Scopes {
		if slices.Contains(w.Scopes, s) && !slices.Contains(p.Scopes, s) {
			p.Scopes = append(p.Scopes, s)
		}
	}
	return p
}

// Team is a supervisor that routes work to workers. The supervisor's
// catalog is the workers (one card each, ranked by discovery like any
// tool); it delegates with a task description, and a worker's answer comes
// back as the tool result. Each worker is an Agent over the shared registry,
// narrowed to its group, discovering inside it, acting with
// EffectiveScopes. Safe for concurrent use; conversations are TeamSessions.
type Team struct {
	supervisor *Agent
	workers    map[string]*teamWorker
}

type teamWorker struct {
	Worker
	agent *Agent
}

// TeamOptions configures a Team. Nil means defaults.
type TeamOptions struct {
	// Supervisor configures the supervisor's agent (Instructions, Mode,
	// Observer, ...). Its Filter is ignored.
	Supervisor *Options
	// Worker is the base configuration of every worker's agent; a
	// worker's K and Instructions override it, and its Filter is the
	// worker's tool group.
	Worker *Options
}

// ErrTeam is wrapped by NewTeam's errors.
var ErrTeam = errors.New("runtime: invalid team")

// NewTeam builds a supervisor over workers. reg, disc and gw are the
// shared catalog, discoverer and gateway the workers act through; backend
// is the model of the supervisor and the workers.
func NewTeam(reg *tools.Registry, disc *discovery.Discoverer, gw *gateway.Gateway, backend llm.Backend, workers []Worker, opts *TeamOptions) (*Team, error) {
	if len(workers) == 0 {
		return nil, fmt.Errorf("%w: no workers", ErrTeam)
	}
	var o TeamOptions
	if opts != nil {
		o = *opts
	}
	team := &Team{workers: make(map[string]*teamWorker, len(workers))}
	supReg := tools.NewRegistry()
	for _, w := range workers {
		if !workerName.MatchString(w.Name) {
			return nil, fmt.Errorf("%w: worker name %q must match %s", ErrTeam, w.Name, workerName)
		}
		if _, dup := team.workers[w.Name]; dup {
			return nil, fmt.Errorf("%w: worker %q is listed twice", ErrTeam, w.Name)
		}
		var wo Options
		if o.Worker != nil {
			wo = *o.Worker
		}
		w := w
		wo.Filter = w.owns
		wo.Strategy = StrategyProgressive
		if w.K > 0 {
			wo.K = w.K
		} else if wo.K == 0 {
			wo.K = 8
		}
		if w.Instructions != "" {
			wo.Instructions = w.Instructions
		}
		a, err := New(reg, disc, gw, backend, &wo)
		if err != nil {
			return nil, fmt.Errorf("%w: worker %s: %v", ErrTeam, w.Name, err)
		}
		tw := &teamWorker{Worker: w, agent: a}
		team.workers[w.Name] = tw
		err = supReg.Add(tools.Tool{
			ID: "workers/" + w.Name,
			Card: tools.Card{Name: w.Name, Summary: w.Summary, NotFor: w.NotFor, Group: "workers",
				Aliases: w.Groups},
			Description: w.Summary,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","description":"What the worker should do, in full: it sees nothing else of the conversation."}},"required":["task"],"additionalProperties":false}`),
			Handler:     tw.handle,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: worker %s: %v", ErrTeam, w.Name, err)
		}
	}
	// The supervisor's delegations go through a gateway of their own, so a
	// re-sent delegation (same step, same task) is replayed, and the
	// worker's own calls are still checked by the shared gateway.
	supGW, err := gateway.New(supReg, memstore.New(), nil)
	if err != nil {
		return nil, err
	}
	var so Options
	if o.Supervisor != nil {
		so = *o.Supervisor
	}
	so.Filter = nil
	if so.Instructions == "" {
		so.Instructions = "You are a supervisor. Delegate each piece of work to the worker whose description fits, with a complete task description, and answer the user from the workers' results."
	}
	sup, err := New(supReg, disc, supGW, backend, &so)
	if err != nil {
		return nil, fmt.Errorf("%w: supervisor: %v", ErrTeam, err)
	}
	sup.delegating = true
	team.supervisor = sup
	return team, nil
}

// TeamSession is one conversation with a team.
type TeamSession struct {
	*Session
}

// NewSession starts a conversation of user with the team.
func (t *Team) NewSession(user tools.Principal, id string, opts *SessionOptions) *TeamSession {
	return &TeamSession{Session: t.supervisor.NewSession(user, id, opts)}
}

// Run is Session.Run: the supervisor's loop, whose calls are delegations.
func (s *TeamSession) Run(ctx context.Context, input string) (*Turn, error) {
	return s.Session.Run(withUser(ctx, s.principal, s.id), input)
}

type userCtx struct{}

type userInfo struct {
	p  tools.Principal
	id string
}

func withUser(ctx context.Context, p tools.Principal, id string) context.Context {
	return context.WithValue(ctx, userCtx{}, userInfo{p, id})
}

// handle runs one delegation: a worker session acting with the
// intersection of the user's and the worker's scopes, in a session whose
// ID is namespaced by the worker and the delegation's idempotency key, so
// a re-delegated task replays its calls instead of re-executing them.
func (tw *teamWorker) handle(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
	var args struct {
		Task string `json:"task"`
	}
	if err := json.Unmarshal(raw, &args); err != nil || args.Task == "" {
		return nil, tools.NoEffect(errors.New("a delegation needs a task"))
	}
	u, ok := ctx.Value(userCtx{}).(userInfo)
	if !ok {
		return nil, tools.NoEffect(errors.New("runtime: delegation without a team session"))
	}
	key, _ := tools.IdempotencyKey(ctx)
	if len(key) > 16 {
		key = key[:16]
	}
	sess := tw.agent.NewSession(EffectiveScopes(u.p, tw.Worker), u.id+"/"+tw.Name+"/"+key,
		&SessionOptions{Actor: "worker:" + tw.Name, Taint: taintFrom(ctx)})
	turn, err := sess.Run(ctx, args.Task)
	reportTaint(ctx, sess.Taint())
	if err != nil {
		return nil, &tools.DomainError{Code: "WORKER_FAILED", Message: fmt.Sprintf("worker %s could not finish: %v", tw.Name, err)}
	}
	return json.Marshal(map[string]any{"worker": tw.Name, "answer": turn.Answer, "calls": len(turn.Calls)})
}
