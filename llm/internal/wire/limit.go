package wire

import (
	"fmt"
	"io"
	"net/http"
)

// MaxReplyBytes bounds the body of every response an adapter reads: a
// chat reply (streamed or not) or an embedding batch. A reply under the
// token budget is a few kilobytes, an embedding batch of 32 cards under a
// megabyte; the bound is far above both and keeps a broken or hostile
// server (a stream that never ends, a 100 MB argument string) from
// costing more than that much memory.
const MaxReplyBytes = 64 << 20

// LimitReplies returns a copy of client ([http.DefaultClient] when nil)
// whose responses fail to read, with an error naming the limit, past max
// bytes of body.
func LimitReplies(client *http.Client, max int64) *http.Client {
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	c.Transport = limitTransport{base: client.Transport, max: max}
	return &c
}

type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	res, err := base.RoundTrip(req)
	if err != nil || res.Body == nil {
		return res, err
	}
	res.Body = &limitBody{ReadCloser: res.Body, left: t.max, max: t.max}
	return res, nil
}

// limitBody reads at most max bytes of a body and then fails.
type limitBody struct {
	io.ReadCloser
	left, max int64
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := b.ReadCloser.Read(one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("the server's response exceeds %d bytes", b.max)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
