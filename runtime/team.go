package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"github.com/toolgate/toolgate/llm"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/runtime/gateway/store"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Worker is a specialised agent of a [Team]: its own tool group, shortlist
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
	// Groups, [Worker.Namespaces] and [Worker.Tools] select the worker's tools: a tool
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
// back as the tool result. Each worker is an [Agent] over the shared registry,
// narrowed to its group, discovering inside it, acting with
// [EffectiveScopes]. Safe for concurrent use; conversations are TeamSessions.
//
// A delegation is a gateway call of the supervisor's session, so a re-sent
// delegation (same session, same step, same task) is replayed from
// [TeamOptions.Store], durable or not, instead of running the worker again;
// the worker's own calls go through the shared gateway.
type Team struct {
	disc    *discovery.Discoverer
	backend llm.Backend
	store   store.Store
	gwOpts  gateway.Options
	supOpts Options
	workers []*teamWorker // in the order given
	probe   *Agent        // a supervisor whose delegations refuse (see NewSession)
}

type teamWorker struct {
	Worker
	agent *Agent
}

// TeamOptions configures a [Team]. Nil means defaults.
type TeamOptions struct {
	// Supervisor configures the supervisor's agent ([Options.Instructions],
	// [Options.Mode], [Options.Observer], ...). Its [Options.Filter] is
	// ignored.
	Supervisor *Options
	// Worker is the base configuration of every worker's agent; a
	// worker's K and Instructions override it, and its Filter is the
	// worker's tool group.
	Worker *Options
	// Store keeps the supervisor's delegations (their slots, recorded
	// answers and audit), usually the caller's own gateway store, so that a
	// delegation re-sent after a restart replays. Nil means a memory store
	// of the team's own.
	Store store.Store
	// Gateway configures the supervisor's gateway (Logger, Registerer,
	// DefaultTimeout, Retention...). Nil means gateway defaults.
	Gateway *gateway.Options
}

// ErrTeam is wrapped by NewTeam's errors.
var ErrTeam = errors.New("runtime: invalid team")

// delegationSchema is the input schema of a worker as the supervisor's tool:
// a task that is not empty, so that a delegation without one goes back to
// the model for repair instead of running as a call that fails.
var delegationSchema = json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","minLength":1,"description":"What the worker should do, in full: it sees nothing else of the conversation."}},"required":["task"],"additionalProperties":false}`)

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
	team := &Team{disc: disc, backend: backend, store: o.Store}
	if team.store == nil {
		team.store = memstore.New()
	}
	if o.Gateway != nil {
		team.gwOpts = *o.Gateway
	}
	seen := map[string]bool{}
	for _, w := range workers {
		if !workerName.MatchString(w.Name) {
			return nil, fmt.Errorf("%w: worker name %q must match %s", ErrTeam, w.Name, workerName)
		}
		if seen[w.Name] {
			return nil, fmt.Errorf("%w: worker %q is listed twice", ErrTeam, w.Name)
		}
		seen[w.Name] = true
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
		team.workers = append(team.workers, &teamWorker{Worker: w, agent: a})
	}
	if o.Supervisor != nil {
		team.supOpts = *o.Supervisor
	}
	team.supOpts.Filter = nil
	if team.supOpts.Instructions == "" {
		team.supOpts.Instructions = "You are a supervisor. Delegate each piece of work to the worker whose description fits, with a complete task description, and answer the user from the workers' results."
	}
	// Build one supervisor now so that a bad option fails here, not in
	// NewSession.
	probe, err := team.supervisor(nil)
	if err != nil {
		return nil, err
	}
	team.probe = probe
	return team, nil
}

// supervisor builds the supervisor's agent for one team session: a
// registry of the workers whose handlers delegate for ts (nil: handlers
// that refuse), and a gateway over it on the team's store.
func (t *Team) supervisor(ts *TeamSession) (*Agent, error) {
	reg := tools.NewRegistry()
	for _, tw := range t.workers {
		tw := tw
		err := reg.Add(tools.Tool{
			ID: "workers/" + tw.Name,
			Card: tools.Card{Name: tw.Name, Summary: tw.Summary, NotFor: tw.NotFor, Group: "workers",
				Aliases: tw.Groups},
			Description: tw.Summary,
			InputSchema: delegationSchema,
			Handler: func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
				if ts == nil {
					return nil, tools.NoEffect(errors.New("runtime: delegation without a team session"))
				}
				return ts.delegate(ctx, tw, raw)
			},
		})
		if err != nil {
			return nil, fmt.Errorf("%w: worker %s: %v", ErrTeam, tw.Name, err)
		}
	}
	gw, err := gateway.New(reg, t.store, &t.gwOpts)
	if err != nil {
		return nil, fmt.Errorf("%w: supervisor gateway: %v", ErrTeam, err)
	}
	so := t.supOpts
	a, err := New(reg, t.disc, gw, t.backend, &so)
	if err != nil {
		return nil, fmt.Errorf("%w: supervisor: %v", ErrTeam, err)
	}
	return a, nil
}

