package mcp_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/tools"
	"github.com/toolgate/toolgate/tools/mcp"
)

// Options.Transform (a card overlay) applies to the first listing and to
// every re-listing after list_changed, before the registry publishes it.
func TestTransformAppliesToEveryListing(t *testing.T) {
	ctx := testContext(t)
	srv, url := sdkServer(t, 10, "echo_a")
	reg := tools.NewRegistry()
	changed := make(chan struct{}, 16)
	reg.Subscribe(changed)
	overlay := func(ts []tools.Tool) []tools.Tool {
		out := slices.Clone(ts)
		for i := range out {
			out[i].Card.Tags = append(slices.Clip(out[i].Card.Tags), "the echo server")
		}
		return out
	}
	up, err := mcp.Connect(ctx, reg, mcp.Server{Name: "web", URL: url}, &mcp.Options{Logger: quiet, Transform: overlay})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	addEcho(srv, "echo_new")
	for {
		snap := reg.Snapshot()
		if _, ok := snap.Lookup("web/echo_new"); ok {
			for _, t2 := range snap.Tools() {
				if !slices.Contains(t2.Card.Tags, "the echo server") {
					t.Errorf("%s tags = %q: Transform not applied", t2.ID, t2.Card.Tags)
				}
			}
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("list_changed not applied")
		}
	}
}
