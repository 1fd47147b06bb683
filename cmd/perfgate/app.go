package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/ingest"

	"github.com/perfgate/perfgate/internal/suggest"

	"github.com/perfgate/perfgate/internal/inert"
	"github.com/perfgate/perfgate/store"
)

// Exit codes, the contract of DESIGN.md.
const (
	exitOK      = 0
	exitFail    = 1 // the gate failed: a regression
	exitBad     = 2 // bad input, usage or configuration
	exitEnv     = 3 // environment: git, store locked, GitHub unreachable
	exitUnknown = exitEnv
)

// exitError carries an exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is a bad-input error (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitBad, err: fmt.Errorf(format, args...)}
}

// envError wraps an environment failure (exit 3).
func envError(err error) error { return &exitError{code: exitEnv, err: err} }

// errGateFailed is returned when the gate failed; the report was printed.
var errGateFailed = &exitError{code: exitFail, err: errors.New("gate failed")}

// exitCode maps an error to the process exit code, in one place.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var pe *ingest.Error
	if errors.As(err, &pe) {
		return exitBad
	}
	if errors.Is(err, store.ErrDamaged) || errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrNeedsMigration) {
		// The history on disk, not what was typed: 3 from every command.
		return exitEnv
	}
	// urfave/cli reports flag and usage problems as plain errors.
	return exitBad
}

// env is what commands see of the process.
type env struct {
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer // perfgate's own messages, inert (internal/inert)
	live   io.Writer // a benchmark's live output, as it prints it
	getenv func(string) string
	isTTY  bool
}

// run is the whole program: it parses args, runs one command and returns
// the exit code. Output goes only to the given writers.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	msgs := &inert.Writer{W: stderr}
	defer msgs.Flush()
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: msgs, live: stderr, getenv: os.Getenv, isTTY: isTerminal(stdout)}
	app := newApp(e)
	args, err := normalizeArgs(app, args)
	if err == nil {
		err = app.RunContext(ctx, args)
	}
	if err == nil {
		return exitOK
	}
	if !errors.Is(err, errGateFailed) {
		msg := err.Error()
		if !strings.HasPrefix(msg, "perfgate") {
			msg = "perfgate: " + msg
		}
		fmt.Fprintln(e.stderr, msg)
	}
	return exitCode(err)
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:  "perfgate",
		Usage: "stop performance regressions before they merge",
		Description: "perfgate ingests or runs a benchmark per commit, keeps the results in a history keyed by commit,\n" +
			"and gates changes with rules such as \"Mean TTFT must not regress by more than 3%\".",
		Writer:          e.stdout,
		ErrWriter:       e.stderr,
		HideHelpCommand: true,
		ExitErrHandler:  func(*cli.Context, error) {}, // run maps errors to exit codes
		OnUsageError: func(c *cli.Context, err error, isSubcommand bool) error {
			return usageErrorf("%s%s (see perfgate --help)", dashedFlags(err), flagSuggestion(err, c.App.Flags))
		},
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "db", Usage: "history database `PATH` or postgres:// URL (default .perfgate/history.db at the repo root)", EnvVars: []string{"PERFGATE_DB"}},
			&cli.StringFlag{Name: "repo", Usage: "git repository `PATH` (default: the repo containing the working directory)"},
		},
		Commands: commands(e),
	}
	app.Version = currentBuild().Version // --version; versioncmd.go prints it all
	app.EnableBashCompletion = true      // perfgate completion
	return app
}

