package testbed

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeTool writes an executable script named name into dir that prints
// out (and sleeps first when sleep is set).
func fakeTool(t *testing.T, dir, name, out string, sleep bool) {
	t.Helper()
	// Only shell builtins: PATH holds nothing but the fake tools.
	data := filepath.Join(dir, name+".out")
	if err := os.WriteFile(data, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\n"
	if sleep {
		script += "while :; do :; done\n"
	}
	script += "while IFS= read -r l; do printf '%s\\n' \"$l\"; done < '" + data + "'\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

const npuSMIInfo = `+------------------------------------------------------------------------------------------------+
| npu-smi 23.0.rc2                 Version: 23.0.rc2                                             |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 93.2        36                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3161 / 65536         |
+===========================+===============+====================================================+
| 1     910B3               | OK            | 91.0        35                0    / 0             |
| 0                         | 0000:C2:00.0  | 0           0    / 0          3160 / 65536         |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| 0       0                 | 12345         | python3                  | 1000                    |
+===========================+===============+====================================================+
`

const rocmSMICSV = `device,Card series,Card model,Card vendor,Card SKU
card0,AMD Instinct MI300X OAM,0x74a1,"Advanced Micro Devices, Inc. [AMD/ATI]",M3000100
card1,AMD Instinct MI300X OAM,0x74a1,"Advanced Micro Devices, Inc. [AMD/ATI]",M3000100
`

func TestDetect(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fake tools are shell scripts")
	}
	cpuinfo := filepath.Join(t.TempDir(), "cpuinfo")
	os.WriteFile(cpuinfo, []byte("processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\n"), 0o644)
	armInfo := filepath.Join(t.TempDir(), "cpuinfo-arm")
	os.WriteFile(armInfo, []byte("processor\t: 0\nBogoMIPS\t: 200.00\nCPU implementer\t: 0x48\nCPU part\t: 0xd01\n"), 0o644)

	tests := []struct {
		name    string
		tools   map[string]string
		env     map[string]string
		cpuinfo string
		want    string            // Name()
		facts   map[string]string // subset of Map()
	}{
		{
			name:    "laptop without accelerators",
			cpuinfo: cpuinfo,
			want:    "AMD EPYC 9654 96-Core Processor, linux/amd64",
			facts:   map[string]string{"cpu": "AMD EPYC 9654 96-Core Processor", "os": "linux", "arch": "amd64"},
		},
		{
			name:    "eight NVIDIA GPUs",
			tools:   map[string]string{"nvidia-smi": strings.Repeat("NVIDIA H100 80GB HBM3\n", 8)},
			cpuinfo: cpuinfo,
			want:    "8x NVIDIA H100 80GB HBM3, AMD EPYC 9654 96-Core Processor, linux/amd64",
			facts:   map[string]string{"accelerator": "NVIDIA H100 80GB HBM3", "accelerator_count": "8"},
		},
		{
			name:    "mixed GPUs",
			tools:   map[string]string{"nvidia-smi": "NVIDIA L4\nNVIDIA A10G\nNVIDIA L4\n"},
			cpuinfo: cpuinfo,
			want:    "1x NVIDIA A10G + 2x NVIDIA L4, AMD EPYC 9654 96-Core Processor, linux/amd64",
		},
		{
			name:    "Ascend NPUs on Kunpeng",
			tools:   map[string]string{"npu-smi": npuSMIInfo},
			cpuinfo: armInfo,
			want:    "2x Ascend 910B3, HiSilicon Kunpeng-920, linux/amd64",
			facts:   map[string]string{"accelerator": "Ascend 910B3", "accelerator_count": "2", "cpu": "HiSilicon Kunpeng-920"},
		},
		{
			name:    "AMD GPUs",
			tools:   map[string]string{"rocm-smi": rocmSMICSV},
			cpuinfo: cpuinfo,
			want:    "2x AMD Instinct MI300X OAM, AMD EPYC 9654 96-Core Processor, linux/amd64",
		},
		{
			name:    "GitHub-hosted runner",
			cpuinfo: cpuinfo,
			env:     map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_NAME": "GitHub Actions 12", "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "ImageOS": "ubuntu24", "RUNNER_ENVIRONMENT": "github-hosted"},
			want:    "ci:github-actions linux/amd64 ubuntu24",
			facts:   map[string]string{"ci": "github-actions", "runner_name": "GitHub Actions 12", "image_os": "ubuntu24", "cpu": "AMD EPYC 9654 96-Core Processor"},
		},
		{
			name:    "self-hosted GitHub runner with GPUs",
			tools:   map[string]string{"nvidia-smi": "NVIDIA A100-SXM4-80GB\nNVIDIA A100-SXM4-80GB\n"},
			cpuinfo: cpuinfo,
			env:     map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_NAME": "gpu-box-3", "RUNNER_ENVIRONMENT": "self-hosted"},
			want:    "ci:github-actions linux/amd64 self-hosted, 2x NVIDIA A100-SXM4-80GB",
		},
		{
			name:    "Buildkite queue",
			cpuinfo: cpuinfo,
			env:     map[string]string{"BUILDKITE": "true", "BUILDKITE_AGENT_NAME": "agent-7", "BUILDKITE_AGENT_META_DATA_QUEUE": "gpu", "BUILDKITE_AGENT_META_DATA_GPU": "h100"},
			want:    "ci:buildkite linux/amd64 queue=gpu",
			facts:   map[string]string{"agent_name": "agent-7", "meta.queue": "gpu", "meta.gpu": "h100"},
		},
		{
			name:    "GitLab tags",
			cpuinfo: cpuinfo,
			env:     map[string]string{"GITLAB_CI": "true", "CI_RUNNER_DESCRIPTION": "runner 4", "CI_RUNNER_TAGS": `["npu", "ascend"]`},
			want:    "ci:gitlab linux/amd64 [ascend,npu]",
			facts:   map[string]string{"runner_tags": "ascend,npu", "runner_description": "runner 4"},
		},
		{
			name:    "failing tool",
			tools:   map[string]string{"nvidia-smi": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"},
			cpuinfo: cpuinfo,
			want:    "AMD EPYC 9654 96-Core Processor, linux/amd64",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, out := range tt.tools {
				fakeTool(t, dir, name, out, false)
			}
			t.Setenv("PATH", dir)
			env := func(k string) string { return tt.env[k] }
			environ := func() []string {
				var out []string
				for k, v := range tt.env {
					out = append(out, k+"="+v)
				}
				return out
			}
			e := Detect(context.Background(), Options{Getenv: env, Environ: environ, CPUInfo: tt.cpuinfo, GOOS: "linux", GOARCH: "amd64"})
			if got := e.Name(); got != tt.want {
				t.Errorf("Name() = %q, want %q", got, tt.want)
			}
			m := e.Map()
			for k, v := range tt.facts {
				if m[k] != v {
					t.Errorf("Map()[%q] = %q, want %q (all: %v)", k, m[k], v, m)
				}
			}
		})
	}
}

