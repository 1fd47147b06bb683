package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/internal/inert"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/slo"
)

func init() { commandSet = append(commandSet, parseCommand) }

func parseCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "parse",
		Usage:     "parse benchmark output and print the results; stores nothing",
		ArgsUsage: "FILE... (- for stdin; a pattern such as 'results/*.json' is expanded by perfgate; a directory holds the runs a tool wrote)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "benchmark format of the files (auto detects): " + strings.Join(ingest.Formats(), ", ")},
			maxDocFlag(),
			sectionLabelFlag(),
			sloFlag(),
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			out, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			if c.NArg() == 0 {
				return usageErrorf("parse: no FILE given; pass one or more files, or - to read stdin")
			}
			opts, err := readOptions(c)
			if err != nil {
				return err
			}
			results, err := parseFiles(e, c.Args().Slice(), opts)
			if err != nil {
				return err
			}
			for _, r := range results {
				for _, w := range r.Warnings {
					fmt.Fprintf(e.stderr, "perfgate: warning: %s:%d: %s\n", r.File, r.Line, w)
				}
			}
			if out == "json" {
				return writeJSON(e.stdout, map[string]any{"results": results})
			}
			writeResultsText(e.stdout, results)
			return nil
		},
	}
}

// maxDocFlag bounds the size of a structured document (JSON, YAML, CSV,
// Go benchmark output), which the parsers read whole.
func maxDocFlag() cli.Flag {
	return &cli.StringFlag{Name: "max-doc-size", Value: ingest.FormatBytes(ingest.DefaultMaxDocBytes), EnvVars: []string{"PERFGATE_MAX_DOC_SIZE"},
		Usage: "the largest JSON, YAML or CSV document read, `SIZE` like 512MiB or 2GiB (read whole, it takes several times its size in memory)"}
}

// sectionLabelFlag stores each result's markdown heading as a label.
func sectionLabelFlag() cli.Flag {
	return &cli.StringFlag{Name: "section-label", Usage: "store the nearest markdown heading above each result block as label `NAME` (e.g. section), so that the sections of one document (an optimisation log: one section per change) are series of their own; compare them with perfgate compare --a-label NAME=A --b-label NAME=B"}
}

// sloFlag sets the SLO whose goodput and attainment are computed from
// the per-request measurements of the files that carry them.
func sloFlag() cli.Flag {
	return &cli.StringFlag{Name: "slo", Usage: "service-level objective `OBJ` such as ttft_ms=200,tpot_ms=50,e2el_ms=4000 (vLLM's --goodput form ttft:200,tpot:50 too): from the files that carry each request's latencies (vllm --save-detailed, SGLang details), compute request_goodput and slo_attainment, slo_attainment_ttft/_tpot/_e2el (percent of all requests) exactly, as the tool would for the same SLO"}
}

