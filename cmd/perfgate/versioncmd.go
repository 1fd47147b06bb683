package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

func init() {
	commandSet = append(commandSet, versionCommand)
	examples["version"] = `
perfgate --version
perfgate version -o json | jq -r .version`
	// perfgate --version prints what perfgate version prints.
	cli.VersionPrinter = func(c *cli.Context) { writeVersionText(c.App.Writer, currentBuild()) }
}

// Set by the release build (.goreleaser.yaml):
//
//	-ldflags "-X main.buildVersion=v1.2.3 -X main.buildCommit=SHA -X main.buildDate=RFC3339"
//
// A go install or go build leaves them empty, and the module version and
// the VCS stamp of runtime/debug.ReadBuildInfo fill in.
var (
	buildVersion string
	buildCommit  string
	buildDate    string
)

// buildInfo is what perfgate version reports; its JSON field names are
// part of the -o json contract.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// currentBuild is the build info of this binary.
func currentBuild() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return resolveBuild(buildVersion, buildCommit, buildDate, bi)
}

// resolveBuild prefers the values the release build set with -X, then the
// module version (go install module@version) and the VCS settings the go
// command stamps into a build from a git checkout.
func resolveBuild(version, commit, date string, bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if b.Version == "" {
			b.Version = "(devel)"
		}
		return b
	}
	if bi.GoVersion != "" {
		b.GoVersion = bi.GoVersion
	}
	if b.Version == "" {
		b.Version = bi.Main.Version
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true" && commit == ""
		}
	}
	return b
}

// writeVersionText prints the build info: the first line is
// "perfgate VERSION", which the Action compares with its release tag.
func writeVersionText(w io.Writer, b buildInfo) {
	fmt.Fprintf(w, "perfgate %s\n", b.Version)
	c := b.Commit
	if c == "" {
		c = "unknown"
	}
	if b.Modified {
		c += " (modified)"
	}
	d := b.Date
	if d == "" {
		d = "unknown"
	}
	fmt.Fprintf(w, "commit:   %s\nbuilt:    %s\ngo:       %s\nplatform: %s\n", c, d, b.GoVersion, b.Platform)
}

func versionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print perfgate's version, commit, build date and Go version",
		UsageText: "perfgate version [-o text|json]",
		Description: "The first line of the text output is \"perfgate VERSION\" (perfgate --version prints the same).\n" +
			"A release binary carries the tag, commit and date of its build; a go install build reports its\n" +
			"module version and, built from a git checkout, the commit and its time.",
		Flags: []cli.Flag{outputFlag("text", "json")},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("version takes no arguments, got %q (see perfgate version --help)", strings.Join(c.Args().Slice(), " "))
			}
			o, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			b := currentBuild()
			if o == "json" {
				return writeJSON(e.stdout, b)
			}
			writeVersionText(e.stdout, b)
			return nil
		},
	}
}
