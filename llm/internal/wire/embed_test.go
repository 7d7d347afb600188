package wire

import (
	"context"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/llm"
)

func TestEmbed(t *testing.T) {
	two := []string{"a", "b"}
	vecs := [][]float32{{1}, {2}}
	status := &llm.StatusError{Backend: "ollama", StatusCode: 429}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		model   string
		texts   []string
		got     [][]float32
		err     error
		want    int    // vectors returned
		wantErr string // "" means none
		called  bool
	}{
		{name: "vectors", model: "m", texts: two, got: vecs, want: 2, called: true},
		{name: "no model", texts: two, wantErr: "ollama: Embed: Options.EmbedModel is empty"},
		{name: "no texts", model: "m", called: false},
		{name: "too few vectors", model: "m", texts: two, got: vecs[:1], wantErr: "ollama: embed: 1 vectors for 2 texts", called: true},
		{name: "API error", model: "m", texts: two, err: status, wantErr: status.Error(), called: true},
		{name: "transport error", model: "m", texts: two, err: errors.New("connection refused"), wantErr: "ollama: embed: connection refused", called: true},
		{name: "context ended", ctx: ended, model: "m", texts: two, err: errors.New("connection refused"), wantErr: "ollama: embed: context canceled", called: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			called := false
			got, err := Embed(ctx, "ollama", "EmbedModel", tt.model, tt.texts, func(context.Context) ([][]float32, error) {
				called = true
				return tt.got, tt.err
			})
			if called != tt.called {
				t.Errorf("%s: call made %v, want %v", tt.name, called, tt.called)
			}
			if tt.wantErr == "" {
				if err != nil || len(got) != tt.want {
					t.Errorf("%s: Embed = %d vectors, %v, want %d", tt.name, len(got), err, tt.want)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr || got != nil {
				t.Errorf("%s: Embed = %v, %v, want error %q", tt.name, got, err, tt.wantErr)
			}
		})
	}
	if _, err := Embed(context.Background(), "openai", "EmbeddingModel", "m", []string{"a"}, func(context.Context) ([]int, error) {
		return nil, status
	}); err != status {
		t.Errorf("Embed with an API error = %v, want the *llm.StatusError itself", err)
	}
	if _, err := Embed(ended, "openai", "EmbeddingModel", "m", []string{"a"}, func(ctx context.Context) ([]int, error) {
		return nil, ctx.Err()
	}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed after cancellation = %v, want context.Canceled", err)
	}
}
