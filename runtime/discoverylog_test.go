package runtime_test

import (
	"bytes"
	"testing"

	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/tools/discovery"
)

// The discovery log links a turn's first shortlist with the tool finally
// called, so `toolgate log misses` can find the requests discovery missed.
func TestDiscoveryLogRecordsTheToolFinallyCalled(t *testing.T) {
	e := newEnv(t, nil, true, nil)
	var buf bytes.Buffer
	disc, err := discovery.New(&discovery.Options{Log: discovery.NewJSONLog(&buf)})
	if err != nil {
		t.Fatal(err)
	}
	model := scripted.New([]scripted.Reply{
		scripted.FindTools("select:get_balance"),
		scripted.Call("get_balance", `{"account":"ACC-00002"}`),
		scripted.Answer("ACC-00002 holds 1000.00."),
		scripted.Call("get_balance", `{"account":"ACC-00001"}`),
		scripted.Answer("ACC-00001 holds 5000.00."),
	}, nil)
	agent, err := runtime.New(e.reg, disc, e.gw, model, &runtime.Options{Strategy: runtime.StrategyProgressive, K: 3, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	sess := agent.NewSession(teller, "s-log", nil)
	if _, err := sess.Run(t.Context(), "open the browser snapshot of the dashboard page"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Run(t.Context(), "what is the balance of ACC-00001"); err != nil {
		t.Fatal(err)
	}
	entries, torn, err := discovery.ReadJSONLog(&buf, "log")
	if err != nil || len(torn) != 0 {
		t.Fatal(err, torn)
	}
	rep := discovery.Misses(entries)
	if rep.Calls != 2 || len(rep.Misses) != 1 || rep.Hits != 1 {
		t.Fatalf("Misses: %d calls, %d hits, %d misses, want 2, 1, 1\n%s", rep.Calls, rep.Hits, len(rep.Misses), buf.String())
	}
	m := rep.Misses[0]
	if m.Called != "bank/get_balance" || m.Query != "open the browser snapshot of the dashboard page" ||
		m.Via != discovery.SourceSelect || m.Tenant != "acme" || m.Principal != "alice" || m.Session != "s-log" {
		t.Errorf("miss = %+v", m)
	}
}
