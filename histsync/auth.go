package histsync

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"net"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/perfgate/perfgate/internal/proc"
)

// initialAuth picks the credentials for an HTTPS remote before the first
// request; see the package comment. It returns nil for other remotes
// (go-git's defaults) and when nothing applies.
func (s *syncer) initialAuth(ctx context.Context) transport.AuthMethod {
	ep, err := transport.NewEndpoint(s.url)
	if err != nil || (ep.Protocol != "http" && ep.Protocol != "https") || ep.User != "" {
		return nil // go-git uses credentials in the URL by itself
	}
	if ep.Protocol == "http" && !loopback(ep.Host) {
		// A token over plain http travels unencrypted: none is sent.
		if s.opts.Token != "" && sameHost(ep, s.opts.TokenHost) && s.opts.Log != nil {
			s.opts.Log("not sending the GitHub token to %s over plain http; use the https:// remote", ep.Host)
		}
		return nil
	}
	if s.opts.Token != "" && sameHost(ep, s.opts.TokenHost) {
		return &githttp.BasicAuth{Username: "x-access-token", Password: s.opts.Token}
	}
	if h := s.extraHeader(ctx); h != "" {
		if a := headerAuth(h); a != nil {
			return a
		}
	}
	return nil
}

// loopback reports whether host is this machine, the one place
// credentials may go over plain http (a test server, a local proxy).
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameHost reports whether the endpoint is host ("name" or "name:port",
// a default port being the same as none).
func sameHost(ep *transport.Endpoint, host string) bool {
	name, port, ok := strings.Cut(host, ":")
	if !ok || port == defaultPort(ep.Protocol) {
		port = ""
	}
	epPort := ""
	if ep.Port != 0 {
		epPort = strconv.Itoa(ep.Port)
	}
	if epPort == defaultPort(ep.Protocol) {
		epPort = ""
	}
	return name != "" && strings.EqualFold(ep.Host, name) && epPort == port
}

func defaultPort(protocol string) string {
	switch protocol {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// extraHeader returns the http.extraheader git would send to the remote's
// URL (actions/checkout stores its token there). git answers with its own
// URL matching and include files; without git, the repository's config is
// read directly.
func (s *syncer) extraHeader(ctx context.Context) string {
	if gitCLI() {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "git", proc.GitArgs("config", "--get-urlmatch", "http.extraheader", s.url)...)
		cmd.Dir = s.dir
		cmd.Env = proc.GitEnv()
		out, err := cmd.Output()
		if err == nil {
			return strings.TrimSpace(lastLine(out))
		}
		return ""
	}
	cfg, err := s.repo.Config()
	if err != nil {
		return ""
	}
	sec := cfg.Raw.Section("http")
	best, value := -1, ""
	for _, sub := range sec.Subsections {
		if strings.HasPrefix(s.url, sub.Name) && len(sub.Name) > best {
			if v := sub.Option("extraheader"); v != "" {
				best, value = len(sub.Name), v
			}
		}
	}
	if value == "" {
		value = sec.Option("extraheader")
	}
	return value
}

// headerAuth turns an "AUTHORIZATION: basic BASE64" or "...: bearer TOKEN"
// header into go-git credentials.
func headerAuth(h string) transport.AuthMethod {
	name, val, ok := strings.Cut(h, ":")
	if !ok || !strings.EqualFold(strings.TrimSpace(name), "authorization") {
		return nil
	}
	scheme, cred, ok := strings.Cut(strings.TrimSpace(val), " ")
	if !ok {
		return nil
	}
	cred = strings.TrimSpace(cred)
	switch strings.ToLower(scheme) {
	case "basic":
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return nil
		}
		user, pass, ok := strings.Cut(string(raw), ":")
		if !ok {
			return nil
		}
		return &githttp.BasicAuth{Username: user, Password: pass}
	case "bearer":
		return &githttp.TokenAuth{Token: cred}
	}
	return nil
}

// askHelper asks git's credential helpers for the remote's credentials,
// once, without prompting; it reports whether it found some.
func (s *syncer) askHelper(ctx context.Context) bool {
	if s.helper || !gitCLI() {
		return false
	}
	s.helper = true
	u, err := url.Parse(s.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	user, pass, ok := credentialFill(ctx, s.dir, u)
	if !ok {
		return false
	}
	s.opts.Log("using the credentials of git's credential helper for %s", u.Host)
	s.auth = &githttp.BasicAuth{Username: user, Password: pass}
	return true
}

// credentialFill runs git credential fill for u with the credential
// helpers of the user's global configuration only, named explicitly: a
// helper the repository's own configuration names (which earlier pull
// request code may have written) never runs, and no helper sees a token
// from perfgate's environment.
func credentialFill(ctx context.Context, dir string, u *url.URL) (user, pass string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var in bytes.Buffer
	in.WriteString("protocol=" + u.Scheme + "\nhost=" + u.Host + "\n")
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		in.WriteString("path=" + p + "\n")
	}
	if u.User != nil && u.User.Username() != "" {
		in.WriteString("username=" + u.User.Username() + "\n")
	}
	in.WriteString("\n")
	helpers := globalHelpers(ctx, dir)
	if len(helpers) == 0 {
		return "", "", false
	}
	args := []string{"-c", "credential.helper="} // clears every helper configured so far
	for _, h := range helpers {
		args = append(args, "-c", "credential.helper="+h)
	}
	cmd := exec.CommandContext(ctx, "git", proc.GitArgs(append(args, "credential", "fill")...)...)
	cmd.Dir = dir
	cmd.Stdin = &in
	cmd.Env = proc.GitEnv("GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never")
	out, err := cmd.Output()
	if err != nil {
		return "", "", false
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "username":
			user = v
		case "password":
			pass = v
		}
	}
	return user, pass, pass != ""
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// redactURL drops credentials from a URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}

// globalHelpers lists the credential helpers of the user's global git
// configuration (reading it runs nothing).
func globalHelpers(ctx context.Context, dir string) []string {
	cmd := exec.CommandContext(ctx, "git", "config", "--global", "--get-all", "credential.helper")
	cmd.Dir = dir
	cmd.Env = proc.GitEnv()
	out, err := cmd.Output()
	if err != nil {
		return nil
	}
	var hs []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			hs = append(hs, l)
		}
	}
	return hs
}
