// Package testbed says which machine measured a benchmark run: it detects
// the environment (accelerator model and count, CPU model, OS and
// architecture, and in CI the runner's identity) and derives from it a
// short, stable testbed name, the part of a series' identity that keeps
// runs of unlike machines (a laptop, a CI runner) from being compared.
// It knows nothing of git, the store or the gate: callers record what
// Detect returns with each run.
//
// # What is detected
//
// Accelerators are read from the vendor tools when they are on PATH, each
// with a short timeout (a hung driver tool must not hang a benchmark run):
// nvidia-smi (--query-gpu=name --format=csv,noheader: one line per GPU),
// npu-smi (the table of `npu-smi info`: one row "| ID NAME | ..." per NPU)
// and rocm-smi (--showproductname --csv: one row per card, the "Card
// Series" column). The CPU model comes from /proc/cpuinfo ("model name",
// or the implementer and part of ARM cores) on Linux and from sysctl
// machdep.cpu.brand_string on macOS. OS and architecture are Go's GOOS and
// GOARCH. In CI, the runner's identity where the CI system exposes it:
// GitHub Actions (RUNNER_NAME, RUNNER_OS, RUNNER_ARCH, RUNNER_ENVIRONMENT,
// ImageOS), Buildkite (BUILDKITE_AGENT_NAME, BUILDKITE_AGENT_META_DATA_*),
// GitLab (CI_RUNNER_DESCRIPTION, CI_RUNNER_TAGS).
//
// # The default name
//
// Outside CI the name is the hardware: "8x NVIDIA H100 80GB HBM3, AMD EPYC
// 9654 96-Core Processor, linux/amd64" (the accelerator part only when
// there is one). In CI it is "ci:" and what selects a runner, not the
// individual machine, so that every runner of a pool shares one history:
// the CI system, OS/arch, the runner image or labels (GitHub's ImageOS or
// "self-hosted", Buildkite's queue meta-data, GitLab's runner tags) and
// the accelerators, e.g. "ci:github-actions linux/amd64 ubuntu24" or
// "ci:gitlab linux/arm64 [ascend,npu], 8x Ascend 910B3". Runner names and
// CPU models are recorded but left out of the CI name: hosted pools hand
// out machines with different CPUs under one label. Name a testbed
// explicitly (perfgate's --testbed, PERFGATE_TESTBED, or the rules file's
// testbed:) to group machines differently.
package testbed

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout bounds each accelerator tool and sysctl.
const DefaultTimeout = 5 * time.Second

// maxNameLen bounds a derived name (an explicit one is the caller's).
const maxNameLen = 200

// Env is what Detect found. Empty fields were not found.
type Env struct {
	Accelerator      string // model(s), e.g. "NVIDIA H100 80GB HBM3"
	AcceleratorCount int    // how many accelerators
	CPU              string // CPU model
	OS, Arch         string // GOOS and GOARCH
	CI               string // "github-actions", "buildkite", "gitlab"; "" outside CI
	// Runner holds the CI runner's identity facts (runner_name,
	// runner_os, runner_arch, runner_environment, image_os, runner_tags,
	// runner_description, agent_name, meta.KEY for Buildkite meta-data).
	Runner map[string]string
	// Warnings say what could not be detected and why (a tool that timed
	// out or failed); detection never fails.
	Warnings []string
}

// Options configure Detect; the zero value detects this machine.
type Options struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Environ lists the environment as KEY=VALUE (for Buildkite's
	// meta-data variables); nil means os.Environ.
	Environ func() []string
	// Timeout bounds each tool run; zero means DefaultTimeout.
	Timeout time.Duration
	// CPUInfo is the path of /proc/cpuinfo (tests point it elsewhere).
	CPUInfo string
	// GOOS and GOARCH override runtime's (tests).
	GOOS, GOARCH string
}

// Detect reads the environment. It runs at most three accelerator tools
// and, on macOS, sysctl, each bounded by the timeout.
func Detect(ctx context.Context, o Options) Env {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.CPUInfo == "" {
		o.CPUInfo = "/proc/cpuinfo"
	}
	e := Env{OS: o.GOOS, Arch: o.GOARCH}
	if e.OS == "" {
		e.OS = runtime.GOOS
	}
	if e.Arch == "" {
		e.Arch = runtime.GOARCH
	}
	e.detectAccelerators(ctx, o)
	e.CPU = e.detectCPU(ctx, o)
	e.detectCI(o)
	return e
}