// sectionLabelRE is what --section-label accepts: a label key as the
// parsers write them.
var sectionLabelRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`) })

// readOptions reads --format, --max-doc-size and --section-label.
func readOptions(c *cli.Context) (ingest.Options, error) {
	n, err := parseSize(c.String("max-doc-size"))
	if err != nil {
		return ingest.Options{}, usageErrorf("--max-doc-size (or PERFGATE_MAX_DOC_SIZE) %q: %v; use a size like 512MiB or 2GiB", c.String("max-doc-size"), err)
	}
	section := c.String("section-label")
	if c.IsSet("section-label") && !sectionLabelRE().MatchString(section) {
		return ingest.Options{}, usageErrorf("--section-label %q is not a label name; use letters, digits and _ . - (starting with a letter or _), e.g. --section-label section", section)
	}
	opts := ingest.Options{Format: c.String("format"), MaxDocBytes: n, SectionLabel: section}
	if c.IsSet("slo") {
		o, err := slo.Parse(c.String("slo"))
		if err != nil {
			return ingest.Options{}, usageErrorf("--slo: %v", err)
		}
		opts.SLO = &o
		return opts, nil
	}
	o, err := rulesObjective(c)
	if err != nil {
		return ingest.Options{}, err
	}
	opts.SLO = o
	return opts, nil
}

// rulesObjective is the objective of the rules file's slo: that applies
// to --name (its per-benchmark entry, else the global one), so that
// ingest computes goodput and attainment for the SLO the gate uses
// without --slo; nil when there is none, or outside a checkout.
func rulesObjective(c *cli.Context) (*slo.Objective, error) {
	if !hasFlag(c, "name") {
		return nil, nil // parse: only --slo
	}
	repo, err := openRepo(c)
	if err != nil {
		return nil, nil // not a checkout: ingest says so itself
	}
	defer repo.Close()
	cfg, err := loadConfig(c, repo)
	if err != nil {
		return nil, err
	}
	s, ok := gate.SLOFor(cfg.SLOs, c.String("name"))
	if !ok {
		return nil, nil
	}
	o := slo.Objective{TTFTms: s.TTFTMs, TPOTms: s.TPOTMs, E2ELms: s.E2ELMs}
	if o.IsZero() {
		return nil, nil
	}
	return &o, nil
}

// parseSize reads a byte count: digits with an optional unit B, KiB, MiB,
// GiB (1024-based) or KB, MB, GB (1000-based), case-insensitive.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errors.New("not a size")
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, errors.New("too large")
	}
	units := map[string]int64{"": 1, "b": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "kb": 1e3, "mb": 1e6, "gb": 1e9}
	u, ok := units[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (valid: B, KiB, MiB, GiB, KB, MB, GB)", strings.TrimSpace(t[i:]))
	}
	if n == 0 || n > (1<<62)/u {
		return 0, errors.New("out of range")
	}
	return n * u, nil
}

// parseFiles reads every result of every file, in order. Any error fails
// the whole call: bad input stores nothing and prints nothing.
func parseFiles(e *env, files []string, opts ingest.Options) ([]ingest.Result, error) {
	results := []ingest.Result{}
	if f := strings.ToLower(strings.TrimSpace(opts.Format)); f != "" && !slices.Contains(ingest.Formats(), f) {
		return nil, usageErrorf("%s", ingest.UnknownFormat(opts.Format))
	}
	files, err := expandGlobs(files)
	if err != nil {
		return nil, err
	}
	if files, err = expandDirs(e, files); err != nil {
		return nil, err
	}
	for _, name := range files {
		r, closeFn, err := openInput(e, name, "benchmark output", false)
		if err != nil {
			return nil, err
		}
		defer closeFn()
		ir := ingest.NewReader(r, name, opts)
		for ir.Scan() {
			results = append(results, ir.Result())
		}
		if err := ir.Err(); err != nil {
			return nil, err
		}
		for _, n := range ir.Notes() {
			fmt.Fprintf(e.stderr, "perfgate: note: %s\n", n)
		}
		for _, w := range ir.Warnings() {
			fmt.Fprintf(e.stderr, "perfgate: warning: %s\n", w)
		}
	}
	if len(results) == 0 {
		return nil, usageErrorf("no benchmark result read: every document given was left out (see the notes above); give the result files themselves")
	}
	return results, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeResultsText prints one aligned table per result.
func writeResultsText(w io.Writer, results []ingest.Result) {
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := fmt.Sprintf("%s:%d  %s", shown(r.File), r.Line, r.Format)
		if r.Name != "" {
			title += "  " + shown(r.Name)
		}
		fmt.Fprintln(w, title)
		if len(r.Labels) > 0 {
			keys := make([]string, 0, len(r.Labels))
			for k := range r.Labels {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for j, k := range keys {
				parts[j] = shown(k) + "=" + shown(r.Labels[k])
			}
			fmt.Fprintln(w, "  labels: "+strings.Join(parts, " "))
		}
		if r.Invalid != "" {
			fmt.Fprintln(w, "  invalid: "+shown(r.Invalid))
		}
		if s := r.Requests; s != nil {
			fmt.Fprintf(w, "  requests: %d completed, %d failed; their latencies are summarised for goodput at any SLO (--slo)\n", s.Requests, s.Failed)
		}
		names := sortedMetricNames(r.Metrics)
		lw, vw := 0, 0
		vals := make([]string, len(names))
		for j, name := range names {
			lw = max(lw, len(metric.Get(name).Label))
			vals[j] = formatValue(r.Metrics[name])
			vw = max(vw, len(vals[j]))
		}
		for j, name := range names {
			fmt.Fprintf(w, "  %-*s  %*s  %s\n", lw, shown(metric.Get(name).Label), vw, vals[j], shown(name))
		}
	}
}

// shown is a value read from a benchmark file as one line of inert text:
// a name or label holding an escape sequence or a newline and
// "::error::" is printed, not acted on by a terminal or a CI log.
func shown(s string) string {
	return inert.Line(s, 4096)
}

// sortedMetricNames orders metrics the way vLLM prints them: counts and
// throughputs first, then latencies grouped by kind.
func sortedMetricNames(m map[string]float64) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, rj := metricRank(names[i]), metricRank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

var rankOrder = []string{"completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
	"request_throughput", "request_goodput", "input_throughput", "output_throughput", "max_output_tokens_per_s",
	"max_concurrent_requests", "total_token_throughput"}

func metricRank(n string) float64 {
	for i, r := range rankOrder {
		if n == r {
			return float64(i)
		}
	}
	for i, k := range []string{"_ttft_ms", "_tpot_ms", "_itl_ms", "_e2el_ms"} {
		if stat, ok := strings.CutSuffix(n, k); ok {
			base := 100 + 200*float64(i)
			switch stat {
			case "mean":
				return base
			case "median":
				return base + 1
			case "std":
				return base + 2
			case "min":
				return base + 3
			case "max":
				return base + 4
			}
			if p, err := strconv.ParseFloat(strings.TrimPrefix(stat, "p"), 64); err == nil {
				return base + 5 + p
			}
			return base + 199
		}
	}
	return 10000
}

func formatValue(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

// openInput opens FILE or "-" (stdin) for reading and rejects what cannot
// be what, e.g. "benchmark output": a directory, a missing or unreadable
// file, empty input (unless allowEmpty) and binary data, each with the
// next step.
func openInput(e *env, name, what string, allowEmpty bool) (io.Reader, func(), error) {
	noop := func() {}
	var r io.Reader = e.stdin
	closeFn := noop
	shown := "stdin"
	if name != "-" {
		shown = fmt.Sprintf("%q", name)
		f, err := os.Open(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, noop, usageErrorf("cannot open %q: no such file; check the path", name)
		case errors.Is(err, fs.ErrPermission):
			return nil, noop, usageErrorf("cannot open %q: permission denied; check the file's permissions", name)
		case err != nil:
			return nil, noop, usageErrorf("cannot open %q: %v; check the path", name, err)
		}
		if st, err := f.Stat(); err == nil && st.IsDir() {
			f.Close()
			return nil, noop, usageErrorf("%q is a directory; give the files in it (e.g. %s)", name, filepath.Join(name, "*.txt"))
		}
		r, closeFn = f, func() { f.Close() }
	}
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(8 << 10)
	if len(head) == 0 && !allowEmpty {
		closeFn()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, noop, usageErrorf("cannot read %s: %v", shown, err)
		}
		if name == "-" {
			return nil, noop, usageErrorf("stdin is empty: pipe %s in (e.g. vllm bench serve ... | perfgate ingest -) or give a FILE", what)
		}
		return nil, noop, usageErrorf("%s is empty: it holds no %s; check that the benchmark finished and wrote it", shown, what)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		closeFn()
		next := "give the text or JSON the benchmark printed"
		if what != "benchmark output" {
			next = "check the file name"
		}
		return nil, noop, usageErrorf("%s looks like a binary file, not %s; %s", shown, what, next)
	}
	return br, closeFn, nil
}
