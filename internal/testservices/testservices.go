// Package testservices finds or starts the Redis and PostgreSQL servers that
// the scale-out stores' tests run against, always on loopback.
//
// For each engine, in order:
//
//  1. TOOLGATE_REDIS_URL / TOOLGATE_POSTGRES_URL, when set, name a running
//     server (.ci/run starts one of each for the whole run and exports them);
//  2. otherwise the first test that asks starts a private server in a
//     temporary folder on a free loopback port (redis-server; PostgreSQL's
//     initdb and postgres, as the postgres user when running as root), which
//     Main stops when the package's tests end;
//  3. otherwise (the programs are missing) the test is skipped, or failed in
//     CI (testenv.InCI), so a store test never passes vacuously there.
//
// A package using Redis or PostgreSQL must run its tests through [Main]:
//
//	func TestMain(m *testing.M) { os.Exit(testservices.Main(m)) }
//
// Private servers ([NewRedis], [NewPostgres]) belong to one test, which may stop
// and restart them (store-outage tests); they are stopped at the test's end.
package testservices

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/internal/testenv"
)

var (
	mu       sync.Mutex
	inMain   bool
	shared   = map[string]*Server{} // engine → the package's shared private server
	failures = map[string]error{}   // engine → why it could not start
)

// Main runs the package's tests and then stops the servers they started.
// It returns m.Run's exit code.
func Main(m *testing.M) int {
	mu.Lock()
	inMain = true
	mu.Unlock()
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	for name, s := range shared {
		if err := s.Remove(); err != nil {
			fmt.Fprintf(os.Stderr, "testservices: stop %s: %v\n", name, err)
		}
	}
	return code
}

// RedisURL returns the URL of a Redis server for tests (redis://host:port/0).
func RedisURL(tb testing.TB) string { return url(tb, "redis", "TOOLGATE_REDIS_URL", startRedis) }

// PostgresURL returns the URL of a PostgreSQL server for tests
// (postgres://user@host:port/db?sslmode=disable).
func PostgresURL(tb testing.TB) string {
	return url(tb, "postgres", "TOOLGATE_POSTGRES_URL", startPostgres)
}

// PostgresSchema returns [PostgresURL] and the name of a schema no other test
// uses (prefix_PID_N), which is dropped, with everything in it, when the test
// ends: after the cleanups the test registers later, such as closing the
// store that created the schema.
func PostgresSchema(tb testing.TB, prefix string) (url, schema string) {
	tb.Helper()
	url = PostgresURL(tb)
	schema = fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), schemas.Add(1))
	tb.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return url, schema
}

// schemas numbers PostgresSchema's schemas within the process.
var schemas atomic.Int64

func url(tb testing.TB, engine, env string, start func() (*Server, error)) string {
	tb.Helper()
	if u := os.Getenv(env); u != "" {
		return u
	}
	mu.Lock()
	defer mu.Unlock()
	if !inMain {
		tb.Fatalf("testservices: the package must run its tests through testservices.Main to start %s", engine)
	}
	if s := shared[engine]; s != nil {
		return s.URL
	}
	if err := failures[engine]; err != nil {
		unavailable(tb, engine, err)
	}
	s, err := start()
	if err != nil {
		failures[engine] = err
		unavailable(tb, engine, err)
	}
	shared[engine] = s
	return s.URL
}

func unavailable(tb testing.TB, engine string, err error) {
	tb.Helper()
	if testenv.InCI() {
		tb.Fatalf("testservices: %s unavailable (required in CI): %v", engine, err)
	}
	tb.Skipf("testservices: %s unavailable: %v", engine, err)
}

// NewRedis starts a private Redis server for this test alone; it is stopped
// when the test ends.
func NewRedis(tb testing.TB) *Server { return private(tb, "redis", startRedis) }

// NewDurableRedis is [NewRedis] with an append-only file synced on every
// write (appendonly yes, appendfsync always), as docs/operations.md tells
// operators to run a Redis store: an acknowledged write survives a kill.
func NewDurableRedis(tb testing.TB) *Server {
	return private(tb, "redis", func() (*Server, error) {
		return startRedisWith("--save", "", "--appendonly", "yes", "--appendfsync", "always")
	})
}

// NewPostgres starts a private PostgreSQL server for this test alone; it is
// stopped when the test ends.
func NewPostgres(tb testing.TB) *Server { return private(tb, "postgres", startPostgres) }

