package mcp

import (
	"log/slog"
	"runtime"
	"slices"
	"strings"
)

// DefaultPassEnv returns the variables of toolgate's environment that every
// stdio server is started with, beside its [Server.Env] and
// [Server.PassEnv]. On POSIX systems they are the TypeScript SDK client's
// (HOME, LOGNAME, PATH, SHELL, TERM, USER), where a program looks for
// itself, its user and its terminal, plus TMPDIR, LANG and LC_ALL, where it
// writes temporary files and how it reads text: none of them grants access
// to anything. On Windows they are the SDK's list for Windows. Proxies
// (HTTPS_PROXY: its URL may carry a password) and extra certificate
// authorities (NODE_EXTRA_CA_CERTS: whom the server trusts) are not among
// them; a server that needs them names them in [Server.PassEnv].
func DefaultPassEnv() []string {
	if runtime.GOOS == "windows" {
		return []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH",
			"PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME",
			"USERPROFILE", "PROGRAMFILES"}
	}
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG", "LC_ALL"}
}

// stdioEnviron returns the environment of s's command: the variables of
// [DefaultPassEnv] that lookup finds (but for a value that starts with "()",
// an exported shell function, as the TypeScript SDK skips it), then those
// of s.PassEnv, then s.Env. The slice is never nil, so that exec.Cmd does not
// read it as "inherit everything". A PassEnv name lookup does not find is
// logged.
func stdioEnviron(s Server, lookup func(string) (string, bool), log *slog.Logger) []string {
	env := map[string]string{}
	for _, k := range DefaultPassEnv() {
		if v, ok := lookup(k); ok && !strings.HasPrefix(v, "()") {
			env[k] = v
		}
	}
	for _, k := range s.PassEnv {
		v, ok := lookup(k)
		if !ok {
			log.Warn("mcp: pass_env names a variable toolgate's environment lacks", "server", s.Name, "variable", k)
			continue
		}
		env[k] = v
	}
	for k, v := range s.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}
