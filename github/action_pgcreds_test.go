package github

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// cleartextServer is a stand-in PostgreSQL server: it refuses TLS (and
// GSS encryption), asks every login for a cleartext password
// (AuthenticationCleartextPassword) and keeps the passwords it is sent.
type cleartextServer struct {
	ln        net.Listener
	mu        sync.Mutex
	conns     int
	passwords []string
}

func newCleartextServer(t *testing.T, host string) *cleartextServer {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", host, err)
	}
	s := &cleartextServer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

// addr is the server's host:port.
func (s *cleartextServer) addr() string { return s.ln.Addr().String() }

func (s *cleartextServer) serve(c net.Conn) {
	defer c.Close()
	s.mu.Lock()
	s.conns++
	s.mu.Unlock()
	for {
		// Untyped start-up packets: int32 length, int32 code, ...
		var hdr [8]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		code := binary.BigEndian.Uint32(hdr[4:])
		if n < 8 || n > 1<<16 {
			return
		}
		if _, err := io.CopyN(io.Discard, c, int64(n-8)); err != nil {
			return
		}
		if code == 80877103 || code == 80877104 { // SSLRequest, GSSENCRequest
			c.Write([]byte{'N'})
			continue
		}
		break // StartupMessage
	}
	c.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 3}) // AuthenticationCleartextPassword
	var hdr [5]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil || hdr[0] != 'p' {
		return
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 || n > 1<<16 {
		return
	}
	pw := make([]byte, n-4)
	if _, err := io.ReadFull(c, pw); err != nil {
		return
	}
	s.mu.Lock()
	s.passwords = append(s.passwords, string(bytes.TrimRight(pw, "\x00")))
	s.mu.Unlock()
	msg := "SFATAL\x00C28P01\x00Mpassword authentication failed\x00\x00"
	out := []byte{'E', 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], uint32(4+len(msg)))
	c.Write(append(out, msg...))
}

// seen returns how many connections the server took and the passwords
// it was sent.
func (s *cleartextServer) seen() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns, append([]string(nil), s.passwords...)
}

// nonLoopbackIP is an address of this machine that is not loopback.
func nonLoopbackIP(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("no address but loopback to stand for a remote database host")
	return ""
}

// TestActionDBNeedsTLS: the action's db input names a host that is not
// loopback and no sslmode; the host refuses TLS and asks for a cleartext
// password. perfgate requires TLS there, so PGPASSWORD is never sent.
func TestActionDBNeedsTLS(t *testing.T) {
	srv := newCleartextServer(t, nonLoopbackIP(t))
	w := newActionWorkspace(t, nil)
	w.extraEnv = []string{"PGPASSWORD=" + secretPG, "PGSSLMODE=", "PGPASSFILE=" + filepath.Join(w.tmp, "no-pgpass")}
	bench := w.write("bench.json", `{"metrics": {"mean_ttft_ms": 100, "completed": 500, "failed": 0}}`)
	log, _, code := w.run("push", map[string]string{"COMMAND": "ingest", "INGEST": bench, "NAME": "serving",
		"DB": "postgres://perfgate@" + srv.addr() + "/perf"})
	conns, passwords := srv.seen()
	for _, pw := range passwords {
		if strings.Contains(pw, secretPG) {
			t.Errorf("the host that refused TLS got PGPASSWORD in the clear (%d connections)\n%s", conns, log)
		}
	}
	if code == 0 || conns == 0 {
		t.Errorf("exit %d after %d connections: want a refused connection to the stand-in server\n%s", code, conns, log)
	}
	if strings.Contains(log, secretPG) {
		t.Errorf("the log shows the password\n%s", log)
	}
}

// TestActionPullRequestRulesDB: a pull request changes db: in
// .perfgate.yml to its own host. The action's sync and ingest on the pull
// request read db: from the base branch's rules (origin/main), which has
// none: the pull request's host is never contacted. Without the base's
// ref, the pull request's db: is used but gets no PGPASSWORD.
func TestActionPullRequestRulesDB(t *testing.T) {
	srv := newCleartextServer(t, "127.0.0.1")
	w := newActionWorkspace(t, nil)
	w.extraEnv = []string{"PGPASSWORD=" + secretPG, "PGSSLMODE=", "PGPASSFILE=" + filepath.Join(w.tmp, "no-pgpass"), "GITHUB_BASE_REF=main"}
	bench := w.write("bench.json", `{"metrics": {"mean_ttft_ms": 100, "completed": 500, "failed": 0}}`)
	rules := filepath.Join(w.work, ".perfgate.yml")
	if err := os.WriteFile(rules, []byte("rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git(w.work, "add", ".perfgate.yml")
	w.git(w.work, "commit", "-q", "-m", "rules")
	w.git(w.work, "push", "-q", "origin", "main")
	w.git(w.work, "checkout", "-q", "-b", "feature")
	if err := os.WriteFile(rules, []byte("db: postgres://perfgate@"+srv.addr()+"/perf?sslmode=disable\nrules:\n  - metric: mean_ttft_ms\n    max_regression: 50%\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git(w.work, "commit", "-q", "-am", "my own database")

	log, _, code := w.run("pull_request", map[string]string{"COMMAND": "ingest", "INGEST": bench, "NAME": "serving"})
	if conns, _ := srv.seen(); conns != 0 || code != 0 || !strings.Contains(log, "using the base's") {
		t.Errorf("with the base's rules at origin/main: exit %d, %d connections to the pull request's database\n%s", code, conns, log)
	}

	// No origin/main: the pull request's db:, without PGPASSWORD.
	w.git(w.work, "update-ref", "-d", "refs/remotes/origin/main")
	log, _, _ = w.run("pull_request", map[string]string{"COMMAND": "ingest", "INGEST": bench, "NAME": "serving", "SYNC": "false"})
	conns, passwords := srv.seen()
	if conns == 0 || !strings.Contains(log, "gets no credentials from the environment") {
		t.Errorf("without origin/main: %d connections, want the pull request's database tried without credentials\n%s", conns, log)
	}
	for _, pw := range passwords {
		if strings.Contains(pw, secretPG) {
			t.Errorf("the pull request's database got PGPASSWORD\n%s", log)
		}
	}
}
