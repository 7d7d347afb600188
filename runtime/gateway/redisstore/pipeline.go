package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/internal/batching"
)

// pipeliner sends the scripts of concurrent callers to Redis together:
// whatever arrives while a round trip is in flight goes out in the next one,
// as one pipeline (one write, one read), so N concurrent calls cost about
// one round trip's system calls instead of N. Redis still runs each script
// alone and in order, so atomicity is unchanged; only the transport is
// shared. A few senders run at once, so one slow round trip does not hold
// up the others.
type pipeliner struct {
	rdb redis.UniversalClient
	max int
	q   *batching.Queue[*scriptOp]
	wg  sync.WaitGroup
}

type scriptOp struct {
	ctx    context.Context
	script *redis.Script
	keys   []string
	args   []any
	cmd    *redis.Cmd
	done   chan struct{}
}

// errClosed is what a script gets once the store is closed.
var errClosed = errors.New("redisstore: store closed")

// senders is how many round trips may be in flight at once.
const senders = 2

func newPipeliner(rdb redis.UniversalClient, max int) *pipeliner {
	p := &pipeliner{rdb: rdb, max: max, q: batching.New[*scriptOp](max*senders, errClosed)}
	for range senders {
		p.wg.Go(func() { p.q.Consume(max, p.fill, p.send) })
	}
	return p
}

// run runs script with keys and args, in the next pipeline, and returns its
// reply. When ctx ends before the script was sent, it is not sent and ctx's
// error is returned; once sent, run waits for the reply, so that an answer
// always says what Redis did.
func (p *pipeliner) run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	op := &scriptOp{ctx: ctx, script: script, keys: keys, args: args, done: make(chan struct{})}
	if err := p.q.Submit(ctx, op); err != nil {
		return errCmd(ctx, err)
	}
	<-op.done
	return op.cmd
}

func errCmd(ctx context.Context, err error) *redis.Cmd {
	c := redis.NewCmd(ctx)
	c.SetErr(err)
	return c
}

// close sends what is queued, then stops the senders.
func (p *pipeliner) close() {
	p.q.Close()
	p.wg.Wait()
}

// fill adds what is queued to a batch, up to max scripts: whatever arrived
// while the last round trip was in flight.
func (p *pipeliner) fill(batch []*scriptOp) []*scriptOp { return p.q.Fill(batch, p.max) }

// send runs one batch as one pipeline of EVALSHAs. A script the server
// does not know (a restarted or flushed Redis) is sent again by itself with
// Script.Run, which loads it.
func (p *pipeliner) send(batch []*scriptOp) {
	// The batch's scripts must be answered even if the caller that sent
	// the first gave up: the others wait for the same round trip.
	ctx := context.Background()
	pipe := p.rdb.Pipeline()
	sent := batch[:0:0]
	for _, op := range batch {
		if err := op.ctx.Err(); err != nil {
			op.cmd = errCmd(op.ctx, err)
			close(op.done)
			continue
		}
		op.cmd = op.script.EvalSha(ctx, pipe, op.keys, op.args...)
		sent = append(sent, op)
	}
	if len(sent) == 0 {
		return
	}
	_, _ = pipe.Exec(ctx) // each command carries its own error
	for _, op := range sent {
		if err := op.cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
			op.cmd = op.script.Run(ctx, p.rdb, op.keys, op.args...)
		}
		close(op.done)
	}
}
