package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestResolveBuild: the release's -X values win; a go install build
// reports its module version; a build from a checkout its VCS stamp.
func TestResolveBuild(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "github.com/perfgate/perfgate", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	installed := &debug.BuildInfo{GoVersion: "go1.26.2", Main: debug.Module{Path: "github.com/perfgate/perfgate", Version: "v0.4.0"}}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, tt := range []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  buildInfo
	}{
		{"release build", "v0.4.0", "f00d", "2026-11-02T00:00:00Z", vcs,
			buildInfo{Version: "v0.4.0", Commit: "f00d", Date: "2026-11-02T00:00:00Z", GoVersion: "go1.26.1", Platform: platform}},
		{"go install module@version", "", "", "", installed,
			buildInfo{Version: "v0.4.0", GoVersion: "go1.26.2", Platform: platform}},
		{"go build in a modified checkout", "", "", "", vcs,
			buildInfo{Version: "(devel)", Commit: "abc123", Modified: true, Date: "2026-11-01T10:00:00Z", GoVersion: "go1.26.1", Platform: platform}},
		{"no build info", "", "", "", nil,
			buildInfo{Version: "(devel)", GoVersion: runtime.Version(), Platform: platform}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveBuild(tt.version, tt.commit, tt.date, tt.bi); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestVersionOutput(t *testing.T) {
	b := buildInfo{Version: "v0.4.0", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-11-02T00:00:00Z", GoVersion: "go1.26.1", Platform: "linux/arm64"}
	var text bytes.Buffer
	writeVersionText(&text, b)
	golden(t, "version.txt", text.String())
	var js bytes.Buffer
	if err := writeJSON(&js, b); err != nil {
		t.Fatal(err)
	}
	golden(t, "version.json", js.String())

	// The commands print this binary's build, the same in both forms.
	out, errOut, code := runCLI(t, "", "--version")
	if code != 0 || !strings.HasPrefix(out, "perfgate "+currentBuild().Version+"\ncommit:") {
		t.Errorf("--version: exit %d\n%s%s", code, out, errOut)
	}
	if v, _, _ := runCLI(t, "", "version"); v != out {
		t.Errorf("perfgate version printed\n%s\nperfgate --version\n%s", v, out)
	}
	out, errOut, code = runCLI(t, "", "version", "-o", "json")
	var got buildInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || got != currentBuild() || got.GoVersion == "" {
		t.Errorf("version -o json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	if _, errOut, code := runCLI(t, "", "version", "-o", "yaml"); code != 2 || !strings.Contains(errOut, "text, json") {
		t.Errorf("version -o yaml: exit %d, %s", code, errOut)
	}
}

// TestVersionLdflags reads back what -X set in the perfgate the tests
// build (builtPerfgate, with testLdflags as the release build passes them).
func TestVersionLdflags(t *testing.T) {
	bin := filepath.Join(builtPerfgate(t), "perfgate")
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got buildInfo
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != "v9.8.7" || got.Commit != "c0ffee" || got.Date != "2026-11-03T04:05:06Z" || !strings.HasPrefix(got.GoVersion, "go") {
		t.Errorf("got %+v", got)
	}
}

func TestCompletionAndMan(t *testing.T) {
	for _, shell := range completionShells {
		out, errOut, code := runCLI(t, "", "completion", shell)
		if code != 0 || !strings.Contains(out, "perfgate") {
			t.Errorf("completion %s: exit %d\n%s%s", shell, code, out, errOut)
		}
		if shell == "fish" && !strings.Contains(out, "-a 'check'") {
			t.Errorf("completion fish does not complete check:\n%s", out)
		}
		if sh, err := exec.LookPath(shell); err == nil && shell != "fish" {
			syntax := exec.Command(sh, "-n")
			syntax.Stdin = strings.NewReader(out)
			if b, err := syntax.CombinedOutput(); err != nil {
				t.Errorf("%s -n on the completion script: %v\n%s", shell, err, b)
			}
		}
	}
	if _, errOut, code := runCLI(t, "", "completion", "tcsh"); code != 2 || !strings.Contains(errOut, "bash, zsh, fish") {
		t.Errorf("completion tcsh: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "", "completion"); code != 2 || !strings.Contains(errOut, "bash, zsh, fish") {
		t.Errorf("completion: exit %d, %s", code, errOut)
	}
	out, errOut, code := runCLI(t, "", "man")
	if code != 0 || !strings.HasPrefix(out, ".nh\n.TH perfgate 1") {
		t.Fatalf("man: exit %d\n%.200s%s", code, out, errOut)
	}
	if !strings.Contains(out, "\n.SH EXIT STATUS\n") || !strings.Contains(out, "no stored results") {
		t.Errorf("the man page has no EXIT STATUS section")
	}
	for _, c := range []string{"check", "ingest", "sync", "publish", "version"} {
		if !strings.Contains(out, "\n.SH "+strings.ToUpper(c)) && !strings.Contains(out, "\n## "+c) && !strings.Contains(out, "\n.SS "+c) && !strings.Contains(out, "\n.SH "+c) {
			t.Errorf("the man page has no section for %s", c)
		}
	}
}

// TestBashCompletionScript sources the bash script and completes as bash
// would, with a perfgate built from this package on PATH: the candidates
// come from the binary (urfave/cli reads them from os.Args, so they cannot
// be asked for in-process).
func TestBashCompletionScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("needs bash")
	}
	dir := builtPerfgate(t)
	for _, tt := range []struct {
		words string
		want  string
	}{
		{"perfgate ch", "check"},
		{"perfgate check --ru", "--rules"},
		{"perfgate completion ", "bash"},
		{"perfgate completion ", "fish"},
		{"perfgate --d", "--db"},
	} {
		script := bashCompletion + `
COMP_WORDS=(` + tt.words + `)
[[ "` + tt.words + `" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_perfgate_complete
printf '%s\n' "${COMPREPLY[@]}"
`
		cmd := exec.Command(bash, "--noprofile", "--norc", "-c", script)
		cmd.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=" + dir}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains("\n"+string(out), "\n"+tt.want+"\n") {
			t.Errorf("completing %q: %v, got\n%s", tt.words, err, out)
		}
	}
}