// tool describes an accelerator tool: how to ask it and how to read it.
type tool struct {
	name   string
	args   []string
	parse  func([]byte) []string // one model name per device
	vendor string                // prefix for bare model names
}

var tools = []tool{
	{name: "nvidia-smi", args: []string{"--query-gpu=name", "--format=csv,noheader"}, parse: parseNvidiaSMI},
	{name: "npu-smi", args: []string{"info"}, parse: parseNPUSMI, vendor: "Ascend"},
	{name: "rocm-smi", args: []string{"--showproductname", "--csv"}, parse: parseROCmSMI},
}

func (e *Env) detectAccelerators(ctx context.Context, o Options) {
	var models []string
	for _, t := range tools {
		path, err := exec.LookPath(t.name)
		if err != nil {
			continue
		}
		out, err := runTool(ctx, o.Timeout, path, t.args...)
		if err != nil {
			e.Warnings = append(e.Warnings, fmt.Sprintf("%s: %v; accelerators it manages are not recorded (name the testbed with --testbed)", t.name, err))
			continue
		}
		for _, m := range t.parse(out) {
			if t.vendor != "" && !strings.HasPrefix(strings.ToLower(m), strings.ToLower(t.vendor)) {
				m = t.vendor + " " + m
			}
			models = append(models, m)
		}
	}
	e.AcceleratorCount = len(models)
	e.Accelerator = describeModels(models)
}

// describeModels is "MODEL" for identical devices, else "2x A + 1x B".
func describeModels(models []string) string {
	if len(models) == 0 {
		return ""
	}
	counts := map[string]int{}
	var order []string
	for _, m := range models {
		if counts[m] == 0 {
			order = append(order, m)
		}
		counts[m]++
	}
	if len(order) == 1 {
		return order[0]
	}
	sort.Strings(order)
	parts := make([]string, len(order))
	for i, m := range order {
		parts[i] = fmt.Sprintf("%dx %s", counts[m], m)
	}
	return strings.Join(parts, " + ")
}

// runTool runs a tool with a timeout and returns its stdout.
func runTool(ctx context.Context, timeout time.Duration, path string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second // a child holding stdout open must not hang us
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("no answer within %v", timeout)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg != "" {
			return nil, fmt.Errorf("%v: %s", err, msg)
		}
		return nil, err
	}
	return stdout.Bytes(), nil
}

// parseNvidiaSMI reads `nvidia-smi --query-gpu=name --format=csv,noheader`:
// one GPU name per line.
func parseNvidiaSMI(out []byte) []string {
	var models []string
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "name") || strings.Contains(line, "Failed") || strings.Contains(line, "NVIDIA-SMI has failed") {
			continue
		}
		models = append(models, line)
	}
	return models
}

// npuRow is the first line of an NPU in `npu-smi info`: "| 0     910B3  |".
var npuRow = regexp.MustCompile(`^\|\s*(\d+)\s+([A-Za-z0-9][A-Za-z0-9 ._-]*?)\s*\|`)

// parseNPUSMI reads the table of `npu-smi info`: each NPU is a row whose
// first cell holds its id and name ("| 0     910B3      | OK | ..."),
// followed by a row of its chip (id only, or a chip name in the process
// table, which comes after a header naming "Process").
func parseNPUSMI(out []byte) []string {
	var models []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "Process id") || strings.Contains(line, "Process ID") {
			break // the process table follows
		}
		m := npuRow.FindStringSubmatch(line)
		if m == nil || strings.HasPrefix(m[2], "Name") {
			continue
		}
		if _, err := strconv.Atoi(strings.Fields(m[2])[0]); err == nil {
			continue // "| 0   0 |": a chip row, not a name
		}
		models = append(models, m[2])
	}
	return models
}