// examples are shown at the end of each command's --help.
var examples = map[string]string{
	"parse": `
perfgate parse bench.txt                      # what perfgate reads from a vllm bench serve log
perfgate parse -o json result.json            # --save-result JSON, AISBench CSV/JSON, MindIE logs, ...
vllm bench serve ... | perfgate parse -`,
	"ingest": `
perfgate ingest --name serving bench.txt
perfgate ingest --name serving --commit $GITHUB_SHA --label hardware=910B result.json
vllm bench serve ... | perfgate ingest --name serving -
perfgate ingest --name serving --section-label section optimisation-log.md   # one series per markdown section`,
	"run": `
perfgate run --name serving --repeat 3 -- vllm bench serve --model Qwen/Qwen2.5-7B-Instruct
perfgate run --name serving -- ./bench.sh && perfgate check
perfgate run --name serving --repeat auto --max-runs 5 -- ./bench.sh && perfgate check
perfgate run --name serving --repeat 3 --warmup 1 --setup 'pip install -e .' \
    --server 'vllm serve M --port $PERFGATE_PORT' --ready 'http://127.0.0.1:$PERFGATE_PORT/health' \
    --run 'vllm bench serve --model M --port $PERFGATE_PORT'`,
	"check": `
perfgate check                                 # HEAD against main, rules from .perfgate.yml
perfgate check --rule 'Mean TTFT:3%' --rule 'failed<=0'
perfgate check --head feature --base main -o markdown --out report.md
perfgate check -o json | jq .verdict`,
	"ab": `
perfgate ab --base main --name serving --rule 'Mean TTFT:5%' -- ./bench.sh
perfgate ab --base v0.9.0 --head feature --repeat 8 --name serving -o markdown --out ab.md -- vllm bench serve ...
perfgate ab --base main --name serving --setup 'python -m venv .venv && .venv/bin/pip install -e .' --server '.venv/bin/vllm serve M --port $PERFGATE_PORT' \
    --ready 'http://127.0.0.1:$PERFGATE_PORT/health' --run '.venv/bin/vllm bench serve --model M --port $PERFGATE_PORT'`,
	"compare": `
perfgate compare main HEAD
perfgate compare v0.9.0 v0.10.0 -o markdown
perfgate compare HEAD --a-label section=Baseline --b-label 'section=Merge rope q/k'   # after ingest --section-label section
perfgate compare --a-label max_num_seqs=64 --b-label max_num_seqs=128                  # two configurations measured at HEAD`,
	"history": `
perfgate history --name serving --metric 'Mean TTFT'
perfgate history --name serving --metric output_throughput --branch main --limit 50 -o csv
perfgate history --name serving --metric p99_ttft_ms --label hardware=910B -o markdown`,
	"export": `
perfgate export > history.jsonl
perfgate export --name serving --since 72h --out recent.jsonl`,
	"import": `
perfgate import history.jsonl
perfgate --db other.db export | perfgate import -`,
	"recover": `
perfgate recover --out runs.jsonl             # after "history ... is damaged"
mv .perfgate/history.db .perfgate/history.db.damaged && perfgate import runs.jsonl && perfgate sync --pull-only`,
	"db": `
perfgate --db postgres://owner@db.internal/perf db migrate        # once, as the database's owner
perfgate --db postgres://owner@db.internal/perf db grant --role ci_engine --repository github.com/org/engine
perfgate export | perfgate --db postgres://ci@db.internal/perf import -   # move a history over (PGPASSWORD holds the password)`,
	"bisect": `
perfgate bisect --good v0.9.0 --bad HEAD --metric 'Mean TTFT' --name serving --run './bench.sh'
perfgate bisect --good v0.9.0 --bad HEAD --metric output_throughput --name serving --stored -o json
perfgate bisect --good v0.9.0 --metric mean_ttft_ms --name serving --setup 'python -m venv .venv && .venv/bin/pip install -e .' \
    --server '.venv/bin/vllm serve M --port $PERFGATE_PORT' --ready 'http://127.0.0.1:$PERFGATE_PORT/health' \
    --run '.venv/bin/vllm bench serve --model M --port $PERFGATE_PORT'`,
	"bisect-step": `
git bisect start HEAD v0.9.0
git bisect run perfgate bisect-step --name serving --metric 'Mean TTFT' --threshold 5% --baseline v0.9.0 --run ./bench.sh`,
	"sync": `
perfgate sync                 # in CI, after perfgate ingest: pull, then push the new runs
perfgate sync --pull-only     # on a laptop: fetch CI's history before perfgate check`,
	"publish": `
perfgate check -o json --out report.json      # in the pull_request workflow (upload it as an artifact)
perfgate publish --report report.json         # in the workflow_run workflow`,
}

// commands lists the commands that work; each file adds its own.
var commandSet []func(*env) *cli.Command

func commands(e *env) []*cli.Command {
	out := make([]*cli.Command, 0, len(commandSet))
	for _, f := range commandSet {
		c := f(e)
		if ex := examples[c.Name]; ex != "" {
			if c.Description != "" {
				c.Description += "\n\n"
			}
			c.Description += "Examples:\n  " + strings.ReplaceAll(strings.TrimSpace(ex), "\n", "\n  ")
		}
		if c.OnUsageError == nil {
			c.OnUsageError = func(cc *cli.Context, err error, _ bool) error {
				return usageErrorf("%s: %s%s (see perfgate %s --help)", cc.Command.Name, dashedFlags(err), flagSuggestion(err, cc.Command.Flags), cc.Command.Name)
			}
		}
		out = append(out, c)
	}
	// --help lists them in the order of the data flow, not of the files
	// that add them; a command not named here goes last.
	rank := func(name string) int {
		if i := slices.Index(helpOrder, name); i >= 0 {
			return i
		}
		return len(helpOrder)
	}
	slices.SortStableFunc(out, func(a, b *cli.Command) int { return rank(a.Name) - rank(b.Name) })
	return out
}

var helpOrder = []string{"parse", "ingest", "run", "check", "ab", "compare", "history", "watch", "accept", "runs", "invalidate", "bisect", "bisect-step", "export", "import", "recover", "sync", "db", "publish"}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	return st.Mode()&os.ModeCharDevice != 0
}

// outputFlag is the -o flag every command shares.
func outputFlag(choices ...string) *cli.StringFlag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: choices[0], Usage: "format of what perfgate prints: " + strings.Join(choices, ", ")}
}

