package oauth_test

import (
	"fmt"

	"github.com/toolgate/toolgate/runtime/server"
	"github.com/toolgate/toolgate/runtime/server/oauth"
)

// A Verifier is the gateway's Authenticator.
var _ server.Authenticator = (*oauth.Verifier)(nil)

// The challenge a 401 carries, and where the metadata is.
func ExampleVerifier_Challenge() {
	v, err := oauth.New(&oauth.Options{Issuer: "https://id.example.com", Audience: "https://gw.example.com/mcp"})
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Challenge("invalid_token", ""))
	fmt.Println(v.Metadata().AuthorizationServers)
	// Output:
	// Bearer resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token"
	// [https://id.example.com]
}