// parseROCmSMI reads `rocm-smi --showproductname --csv`: a header row and
// one row per card ("card0,..."); the model is the "Card Series" column
// (else "Card Model").
func parseROCmSMI(out []byte) []string {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	rows, err := r.ReadAll()
	if err != nil || len(rows) < 2 {
		return nil
	}
	col := -1
	for _, want := range []string{"card series", "card model"} {
		for i, h := range rows[0] {
			if strings.EqualFold(strings.TrimSpace(h), want) {
				col = i
				break
			}
		}
		if col >= 0 {
			break
		}
	}
	if col < 0 {
		return nil
	}
	var models []string
	for _, row := range rows[1:] {
		if len(row) <= col || !strings.HasPrefix(strings.TrimSpace(row[0]), "card") {
			continue
		}
		if m := strings.TrimSpace(row[col]); m != "" {
			models = append(models, m)
		}
	}
	return models
}

// armParts names common ARM server and laptop cores by implementer and
// part, as lscpu does, for /proc/cpuinfo without "model name".
var armParts = map[string]string{
	"0x48/0xd01": "HiSilicon Kunpeng-920",
	"0x48/0xd02": "HiSilicon Kunpeng-930",
	"0x41/0xd0c": "ARM Neoverse-N1",
	"0x41/0xd40": "ARM Neoverse-V1",
	"0x41/0xd49": "ARM Neoverse-N2",
	"0x41/0xd4f": "ARM Neoverse-V2",
	"0x41/0xd8e": "ARM Neoverse-N3",
	"0xc0/0xac3": "Ampere-1",
	"0x61/0x022": "Apple M1",
}

// detectCPU reads the CPU model.
func (e *Env) detectCPU(ctx context.Context, o Options) string {
	switch e.OS {
	case "darwin":
		path, err := exec.LookPath("sysctl")
		if err != nil {
			return ""
		}
		out, err := runTool(ctx, o.Timeout, path, "-n", "machdep.cpu.brand_string")
		if err != nil {
			e.Warnings = append(e.Warnings, fmt.Sprintf("sysctl machdep.cpu.brand_string: %v; the CPU model is not recorded", err))
			return ""
		}
		return strings.TrimSpace(string(out))
	case "linux":
		b, err := os.ReadFile(o.CPUInfo)
		if err != nil {
			return ""
		}
		return parseCPUInfo(b)
	}
	return ""
}

// parseCPUInfo returns the first "model name" of /proc/cpuinfo, else the
// name of the first ARM core's implementer and part.
func parseCPUInfo(b []byte) string {
	var impl, part string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Join(strings.Fields(v), " ")
		switch k {
		case "model name", "Model Name", "cpu model":
			if v != "" {
				return v
			}
		case "CPU implementer":
			if impl == "" {
				impl = strings.ToLower(v)
			}
		case "CPU part":
			if part == "" {
				part = strings.ToLower(v)
			}
		}
	}
	if impl == "" {
		return ""
	}
	if name, ok := armParts[impl+"/"+part]; ok {
		return name
	}
	return fmt.Sprintf("ARM implementer %s part %s", impl, part)
}

// detectCI reads the runner's identity from the CI system's variables.
func (e *Env) detectCI(o Options) {
	get := func(k string) string { return strings.TrimSpace(o.Getenv(k)) }
	set := func(k, v string) {
		if v == "" {
			return
		}
		if e.Runner == nil {
			e.Runner = map[string]string{}
		}
		e.Runner[k] = v
	}
	switch {
	case get("GITHUB_ACTIONS") == "true":
		e.CI = "github-actions"
		set("runner_name", get("RUNNER_NAME"))
		set("runner_os", get("RUNNER_OS"))
		set("runner_arch", get("RUNNER_ARCH"))
		set("runner_environment", get("RUNNER_ENVIRONMENT"))
		set("image_os", get("ImageOS"))
	case get("BUILDKITE") == "true":
		e.CI = "buildkite"
		set("agent_name", get("BUILDKITE_AGENT_NAME"))
		const prefix = "BUILDKITE_AGENT_META_DATA_"
		for _, kv := range o.Environ() {
			k, v, ok := strings.Cut(kv, "=")
			if ok && strings.HasPrefix(k, prefix) && len(k) > len(prefix) {
				set("meta."+strings.ToLower(k[len(prefix):]), strings.TrimSpace(v))
			}
		}
	case get("GITLAB_CI") == "true":
		e.CI = "gitlab"
		set("runner_description", get("CI_RUNNER_DESCRIPTION"))
		set("runner_tags", strings.Join(parseTags(get("CI_RUNNER_TAGS")), ","))
	}
}

