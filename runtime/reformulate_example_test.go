package runtime_test

import (
	"log"
	"time"

	"github.com/toolgate/toolgate/llm/scripted"
	"github.com/toolgate/toolgate/runtime"
	"github.com/toolgate/toolgate/tools/discovery"
)

// Below a confidence threshold, discovery asks the agent's model to
// rewrite the request into tool vocabulary and searches again. (Not run:
// its output depends on the model.)
func ExampleNewModelReformulator() {
	backend := scripted.New([]scripted.Reply{scripted.Answer("create github issue")}, nil)

	r, err := runtime.NewModelReformulator(backend, &runtime.ReformulatorOptions{Timeout: 2 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	d, err := discovery.New(&discovery.Options{Reformulator: r, FuseReformulation: true,
		ReformulateBelow: runtime.ModelReformulateBelow}) // 0.3
	if err != nil {
		log.Fatal(err)
	}
	_ = d
}
