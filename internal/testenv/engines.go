package testenv

import (
	"os"
	"testing"
)

// Live inference engines. .ci/engines builds and starts them and exports
// these variables; a user points them at their own servers. Unlike the
// other resources, a missing engine skips its live tests in CI too: the
// engines are built from source on the CI machine, and a failed build must
// not keep the rest of a change from landing. .ci/engines then sets the
// *_UNAVAILABLE variable to the reason, and the skip says it loudly.

// LlamaCpp returns the OpenAI API root of a live llama.cpp server
// (TOOLGATE_LLAMACPP_URL, e.g. http://127.0.0.1:8080/v1), or skips the
// test saying why there is none.
func LlamaCpp(tb testing.TB) string {
	tb.Helper()
	url := os.Getenv("TOOLGATE_LLAMACPP_URL")
	if url == "" {
		skipEngine(tb, "TOOLGATE_LIVE_LLAMACPP_UNAVAILABLE", "TOOLGATE_LLAMACPP_URL is not set: no live llama.cpp server to test against")
	}
	return url
}

// Ollama returns the model to test (TOOLGATE_OLLAMA_MODEL, default
// llama3.2) on the live Ollama server OLLAMA_HOST names, or skips the test
// saying why there is none.
func Ollama(tb testing.TB) (model string) {
	tb.Helper()
	if os.Getenv("OLLAMA_HOST") == "" {
		skipEngine(tb, "TOOLGATE_LIVE_OLLAMA_UNAVAILABLE", "OLLAMA_HOST is not set: no live Ollama server to test against")
	}
	if model = os.Getenv("TOOLGATE_OLLAMA_MODEL"); model == "" {
		model = "llama3.2"
	}
	return model
}

// LiveEmbed returns the OpenAI API root of a live embedding server
// (TOOLGATE_LIVE_EMBED_URL, e.g. http://127.0.0.1:8081/v1: .ci/engines
// starts llama-server --embeddings there) and the model name to send it
// (TOOLGATE_LIVE_EMBED_MODEL, default "local"), or skips the test saying
// why there is none.
func LiveEmbed(tb testing.TB) (url, model string) {
	tb.Helper()
	url = os.Getenv("TOOLGATE_LIVE_EMBED_URL")
	if url == "" {
		skipEngine(tb, "TOOLGATE_LIVE_EMBED_UNAVAILABLE", "TOOLGATE_LIVE_EMBED_URL is not set: no live embedding server to test against")
	}
	if model = os.Getenv("TOOLGATE_LIVE_EMBED_MODEL"); model == "" {
		model = "local"
	}
	return url, model
}

func skipEngine(tb testing.TB, unavailable, unset string) {
	tb.Helper()
	if why := os.Getenv(unavailable); why != "" {
		tb.Skipf("ENGINE UNAVAILABLE, live test SKIPPED: %s (%s)", why, unavailable)
	}
	tb.Skip(unset)
}

// HostedModel returns the model to test (modelEnv, default def) on a hosted
// API whose key keyEnv holds, or skips the test saying that there is no
// live what to test against. CI starts no hosted API, so a missing key is a
// plain skip there too.
func HostedModel(tb testing.TB, keyEnv, modelEnv, def, what string) (model string) {
	tb.Helper()
	if os.Getenv(keyEnv) == "" {
		tb.Skipf("%s is not set: no live %s to test against", keyEnv, what)
	}
	if model = os.Getenv(modelEnv); model == "" {
		model = def
	}
	return model
}

// LocalModel returns llama.cpp's library and a GGUF model for the
// in-process local backend (TOOLGATE_LIVE_LIBLLAMA and
// TOOLGATE_LIVE_LOCAL_MODEL: .ci/engines builds libllama.so beside
// llama-server), or skips the test saying why there are none.
func LocalModel(tb testing.TB) (library, model string) {
	tb.Helper()
	library, model = os.Getenv("TOOLGATE_LIVE_LIBLLAMA"), os.Getenv("TOOLGATE_LIVE_LOCAL_MODEL")
	if library == "" || model == "" {
		skipEngine(tb, "TOOLGATE_LIVE_LOCAL_UNAVAILABLE", "TOOLGATE_LIVE_LIBLLAMA and TOOLGATE_LIVE_LOCAL_MODEL are not both set: no libllama.so and GGUF model to test the local backend with")
	}
	return library, model
}