// parseTags reads GitLab's CI_RUNNER_TAGS: a JSON array (GitLab 14+) or
// a comma-separated list; the tags come back sorted.
func parseTags(s string) []string {
	var tags []string
	if strings.HasPrefix(s, "[") {
		if json.Unmarshal([]byte(s), &tags) != nil {
			tags = strings.Split(strings.Trim(s, "[]"), ",")
		}
	} else if s != "" {
		tags = strings.Split(s, ",")
	}
	var out []string
	for _, t := range tags {
		if t = strings.Trim(strings.TrimSpace(t), `"`); t != "" {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// Name is the default testbed name of the environment (see the package
// comment): stable across runs on the same kind of machine.
func (e Env) Name() string {
	accel := ""
	if e.AcceleratorCount > 0 {
		accel = e.Accelerator
		if !strings.Contains(accel, " + ") {
			accel = fmt.Sprintf("%dx %s", e.AcceleratorCount, accel)
		}
	}
	platform := e.OS + "/" + e.Arch
	var parts []string
	if e.CI != "" {
		head := "ci:" + e.CI + " " + platform
		if sel := e.runnerSelector(); sel != "" {
			head += " " + sel
		}
		parts = append(parts, head)
		if accel != "" {
			parts = append(parts, accel)
		}
	} else {
		for _, p := range []string{accel, e.CPU, platform} {
			if p != "" {
				parts = append(parts, p)
			}
		}
	}
	name := strings.Join(parts, ", ")
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return strings.ToValidUTF8(name, "")
}

// runnerSelector is what picks a CI runner pool: GitHub's image (or
// "self-hosted"), Buildkite's queue, GitLab's tags.
func (e Env) runnerSelector() string {
	switch e.CI {
	case "github-actions":
		if img := e.Runner["image_os"]; img != "" {
			return img
		}
		if e.Runner["runner_environment"] == "self-hosted" {
			return "self-hosted"
		}
	case "buildkite":
		if q := e.Runner["meta.queue"]; q != "" {
			return "queue=" + q
		}
	case "gitlab":
		if t := e.Runner["runner_tags"]; t != "" {
			return "[" + t + "]"
		}
	}
	return ""
}

// Map is the environment as the flat key-value record a run stores:
// accelerator, accelerator_count, cpu, os, arch, ci and the runner facts.
func (e Env) Map() map[string]string {
	m := map[string]string{}
	put := func(k, v string) {
		if v != "" {
			m[k] = strings.ToValidUTF8(v, "")
		}
	}
	put("accelerator", e.Accelerator)
	if e.AcceleratorCount > 0 {
		put("accelerator_count", strconv.Itoa(e.AcceleratorCount))
	}
	put("cpu", e.CPU)
	put("os", e.OS)
	put("arch", e.Arch)
	put("ci", e.CI)
	for k, v := range e.Runner {
		put(k, v)
	}
	return m
}

// Unknown is the testbed of results measured on a machine perfgate cannot
// name: a file ingested outside CI without --testbed (a log pasted from
// another machine). Such results compare with each other (one person's
// own files, measured on the machine they always use), never with a
// named testbed's.
const Unknown = "unknown"

// ciVars are the environment variables that say a CI system runs the
// process: the common CI=true (GitHub Actions, GitLab, Buildkite, CircleCI,
// Travis and most others set it) and the systems' own.
var ciVars = []string{"CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD", "TEAMCITY_VERSION"}

// InCI reports whether the process runs in CI: one of ciVars is set to a
// value other than "", "0" or "false". In CI, a result file was measured
// by the job reading it, on the runner; outside CI (a developer's
// machine) a file may come from anywhere.
func InCI(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, k := range ciVars {
		switch v := strings.ToLower(strings.TrimSpace(getenv(k))); v {
		case "", "0", "false":
		default:
			return true
		}
	}
	return false
}
