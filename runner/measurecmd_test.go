package runner

import (
	"testing"
	"time"

	"github.com/perfgate/perfgate/store"
)

// TestMeasureCommand: the command suggested to measure the tree again
// reproduces the latest dirty run: its testbed, setup, server and ready
// condition, then its command; a run of an unnamed testbed or served by
// nothing adds no flag.
func TestMeasureCommand(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	served := store.Run{Benchmark: "serving", Dirty: true, Time: t0.Add(time.Minute), Testbed: "lab-910b",
		Command: []string{"sh", "-c", "vllm bench serve --port $PERFGATE_PORT"},
		Env: map[string]string{FactSetup: "pip install -e .", FactServer: "vllm serve m --port $PERFGATE_PORT",
			FactReadyLog: "startup complete", FactReady: "12.0"}}
	older := store.Run{Benchmark: "old", Dirty: true, Time: t0, Command: []string{"./bench.sh"}}
	tests := []struct {
		name string
		runs []store.Run
		here string
		want string
	}{
		{"served", []store.Run{older, served}, "AMD EPYC, linux/amd64", `perfgate run --name serving --testbed lab-910b --setup 'pip install -e .' --server 'vllm serve m --port $PERFGATE_PORT' --ready-log 'startup complete' -- sh -c 'vllm bench serve --port $PERFGATE_PORT'`},
		{"plain, unknown testbed", []store.Run{func() store.Run { r := older; r.Testbed = "unknown"; return r }()}, "", `perfgate run --name old -- ./bench.sh`},
		{"ready URL", []store.Run{func() store.Run {
			r := older
			r.Env = map[string]string{FactServer: "srv", FactReadyURL: "http://127.0.0.1:$PERFGATE_PORT/health"}
			return r
		}()}, "", `perfgate run --name old --server srv --ready 'http://127.0.0.1:$PERFGATE_PORT/health' -- ./bench.sh`},
		{"this machine's testbed", []store.Run{served}, "lab-910b", `perfgate run --name serving --setup 'pip install -e .' --server 'vllm serve m --port $PERFGATE_PORT' --ready-log 'startup complete' -- sh -c 'vllm bench serve --port $PERFGATE_PORT'`},
		{"none", nil, "", "perfgate run --name BENCH -- CMD"},
	}
	for _, tt := range tests {
		if got := MeasureCommand(tt.runs, tt.here); got != tt.want {
			t.Errorf("%s: MeasureCommand =\n%s\nwant\n%s", tt.name, got, tt.want)
		}
	}
}

// TestServeFactsReady: the runs a server served record its ready
// condition, so the command that measures again can give it.
func TestServeFactsReady(t *testing.T) {
	s := &Serve{Server: "srv", Ready: "http://127.0.0.1:$PERFGATE_PORT/health"}
	if f := s.Facts(nil); f[FactReadyURL] != s.Ready {
		t.Errorf("Facts = %v, want %s = %q", f, FactReadyURL, s.Ready)
	}
}