// checkOutput validates -o against the command's choices.
func checkOutput(c *cli.Context, choices ...string) (string, error) {
	o := strings.ToLower(c.String("output"))
	for _, ch := range choices {
		if o == ch {
			return o, nil
		}
	}
	return "", usageErrorf("-o %q is not valid for %s; choose one of: %s", c.String("output"), c.Command.Name, strings.Join(choices, ", "))
}

// cmdArgsCommands take the benchmark command as their arguments: flags after
// its first word belong to it, not to perfgate.
var cmdArgsCommands = map[string]bool{"run": true, "ab": true, "bisect-step": true}

// normalizeArgs rejects an unknown command with a suggestion, and moves the
// flags a user typed after a command's arguments (perfgate compare main HEAD
// -o json) in front of them, where urfave/cli looks for flags; everything
// after "--" is left alone.
func normalizeArgs(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	i := 1
	for i < len(args) {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := findFlag(app.Flags, name)
		if f == nil {
			return args, nil // urfave/cli reports it
		}
		i++
		if !hasValue && !isBoolFlag(f) {
			i++
		}
	}
	if i >= len(args) || args[i] == "--" {
		return args, nil
	}
	name := args[i]
	cmd := app.Command(name)
	if cmd == nil {
		if name == "help" || name == "h" {
			// perfgate help CMD is perfgate CMD --help.
			if i+1 < len(args) && app.Command(args[i+1]) != nil {
				return append(append(append([]string{}, args[:i]...), args[i+1]), "--help"), nil
			}
			return append(append([]string{}, args[:i]...), "--help"), nil
		}
		var names []string
		for _, c := range app.VisibleCommands() {
			names = append(names, c.Name)
		}
		msg := fmt.Sprintf("unknown command %q", name)
		if s := suggest.Closest(name, names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return nil, usageErrorf("%s (commands: %s; see perfgate --help)", msg, strings.Join(names, ", "))
	}
	if cmd.SkipFlagParsing {
		return args, nil
	}
	out := append([]string{}, args[:i+1]...)
	var flags, pos []string
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			pos = append(pos, rest[j:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") || (cmdArgsCommands[cmd.Name] && len(pos) > 0) {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if f := findFlag(cmd.Flags, name); f != nil && !hasValue && !isBoolFlag(f) && j+1 < len(rest) {
			j++
			flags = append(flags, rest[j])
		}
	}
	out = append(out, flags...)
	return append(out, pos...), nil
}

func findFlag(flags []cli.Flag, name string) cli.Flag {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	if name == "help" || name == "h" {
		return cli.HelpFlag
	}
	return nil
}

func isBoolFlag(f cli.Flag) bool {
	_, ok := f.(*cli.BoolFlag)
	return ok
}

// flagNamed is a flag as Go's flag package names it in its errors: one
// dash, even for a long name ("flag provided but not defined: -testbed",
// "flag needs an argument: -name", "invalid value ... for flag -limit").
var flagNamed = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(defined: |argument: |for flag )-([A-Za-z0-9][A-Za-z0-9_-]+)`)
})

// dashedFlags is a flag parsing error with long flags written as they are
// typed, with two dashes.
func dashedFlags(err error) string {
	return flagNamed().ReplaceAllString(err.Error(), "${1}--${2}")
}

// flagSuggestion turns urfave/cli's "flag provided but not defined: -rulez"
// into "; did you mean --rules?".
func flagSuggestion(err error, flags []cli.Flag) string {
	_, bad, ok := strings.Cut(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	bad = strings.TrimLeft(strings.TrimSpace(bad), "-")
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	s := suggest.Closest(bad, names)
	if s == "" {
		return ""
	}
	if len(s) == 1 {
		return fmt.Sprintf("; did you mean -%s?", s)
	}
	return fmt.Sprintf("; did you mean --%s?", s)
}

// runAliasFlag is --run 'CMD', the shell-line form of a benchmark command,
// kept everywhere one is taken: the words after -- are the one form.
func runAliasFlag() cli.Flag {
	return &cli.StringFlag{Name: "run", Usage: "the benchmark as a shell line `CMD` (sh -c), for pipes and &&; an alias of giving the command's words after --"}
}

// commandArgv is the benchmark command of run and ab: the words after --
// (no shell), or --run's shell line; never both.
func commandArgv(c *cli.Context, cmd string) ([]string, error) {
	line, words := c.String("run"), c.Args().Slice()
	switch {
	case line != "" && len(words) > 0:
		return nil, usageErrorf("%s: give the command either after -- (its words) or as --run 'CMD' (a shell line), not both", cmd)
	case line != "":
		return []string{"sh", "-c", line}, nil
	case len(words) == 0:
		return nil, usageErrorf("%s: no command given; write it after --, for example: perfgate %s --name B -- vllm bench serve --model M (or --run 'CMD' for a shell line)", cmd, cmd)
	}
	return words, nil
}
