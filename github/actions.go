package github

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// summaryNote ends a job summary that was cut to GitHub's limit.
const summaryNote = "\n> [!NOTE]\n> This report was shortened to fit GitHub's 1 MiB job summary limit; the step's report-file output names a file with the whole report, and `perfgate check -o markdown --out FILE` writes it whole.\n"

// MaxStepOutput is GitHub's limit on one step output, in bytes.
const MaxStepOutput = 1_000_000

// MaxEnvString is Linux's limit on one environment string (NAME=value),
// MAX_ARG_STRLEN: a later step that reads an output through env: fails
// to start ("argument list too long") beyond it.
const MaxEnvString = 128 << 10

// maxReportOutput bounds the report output well below MaxEnvString (and
// so below GitHub's MaxStepOutput), leaving room for the variable's name.
const maxReportOutput = MaxEnvString - 8<<10

// outputNote ends a report output that was cut to maxReportOutput.
const outputNote = "\n> [!NOTE]\n> This report was shortened to 120 KiB, so that a later step can read the report output through `env:` (Linux limits one environment variable to 128 KiB); the step's report-file output names a file with the whole report.\n"

// ReportOutputs are the step outputs of a report: its verdict, the
// report (cut to fit maxReportOutput) and, when file is not empty, the path
// of the file that holds it whole. shortened says whether it was cut.
func ReportOutputs(verdict, markdown, file string) (outputs map[string]string, shortened bool) {
	outputs = map[string]string{"verdict": verdict, "report": markdown}
	if file != "" {
		outputs["report-file"] = file
	}
	if len(markdown) > maxReportOutput {
		outputs["report"] = shortenBytes(markdown, maxReportOutput, outputNote)
		shortened = true
	}
	return outputs, shortened
}

// WriteReportFile writes the whole report of gateID to a file in the
// runner's temporary directory (RUNNER_TEMP, else the system's) and
// returns its path, for the report-file output.
func (e *Env) WriteReportFile(gateID, markdown string) (string, error) {
	dir := e.TempDir
	if dir == "" {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "perfgate")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("cannot write the report file: %v", err)
	}
	path := filepath.Join(dir, "report-"+strings.ReplaceAll(gateID, "/", "-")+".md")
	if err := os.WriteFile(path, []byte(markdown), 0o644); err != nil {
		return "", fmt.Errorf("cannot write the report file: %v", err)
	}
	return path, nil
}

// AppendStepSummary appends markdown to the job summary file
// ($GITHUB_STEP_SUMMARY), shortened to GitHub's 1 MiB limit per step. It
// does nothing when the file is not set.
func (e *Env) AppendStepSummary(markdown string) error {
	if e.StepSummary == "" {
		return nil
	}
	markdown = shortenBytes(markdown, MaxStepSummary-1, summaryNote)
	if !strings.HasSuffix(markdown, "\n") {
		markdown += "\n"
	}
	return appendFile("GITHUB_STEP_SUMMARY", e.StepSummary, markdown)
}

// WriteOutputs appends step outputs to $GITHUB_OUTPUT, each in the
// multi-line form NAME<<DELIMITER with a random delimiter that the value
// does not contain. It does nothing when the file is not set.
func (e *Env) WriteOutputs(outputs map[string]string) error {
	if e.OutputFile == "" {
		return nil
	}
	names := make([]string, 0, len(outputs))
	for k := range outputs {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		v := outputs[k]
		if strings.ContainsAny(k, "\n\r=<") {
			return fmt.Errorf("output name %q may not contain newlines, = or <", k)
		}
		delim := delimiter(v)
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", k, delim, strings.TrimSuffix(v, "\n"), delim)
	}
	return appendFile("GITHUB_OUTPUT", e.OutputFile, b.String())
}

// delimiter returns a heredoc delimiter that does not occur in v.
func delimiter(v string) string {
	for {
		d := "ghadelimiter_" + randomHex(12)
		if !strings.Contains(v, d) {
			return d
		}
	}
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func appendFile(variable, path, text string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s %q: %v", variable, path, err)
	}
	_, werr := f.WriteString(text)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("%s %q: %v", variable, path, werr)
	}
	return nil
}
