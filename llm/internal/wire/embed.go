package wire

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/llm"
)

// Embed is what the adapters' Embed methods do alike around their
// client's call: an error naming pkg's [Options].field when model is empty,
// no vectors and no call for no texts, else call's items, which must be
// one per text. An error of call is returned as it is when it is an
// *[llm.StatusError] (call maps its API's errors to one), else as pkg's
// embed error, the context's when ctx has ended.
func Embed[V any](ctx context.Context, pkg, field, model string, texts []string, call func(ctx context.Context) ([]V, error)) ([]V, error) {
	if model == "" {
		return nil, fmt.Errorf("%s: Embed: Options.%s is empty", pkg, field)
	}
	if len(texts) == 0 {
		return nil, nil
	}
	items, err := call(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: embed: %w", pkg, ctx.Err())
		}
		if se := (*llm.StatusError)(nil); errors.As(err, &se) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: embed: %w", pkg, err)
	}
	if len(items) != len(texts) {
		return nil, fmt.Errorf("%s: embed: %d vectors for %d texts", pkg, len(items), len(texts))
	}
	return items, nil
}
