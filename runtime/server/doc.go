// Package server is the HTTP API of docs/design.md over the execution
// gateway and discovery, for agents not written in Go:
//
//   - [NewHandler] serves POST /v1/tools/call, the approval endpoints,
//     POST /v1/discover, GET /metrics and GET /healthz; [StatusCode] maps
//     each [gateway.ErrorType] to its status, and [RequestTooLarge],
//     [MethodNotAllowed] and [NotImplemented] are the errors only HTTP has;
//   - identity: an [Authenticator] maps a bearer token to a principal;
//     [TokenFile] is the static token file, runtime/server/oauth the
//     OAuth 2.1 resource server;
//   - [Run] runs it all as a program (`toolgate serve`, `examples/transfer
//     serve`): an http.Server with the contract's timeouts
//     ([NewHTTPServer]), a periodic purge, and a graceful shutdown when the
//     context ends (SIGTERM in the programs).
//
// The package takes a [store.Store] and links no store driver; a program
// that opens one by URL uses runtime/gateway/storeurl:
//
//	st, err := storeurl.Open(ctx, "", dataDir) // or redis://…, postgres://…
//	...
//	g, err := gateway.New(reg, st, &gateway.Options{Registerer: metrics})
//	err = server.Run(ctx, server.Config{Addr: "127.0.0.1:8080", Gateway: g, Registry: reg,
//		Auth: tokens, Gatherer: metrics})
//
// On shutdown the listener closes at once; calls in flight get
// [Config.ShutdownTimeout] to finish and record their outcome, and outcomes
// the store failed to record (the gateway holds them) get what is left of
// it ([gateway.Gateway.Close]). A call still running, or an outcome still
// unrecorded, after that keeps its claim, whose lease then expires: a
// retry with the same key finds it uncertain (the gateway's recording
// table), never a silent second execution. A call still running is
// audited as it is left, outcome uncertain.
package server
