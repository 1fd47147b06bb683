package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/slo"
)

// The flags of a serving benchmark's setup and server steps (issue 27),
// shared by run, ab, bisect and bisect-step; the logic is runner's
// (runner/serve.go).

func serveFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "setup", Usage: "a shell line `CMD` (sh -c) run once in each checkout before any run, e.g. 'pip install -e .'"},
		&cli.StringFlag{Name: "server", Usage: "a shell line `CMD` (sh -c) that starts the server the benchmark measures, kept up across the runs of a commit; it gets a free port as $PERFGATE_PORT"},
		&cli.StringFlag{Name: "ready", Usage: "the server is ready when `URL` answers HTTP 200 ($PERFGATE_PORT is replaced), e.g. 'http://localhost:$PERFGATE_PORT/health'"},
		&cli.StringFlag{Name: "ready-log", Usage: "the server is ready when a line of its output matches `REGEX`, e.g. 'Application startup complete'"},
		&cli.DurationFlag{Name: "ready-timeout", Value: runner.DefaultReadyTimeout, Usage: "how long the server has to become ready (`DURATION`)"},
		&cli.IntFlag{Name: "warmup", Usage: "client runs `N` after each server start that are not stored"},
		&cli.StringFlag{Name: "result-file", Usage: "read the result from `PATH` (a path or glob, relative to where the benchmark runs) that the benchmark writes, e.g. vllm bench serve --save-result --save-detailed --result-dir out --result-filename serve.json: --result-file out/serve.json; read after each run with ingest's format detection and preferred over the output, so per-request data is kept; a file the run did not write is refused as stale"},
		sloFlag(),
	}
}

// parseResultFile reads --result-file and the SLO (--slo, else the rules
// file's slo: for --name) for the runner's Command.
func parseResultFile(c *cli.Context, cmd *runner.Command) error {
	if c.IsSet("result-file") {
		if err := runner.CheckResultFile(c.String("result-file")); err != nil {
			return usageErrorf("%v", err)
		}
		cmd.ResultFile = c.String("result-file")
	}
	if c.IsSet("slo") {
		o, err := slo.Parse(c.String("slo"))
		if err != nil {
			return usageErrorf("--slo: %v", err)
		}
		cmd.SLO = &o
		return nil
	}
	o, err := rulesObjective(c)
	cmd.SLO = o
	return err
}

// serveHelp is the part of a command's description about the flags.
const serveHelp = "\n\nA serving benchmark is three steps: --setup 'CMD' builds or installs the engine once per\n" +
	"checkout; --server 'CMD' starts it in a process group of its own with PERFGATE_PORT set to a\n" +
	"free port, and perfgate waits until --ready URL answers HTTP 200 (or a line of its output\n" +
	"matches --ready-log REGEX) within --ready-timeout; then the benchmark command, the client, runs\n" +
	"against it with $PERFGATE_PORT in its environment, after --warmup runs that are not stored.\n" +
	"The server stays up across the runs of a commit and is stopped (SIGTERM, then SIGKILL, the whole\n" +
	"group) before another commit's starts, at the end and on Ctrl-C. A setup or server that fails\n" +
	"is reported with the end of its output; the stored runs record both commands and the time to ready."

// parseServe reads the setup and server flags; nil without any.
func parseServe(c *cli.Context, e *env) (*runner.Serve, error) {
	s := &runner.Serve{
		Setup: c.String("setup"), Server: c.String("server"), Ready: c.String("ready"),
		ReadyTimeout: c.Duration("ready-timeout"), Warmup: c.Int("warmup"),
		Grace: runGrace, Progress: e.stderr, Cmd: c.Command.Name,
	}
	if s.Server == "" {
		for _, f := range []string{"ready", "ready-log", "ready-timeout", "warmup"} {
			if c.IsSet(f) {
				return nil, usageErrorf("--%s is about the server: pass --server 'CMD' too (the command that starts it), or leave --%s out", f, f)
			}
		}
		if s.Setup == "" {
			return nil, nil
		}
		return s, nil
	}
	ready, readyLog := s.Ready, c.String("ready-log")
	switch {
	case ready != "" && readyLog != "":
		return nil, usageErrorf("pass one of --ready URL or --ready-log REGEX, not both")
	case ready == "" && readyLog == "":
		return nil, usageErrorf("--server needs --ready URL (e.g. --ready 'http://localhost:$PERFGATE_PORT/health') or --ready-log REGEX (e.g. --ready-log 'Application startup complete') to know when the server is ready")
	case ready != "":
		u, err := url.Parse(runner.ReadyURL(ready, 1))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageErrorf("--ready %q is not an http:// or https:// URL; write it like 'http://localhost:$PERFGATE_PORT/health'", ready)
		}
		if strings.HasSuffix(u.Host, ":") {
			return nil, usageErrorf("--ready %q has an empty port (a shell variable such as $PERFGATE_PORT expanded to nothing inside double quotes?): quote it with single quotes, 'http://localhost:$PERFGATE_PORT/health', so perfgate fills in the server's port", ready)
		}
	default:
		re, err := regexp.Compile(readyLog)
		if err != nil {
			return nil, usageErrorf("--ready-log %q is not a regular expression: %v", readyLog, err)
		}
		s.ReadyLog = re
	}
	if s.ReadyTimeout <= 0 {
		return nil, usageErrorf("--ready-timeout %v: must be positive, e.g. 15m (the default)", s.ReadyTimeout)
	}
	if s.Warmup < 0 {
		return nil, usageErrorf("--warmup %d: must be 0 or more client runs", s.Warmup)
	}
	return s, nil
}

// beginServe runs the setup and starts the server in the current
// directory for run and bisect-step; the caller stops it (Stop is
// nil-safe). live shows the setup's and warm-up's output.
func beginServe(ctx context.Context, s *runner.Serve, client runner.Command, live io.Writer) (*runner.Server, error) {
	if !s.Active() {
		return nil, nil
	}
	s.Live = live
	srv, err := s.Begin(ctx, "", nil, client, "")
	if err != nil && errors.Is(err, context.Canceled) {
		return nil, envError(fmt.Errorf("%s: interrupted while starting the server; stopped it and stored nothing", s.Cmd))
	}
	return srv, err
}

// servedFacts renders how the runs were served for a report: the setup
// and server facts of runs (runner.Fact*), one "key: value" line each.
func servedFacts(facts map[string]string) []string {
	names := map[string]string{runner.FactSetup: "setup", runner.FactServer: "server", runner.FactReady: "server ready in (s)", runner.FactServerExit: "server died"}
	var out []string
	for k, v := range facts {
		if n, ok := names[k]; ok && v != "" {
			out = append(out, n+": "+v)
		}
	}
	sort.Strings(out)
	return out
}

// servedJSON is the facts for -o json.
func servedJSON(facts map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range facts {
		if strings.HasPrefix(k, "serve_") {
			out[strings.TrimPrefix(k, "serve_")] = v
		}
	}
	return out
}

// setLogDir keeps the server's logs in a "logs" directory next to the
// history, where unsaved runs and their raw output go too; .perfgate/ is
// kept out of git status first, as openStore does, so that the logs do
// not make a clean checkout look changed.
func setLogDir(s *runner.Serve, c *cli.Context, repo *gitrepo.Repo) {
	if s == nil || s.Server == "" {
		return
	}
	db, err := dbPath(c, repo)
	if err != nil {
		return
	}
	if c.String("db") == "" && repo != nil {
		if err := repo.ExcludePath(".perfgate/"); err != nil {
			return // the temporary directory, then
		}
	}
	s.LogDir = filepath.Join(filepath.Dir(db), "logs")
}