// TestDetectTimeout: a hung tool costs the timeout, not the run, and says so.
func TestDetectTimeout(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("fake tools are shell scripts")
	}
	dir := t.TempDir()
	fakeTool(t, dir, "nvidia-smi", "NVIDIA H100\n", true)
	t.Setenv("PATH", dir)
	// The fake tool never ends: Detect returning at all, with the
	// timeout's warning, is the timeout at work (no wall-time bound).
	e := Detect(context.Background(), Options{Getenv: func(string) string { return "" }, Timeout: 200 * time.Millisecond, CPUInfo: "/nonexistent", GOOS: "linux", GOARCH: "arm64"})
	if e.AcceleratorCount != 0 || len(e.Warnings) != 1 || !strings.Contains(e.Warnings[0], "no answer within") {
		t.Errorf("got %+v, want no accelerator and one timeout warning", e)
	}
	if got := e.Name(); got != "linux/arm64" {
		t.Errorf("Name() = %q", got)
	}
}

func TestParseTags(t *testing.T) {
	for in, want := range map[string][]string{
		`["b", "a"]`: {"a", "b"},
		"b, a,":      {"a", "b"},
		"":           nil,
		`[broken`:    {"broken"},
	} {
		if got := parseTags(in); !reflect.DeepEqual(got, want) {
			t.Errorf("parseTags(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParsers: the tools' output is untrusted bytes; no parser panics.
func FuzzParsers(f *testing.F) {
	f.Add([]byte(npuSMIInfo))
	f.Add([]byte(rocmSMICSV))
	f.Add([]byte("NVIDIA H100\n"))
	f.Add([]byte("model name : x\nCPU implementer : 0x41\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseNvidiaSMI(b)
		parseNPUSMI(b)
		parseROCmSMI(b)
		parseCPUInfo(b)
		parseTags(string(b))
	})
}