func private(tb testing.TB, engine string, start func() (*Server, error)) *Server {
	tb.Helper()
	s, err := start()
	if err != nil {
		unavailable(tb, engine, err)
	}
	tb.Cleanup(func() {
		if err := s.Remove(); err != nil {
			tb.Errorf("testservices: stop %s: %v", engine, err)
		}
	})
	return s
}

// Server is a server process this package started. Stop and Start may be
// called from one goroutine at a time.
type Server struct {
	// URL is the client URL; it stays the same across Stop and Start.
	URL string

	dir  string
	argv []string // the server command line
	cred *syscall.Credential
	cmd  *exec.Cmd
	port int
	// ready, when set, says the server accepts work (beyond its port).
	ready func() bool
	log   bytes.Buffer
	exit  chan struct{}
}

// Start starts the (stopped) server again on the same port and data and
// waits until it accepts connections.
func (s *Server) Start() error {
	if s.cmd != nil {
		return errors.New("testservices: already running")
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = &s.log, &s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: s.cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testservices: start %s: %w", s.argv[0], err)
	}
	s.cmd, s.exit = cmd, make(chan struct{})
	go func(exit chan struct{}) { cmd.Wait(); close(exit) }(s.exit)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.addr(), time.Second)
		if err == nil {
			c.Close()
			if s.ready == nil || s.ready() {
				return nil
			}
		}
		select {
		case <-s.exit:
			s.cmd = nil
			return fmt.Errorf("testservices: %s exited: %s", s.argv[0], s.log.String())
		case <-time.After(20 * time.Millisecond): // poll until the deadline
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("testservices: %s did not accept connections within 30s", s.argv[0])
		}
	}
}

// Stop kills the server (SIGKILL, no shutdown: an outage, not a maintenance
// window) and waits for it to exit. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-s.exit:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("testservices: %s did not exit", s.argv[0])
	}
	s.cmd = nil
	return nil
}

func (s *Server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// freePort asks the kernel for an unused loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// newHome finds a free loopback port and makes the temporary folder of a
// private server of engine.
func newHome(engine string) (port int, dir string, err error) {
	if port, err = freePort(); err != nil {
		return 0, "", err
	}
	if dir, err = os.MkdirTemp("", "toolgate-"+engine+"-"); err != nil {
		return 0, "", err
	}
	return port, dir, nil
}

func startRedis() (*Server, error) { return startRedisWith("--save", "", "--appendonly", "no") }

// startRedisWith starts a Redis with the persistence flags given.
func startRedisWith(persistence ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not installed (apt-get install redis-server)")
	}
	port, dir, err := newHome("redis")
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), dir: dir, port: port,
		argv: append([]string{bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--dir", dir, "--daemonize", "no", "--loglevel", "warning"}, persistence...),
	}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// pgBin finds PostgreSQL's server programs (Debian keeps them out of PATH).
func pgBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(matches) == 0 {
		return "", fmt.Errorf("%s is not installed (apt-get install postgresql)", name)
	}
	return matches[len(matches)-1], nil
}

func startPostgres() (*Server, error) {
	initdb, err := pgBin("initdb")
	if err != nil {
		return nil, err
	}
	postgres, err := pgBin("postgres")
	if err != nil {
		return nil, err
	}
	port, dir, err := newHome("pg")
	if err != nil {
		return nil, err
	}
	// PostgreSQL refuses to run as root: run it as the postgres user then.
	var cred *syscall.Credential
	dbUser := "postgres"
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and no postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	} else if u, err := user.Current(); err == nil {
		dbUser = u.Username
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(initdb, "-D", data, "-U", dbUser, "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	// Default durability (fsync on, synchronous commits): an outage test
	// kills the server and counts on acknowledged commits surviving.
	s := &Server{
		URL: fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", dbUser, port), dir: dir, port: port, cred: cred,
		argv: []string{postgres, "-D", data, "-k", dir, "-p", strconv.Itoa(port), "-h", "127.0.0.1",
			"-c", "max_connections=300"},
	}
	if isready, err := pgBin("pg_isready"); err == nil {
		s.ready = func() bool {
			return exec.Command(isready, "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", dbUser, "-d", "postgres").Run() == nil
		}
	}
	if err := s.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Remove stops the server and deletes its folder.
func (s *Server) Remove() error {
	err := s.Stop()
	return errors.Join(err, os.RemoveAll(s.dir))
}

// Ready polls ping (a client's health check) until it succeeds or ctx ends;
// tests use it to wait for a restarted server without sleeping.
func Ready(ctx context.Context, ping func(context.Context) error) error {
	for {
		err := ping(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testservices: not ready: %w (last error: %v)", ctx.Err(), err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