// TeamSession is one conversation of a user with a team: the supervisor's
// Session, whose calls are delegations. It owns what the delegations share:
// the user, and the taint, which travels from the session to each worker it
// delegates to (the worker's own calls then carry it; the delegation itself
// is not held) and back from each worker that read untrusted output.
type TeamSession struct {
	*Session
	err error // building the session's supervisor failed

	mu    sync.Mutex
	taint string
}

// Run is [Session.Run]: the supervisor's loop, whose calls are delegations.
func (ts *TeamSession) Run(ctx context.Context, input string) (*Turn, error) {
	if ts.err != nil {
		return nil, ts.err
	}
	return ts.Session.Run(ctx, input)
}

// NewSession starts a conversation of user with the team. opts.Taint
// starts it tainted; the other fields restore the supervisor's session.
func (t *Team) NewSession(user tools.Principal, id string, opts *SessionOptions) *TeamSession {
	ts := &TeamSession{}
	sup, err := t.supervisor(ts)
	if err != nil {
		// Unreachable: [NewTeam] built a supervisor from the same options.
		// Should it happen, Run reports it and nothing is delegated.
		sup, ts.err = t.probe, err
	}
	var so SessionOptions
	if opts != nil {
		so = *opts
	}
	ts.taint, so.Taint = so.Taint, ""
	ts.Session = sup.NewSession(user, id, &so)
	return ts
}

// Taint reports what untrusted tool output the team session has read,
// through any of its workers ("" when none).
func (ts *TeamSession) Taint() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.taint
}

// delegation is what a team session hands a worker: the user it acts
// for, the session and delegation it belongs to, the taint so far, the task.
type delegation struct {
	user      tools.Principal
	sessionID string
	key       string // the delegation's idempotency key
	taint     string
	task      string
}

// delegate runs one delegation of ts to tw and takes back the worker's taint.
func (ts *TeamSession) delegate(ctx context.Context, tw *teamWorker, raw json.RawMessage) (json.RawMessage, error) {
	var args struct {
		Task string `json:"task"`
	}
	if err := json.Unmarshal(raw, &args); err != nil || args.Task == "" {
		return nil, tools.NoEffect(errors.New("a delegation needs a task"))
	}
	key, _ := tools.IdempotencyKey(ctx)
	d := delegation{user: ts.principal, sessionID: ts.id, key: key, taint: ts.Taint(), task: args.Task}
	out, taint, err := tw.run(ctx, d)
	if taint != "" && !ts.agent.opts.NoTaint {
		ts.mu.Lock()
		if ts.taint == "" {
			ts.taint = taint
		}
		ts.mu.Unlock()
	}
	return out, err
}

// mayHaveActed reports whether turn, of a session of p, made a call that
// may have taken effect: a call of a tool that is not read-only that
// succeeded or whose outcome is unknown (see mayHaveRun).
func (a *Agent) mayHaveActed(p tools.Principal, turn *Turn) bool {
	if turn == nil {
		return false
	}
	view := a.view(p)
	for _, c := range turn.Calls {
		if t, ok := view.Get(c.Tool); ok && t.Card.ReadOnly {
			continue
		}
		if c.Err == nil || mayHaveRun(c.Err) {
			return true
		}
	}
	return false
}

// run is one delegation: a worker session acting with the intersection of
// the user's and the worker's scopes, in a session whose ID is namespaced
// by the worker and the delegation's idempotency key, so a re-delegated
// task replays its calls instead of re-executing them. It returns the
// worker's answer and the worker session's taint. A worker that fails is a
// WORKER_FAILED refusal when it did nothing that may have taken effect,
// and an error of unknown outcome otherwise (see mayHaveActed).
func (tw *teamWorker) run(ctx context.Context, d delegation) (json.RawMessage, string, error) {
	key := d.key
	if len(key) > 16 {
		key = key[:16]
	}
	sess := tw.agent.NewSession(EffectiveScopes(d.user, tw.Worker), d.sessionID+"/"+tw.Name+"/"+key,
		&SessionOptions{Actor: "worker:" + tw.Name, Taint: d.taint})
	turn, err := sess.Run(ctx, d.task)
	if err != nil {
		if tw.agent.mayHaveActed(sess.principal, turn) {
			// Not a refusal on the merits: the delegation's outcome is
			// unknown, so a repeat is re-sent under its key and the worker
			// replays its calls in the same namespace, not anew in another.
			return nil, sess.Taint(), fmt.Errorf("runtime: worker %s could not finish after a call that may have taken effect: %w", tw.Name, err)
		}
		return nil, sess.Taint(), &tools.DomainError{Code: "WORKER_FAILED", Message: fmt.Sprintf("worker %s could not finish: %v", tw.Name, err)}
	}
	out, err := json.Marshal(map[string]any{"worker": tw.Name, "answer": turn.Answer, "calls": len(turn.Calls)})
	return out, sess.Taint(), err
}
