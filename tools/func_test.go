package tools

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

type searchArgs struct {
	Query string   `json:"query" jsonschema:"what to look for"`
	Limit int      `json:"limit,omitempty"`
	Tags  []string `json:"tags,omitempty"`
}

type searchResult struct {
	Hits []string `json:"hits"`
}

func TestNewFuncHandler(t *testing.T) {
	var errBoom = errors.New("downstream unavailable")
	calls := 0
	tl, err := NewFunc("docs/search", Card{Summary: "Search the docs"}, func(ctx context.Context, in searchArgs) (searchResult, error) {
		calls++
		switch in.Query {
		case "refuse":
			return searchResult{}, &DomainError{Code: "NOT_ALLOWED", Message: "no"}
		case "retry":
			return searchResult{}, NoEffect(errBoom)
		case "unknown":
			return searchResult{}, errBoom
		}
		return searchResult{Hits: append([]string{in.Query}, in.Tags...)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Card.Name != "search" || tl.ID != "docs/search" {
		t.Errorf("NewFunc tool = %s (card name %q), want docs/search (search)", tl.ID, tl.Card.Name)
	}
	if err := CheckInputSchema(tl.InputSchema); err != nil {
		t.Errorf("derived schema %s is not a valid input schema: %v", tl.InputSchema, err)
	}
	tests := []struct {
		args    string
		want    string
		wantErr error
		ran     bool
	}{
		{`{"query":"go","tags":["x"]}`, `{"hits":["go","x"]}`, nil, true},
		{`{"query":"go","limit":3}`, `{"hits":["go"]}`, nil, true},
		{`{"query":"go","extra":1}`, "", ErrInvalidArguments, false},
		{`{"limit":3}`, "", ErrInvalidArguments, false},
		{`{"query":5}`, "", ErrInvalidArguments, false},
		{`[]`, "", ErrInvalidArguments, false},
		{`{"query":"go"} {}`, "", ErrInvalidArguments, false},
		{``, "", ErrInvalidArguments, false}, // zero value lacks the required query
		{`{"query":"refuse"}`, "", &DomainError{}, true},
		{`{"query":"retry"}`, "", errBoom, true},
		{`{"query":"unknown"}`, "", errBoom, true},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			before := calls
			res, err := tl.Handler(context.Background(), json.RawMessage(tt.args))
			if ran := calls > before; ran != tt.ran {
				t.Errorf("Handler(%s) ran fn = %v, want %v", tt.args, ran, tt.ran)
			}
			switch want := tt.wantErr.(type) {
			case nil:
				if err != nil || string(res) != tt.want {
					t.Errorf("Handler(%s) = %s, %v; want %s", tt.args, res, err, tt.want)
				}
			case *DomainError:
				var de *DomainError
				if !errors.As(err, &de) || de.Code != "NOT_ALLOWED" || IsNoEffect(err) {
					t.Errorf("Handler(%s) error = %v, want the DomainError unchanged", tt.args, err)
				}
			default:
				if !errors.Is(err, want) {
					t.Errorf("Handler(%s) error = %v, want %v", tt.args, err, want)
				}
			}
		})
	}
	if _, err := tl.Handler(context.Background(), json.RawMessage(`{"query":"retry"}`)); !IsNoEffect(err) {
		t.Error("fn's NoEffect error lost its marker")
	}
	if _, err := tl.Handler(context.Background(), json.RawMessage(`{"query":"unknown"}`)); IsNoEffect(err) {
		t.Error("fn's plain error was marked NoEffect")
	}
	if _, err := tl.Handler(context.Background(), json.RawMessage(`{"extra":1}`)); !IsNoEffect(err) {
		t.Error("an argument decoding error is not marked NoEffect")
	}
}

func TestNewFuncErrors(t *testing.T) {
	noop := func(context.Context, string) (string, error) { return "", nil }
	if _, err := NewFunc("a/b", Card{}, noop); !errors.Is(err, ErrInvalidTool) {
		t.Errorf("NewFunc with a string input = %v, want ErrInvalidTool", err)
	}
	okFn := func(context.Context, searchArgs) (int, error) { return 0, nil }
	if _, err := NewFunc("nonamespace", Card{}, okFn); !errors.Is(err, ErrInvalidTool) {
		t.Errorf("NewFunc with a bad ID = %v, want ErrInvalidTool", err)
	}
	if _, err := NewFunc("a/b", Card{Name: "c"}, okFn); !errors.Is(err, ErrInvalidTool) {
		t.Errorf("NewFunc with a card name differing from the ID = %v, want ErrInvalidTool", err)
	}
	if _, err := NewFunc[searchArgs, int]("a/b", Card{}, nil); !errors.Is(err, ErrInvalidTool) {
		t.Errorf("NewFunc with a nil function = %v, want ErrInvalidTool", err)
	}
	type withChan struct{ C chan int }
	if _, err := NewFunc("a/b", Card{}, func(context.Context, withChan) (int, error) { return 0, nil }); !errors.Is(err, ErrInvalidTool) {
		t.Errorf("NewFunc with a channel field = %v, want ErrInvalidTool", err)
	}
	bad, err := NewFunc("a/b", Card{}, func(context.Context, searchArgs) (chan int, error) { return make(chan int), nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Handler(context.Background(), json.RawMessage(`{"query":"q"}`)); err == nil || IsNoEffect(err) {
		t.Errorf("an unencodable result = %v, want an error with unknown outcome", err)
	}
	r := NewRegistry()
	fnTool, _ := NewFunc("a/search", Card{}, okFn)
	if err := r.Add(fnTool); err != nil {
		t.Errorf("Registry.Add(NewFunc tool) = %v", err)
	}
}
