package runtime_test

import (
	"context"
	"fmt"
	"log"

	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/gateway/memstore"
	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/discovery"
)

type weatherIn struct {
	City string `json:"city"`
}

type weatherOut struct {
	City string `json:"city"`
	Sky  string `json:"sky"`
}

// Example builds an agent from a registry, a discoverer, a gateway and a
// model (here a scripted one, as a test of your own agent would), and runs
// one turn: the model calls the tool through the gateway, then answers.
func Example() {
	weather, err := tools.NewFunc("weather/get_weather", tools.Card{Summary: "Current weather for a city", ReadOnly: true},
		func(_ context.Context, in weatherIn) (weatherOut, error) {
			return weatherOut{City: in.City, Sky: "clear"}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	reg := tools.NewRegistry()
	if err := reg.Add(weather); err != nil {
		log.Fatal(err)
	}
	gw, err := gateway.New(reg, memstore.New(), nil)
	if err != nil {
		log.Fatal(err)
	}
	disc, err := discovery.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	model := scripted.New([]scripted.Reply{
		scripted.Call("get_weather", `{"city":"Paris"}`),
		scripted.Answer("It is clear in Paris."),
	}, nil)
	agent, err := runtime.New(reg, disc, gw, model, &runtime.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}

	sess := agent.NewSession(tools.Principal{ID: "u1", Tenant: "acme"}, "session-1", nil)
	turn, err := sess.Run(context.Background(), "What is the weather in Paris?")
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range turn.Calls {
		fmt.Printf("step %d: %s %s -> %s\n", c.Step, c.Tool, c.Arguments, c.Result)
	}
	fmt.Println(turn.Answer)
	// Output:
	// step 1: weather/get_weather {"city":"Paris"} -> {"city":"Paris","sky":"clear"}
	// It is clear in Paris.
}
