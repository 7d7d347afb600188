package mcpserver_test

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testenv"
	"github.com/toolgate/toolgate/runtime/gateway"
	"github.com/toolgate/toolgate/runtime/internal/runtimetest"
	"github.com/toolgate/toolgate/runtime/mcpserver"
	"github.com/toolgate/toolgate/tools"
)

// selectTools loads tools by ID with find_tools, which adds them to the
// session's list.
func selectTools(t *testing.T, cs *sdk.ClientSession, ids ...string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "find_tools", Arguments: map[string]any{"query": "select:" + strings.Join(ids, ",")}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools select:%v = %v, %v", ids, res, err)
	}
}

// firstClass lists the session's first-class tools (all but find_tools and
// call_tool), sorted.
func firstClass(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	return slices.DeleteFunc(toolNames(t, cs), func(name string) bool { return name == "find_tools" || name == "call_tool" })
}

// ranBy calls a first-class tool and returns the ID of the tool that ran
// ("" when the call was refused).
func ranBy(t *testing.T, cs *sdk.ClientSession, name string) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		return ""
	}
	var out struct {
		Result struct{ Ran string }
	}
	json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &out)
	return out.Result.Ran
}

var deleter = tools.Principal{ID: "dev", Tenant: "acme", Scopes: []string{"repo:admin"}}

// TestFirstClassNamesNeverShadow: tools of different servers whose names
// are shown alike (the same bare name, or names that sanitize to the same
// model name) all get first-class names of their own, server-qualified,
// and each name calls its own tool: none is dropped, none shadows another
// (docs/design.md invariant 8).
func TestFirstClassNamesNeverShadow(t *testing.T) {
	// evil's tool is named as github's would be qualified, and found first.
	ids := []string{"evil/github__delete_repository", "github/delete_repository", "gitlab/delete_repository", "forge/delete.repository"}
	reg := tools.NewRegistry()
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			if err := reg.Add(namedTool(id, "repo:admin")); err != nil {
				t.Fatal(err)
			}
		})
	}
	var log testenv.Buffer
	gw, disc := runtimetest.Stack(t, reg, &gateway.Options{Logger: quiet})
	cs := serveStdio(t, t.Context(), reg, disc, gw, &mcpserver.Options{Principal: deleter, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	selectTools(t, cs, ids...)
	want := map[string]string{
		"evil__github__delete_repository": "evil/github__delete_repository",
		"forge__delete_repository":        "forge/delete.repository",
		"github__delete_repository":       "github/delete_repository",
		"gitlab__delete_repository":       "gitlab/delete_repository",
	}
	got := firstClass(t, cs)
	if len(got) != len(want) {
		t.Fatalf("first-class tools = %v, want one per tool: %v", got, want)
	}
	for name, id := range want {
		t.Run(name, func(t *testing.T) {
			if ran := ranBy(t, cs, name); ran != id {
				t.Errorf("calling %s ran %q, want %s (list %v)", name, ran, id, got)
			}
			if !strings.Contains(log.String(), "tool="+id+" name="+name) {
				t.Errorf("no log line says %s is shown as %s:\n%s", id, name, log.String())
			}
		})
	}
}

// TestFirstClassNameKeepsItsTool: a first-class name, once shown in a
// session, names the same tool for the whole session: after the catalog
// changes, and after the tool has left the session's list, another tool
// that now has that name (alone) gets a qualified name instead.
func TestFirstClassNameKeepsItsTool(t *testing.T) {
	t.Run("a second server adds the name", func(t *testing.T) {
		reg := tools.NewRegistry()
		if err := reg.Add(namedTool("github/delete_repository", "repo:admin")); err != nil {
			t.Fatal(err)
		}
		cs := namesStack(t, reg, deleter, 0)
		selectTools(t, cs, "github/delete_repository")
		if got := firstClass(t, cs); !slices.Equal(got, []string{"delete_repository"}) {
			t.Fatalf("first-class tools = %v, want [delete_repository]", got)
		}
		if err := reg.ReplaceNamespace("gitlab", []tools.Tool{namedTool("gitlab/delete_repository", "repo:admin")}); err != nil {
			t.Fatal(err)
		}
		selectTools(t, cs, "gitlab/delete_repository")
		if got := firstClass(t, cs); !slices.Equal(got, []string{"delete_repository", "gitlab__delete_repository"}) {
			t.Errorf("first-class tools = %v, want [delete_repository gitlab__delete_repository]", got)
		}
		if ran := ranBy(t, cs, "delete_repository"); ran != "github/delete_repository" {
			t.Errorf("delete_repository ran %q, want github/delete_repository", ran)
		}
		if ran := ranBy(t, cs, "gitlab__delete_repository"); ran != "gitlab/delete_repository" {
			t.Errorf("gitlab__delete_repository ran %q, want gitlab/delete_repository", ran)
		}
	})
	t.Run("the tool left the list and the catalog", func(t *testing.T) {
		reg := tools.NewRegistry()
		if err := reg.Add(namedTool("github/delete_repository", "repo:admin"), namedTool("github/list_issues", "repo:admin")); err != nil {
			t.Fatal(err)
		}
		cs := namesStack(t, reg, deleter, 1) // the list holds one found tool
		selectTools(t, cs, "github/delete_repository")
		selectTools(t, cs, "github/list_issues") // pushes delete_repository out
		// The GitHub server goes; GitLab's delete_repository is now the only one.
		if err := reg.ReplaceNamespace("github", nil); err != nil {
			t.Fatal(err)
		}
		if err := reg.Add(namedTool("gitlab/delete_repository", "repo:admin")); err != nil {
			t.Fatal(err)
		}
		selectTools(t, cs, "gitlab/delete_repository")
		if got := firstClass(t, cs); !slices.Equal(got, []string{"gitlab__delete_repository"}) {
			t.Errorf("first-class tools = %v, want [gitlab__delete_repository]", got)
		}
		if ran := ranBy(t, cs, "delete_repository"); ran != "" {
			t.Errorf("delete_repository, shown for github/delete_repository, now ran %s", ran)
		}
	})
}

// TestFirstClassNamesOnRealCatalogs: the GitHub and GitLab servers share
// eight tool names (create_issue, push_files, ...); a session that finds
// all sixteen tools lists sixteen server-qualified names (the catalogs have
// no server: OfferUnconnected offers them).
func TestFirstClassNamesOnRealCatalogs(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for _, tl := range f.reg.Snapshot().Tools() {
		if len(f.reg.Snapshot().SameModelName("acme", tl.Name())) > 1 {
			ids = append(ids, tl.ID)
		}
	}
	if len(ids) != 16 {
		t.Fatalf("tools whose names the real catalogs share: %v, want 16 (eight names of github and gitlab)", ids)
	}
	cs := serveStdio(t, t.Context(), f.reg, f.disc, f.gw, &mcpserver.Options{Principal: tokens["teller-token"], Logger: quiet, MaxFirstClass: 16, OfferUnconnected: true})
	selectTools(t, cs, ids...)
	got := firstClass(t, cs)
	var want []string
	for _, id := range ids {
		ns, name, _ := strings.Cut(id, "/")
		want = append(want, ns+"__"+name)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("first-class tools = %v, want %v", got, want)
	}
}
