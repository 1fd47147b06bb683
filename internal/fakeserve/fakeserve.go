// Package fakeserve is a stand-in LLM serving engine and benchmark client
// for perfgate's tests of --setup, --server and --ready (issue 27). A test
// binary becomes one of them in its TestMain (Main): the engine loads
// slowly, serves an OpenAI-compatible /v1/completions, /v1/models and
// /health on $PERFGATE_PORT with a latency read from a file of the
// checkout (so a commit controls it), and can be told to crash mid-run or
// never become ready; the client calls it and prints a vLLM bench serve
// result block, as perfgate ingests it. Every process records its pid and
// port in $FAKESERVE_PIDDIR, so that tests can check none is left behind.
package fakeserve

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// RoleEnv names the role the test binary plays: "server" or "client".
const RoleEnv = "FAKESERVE_ROLE"

// PidDirEnv is where each process writes a file named after its pid
// holding its port.
const PidDirEnv = "FAKESERVE_PIDDIR"

// Main runs the role $FAKESERVE_ROLE names with os.Args[1:] and exits; it
// returns at once when the variable is unset (a plain test run).
func Main() {
	var code int
	switch os.Getenv(RoleEnv) {
	case "":
		return
	case "server":
		code = Server(os.Args[1:], os.Stdout)
	case "client":
		code = Client(os.Args[1:], os.Stdout)
	default:
		fmt.Fprintf(os.Stderr, "fakeserve: %s=%q: choose server or client\n", RoleEnv, os.Getenv(RoleEnv))
		code = 2
	}
	os.Exit(code)
}

// Server is the engine. Flags: -load (time before it listens),
// -latency-file (a file in the working directory holding the per-request
// latency, e.g. 5ms), -crash-after N (exit 3 on the N+1th completion),
// -never-ready (/health answers 503 for ever), -exit-before-ready CODE
// (exit with CODE after loading).
func Server(args []string, out io.Writer) int {
	fs := flag.NewFlagSet("fakeserve-server", flag.ContinueOnError)
	load := fs.Duration("load", 0, "time before listening")
	latencyFile := fs.String("latency-file", "latency.txt", "file with the per-request latency")
	crashAfter := fs.Int("crash-after", -1, "exit 3 after this many completions")
	neverReady := fs.Bool("never-ready", false, "never report ready")
	exitBefore := fs.Int("exit-before-ready", 0, "exit with this code after loading")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	port := os.Getenv("PERFGATE_PORT")
	record(port)
	latency := time.Duration(0)
	if b, err := os.ReadFile(*latencyFile); err == nil {
		d, err := time.ParseDuration(strings.TrimSpace(string(b)))
		if err != nil {
			fmt.Fprintf(out, "fakeserve: %s: %v\n", *latencyFile, err)
			return 2
		}
		latency = d
	}
	fmt.Fprintf(out, "INFO: loading weights (latency %v)\n", latency)
	time.Sleep(*load)
	if *exitBefore != 0 {
		fmt.Fprintln(out, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB")
		return *exitBefore
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintf(out, "fakeserve: %v\n", err)
		return 1
	}
	var served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if *neverReady {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{map[string]string{"id": "fake", "object": "model"}}})
	})
	mux.HandleFunc("/v1/completions", func(w http.ResponseWriter, r *http.Request) {
		if n := served.Add(1); *crashAfter >= 0 && n > int64(*crashAfter) {
			fmt.Fprintln(out, "fatal: engine core died")
			os.Exit(3)
		}
		time.Sleep(latency)
		json.NewEncoder(w).Encode(map[string]any{"object": "text_completion", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "text": "hello", "finish_reason": "stop"}}})
	})
	if !*neverReady {
		fmt.Fprintln(out, "INFO:     Application startup complete.")
	}
	if err := http.Serve(l, mux); err != nil {
		fmt.Fprintf(out, "fakeserve: %v\n", err)
		return 1
	}
	return 0
}

// Client calls the engine on $PERFGATE_PORT -n times (default 3) and
// prints a vLLM bench serve result block whose Mean TTFT is the mean
// latency of the calls.
func Client(args []string, out io.Writer) int {
	fs := flag.NewFlagSet("fakeserve-client", flag.ContinueOnError)
	n := fs.Int("n", 3, "requests")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	record("")
	url := "http://127.0.0.1:" + os.Getenv("PERFGATE_PORT") + "/v1/completions"
	var total time.Duration
	for i := 0; i < *n; i++ {
		start := time.Now()
		resp, err := http.Post(url, "application/json", strings.NewReader(`{"model":"fake","prompt":"hi","max_tokens":1}`))
		if err != nil {
			fmt.Fprintf(os.Stderr, "client: %v\n", err)
			return 1
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			fmt.Fprintf(os.Stderr, "client: %s\n", resp.Status)
			return 1
		}
		total += time.Since(start)
	}
	ttft := float64(total.Microseconds()) / 1000 / float64(*n)
	fmt.Fprintf(out, `============ Serving Benchmark Result ============
Successful requests:                     %d
Failed requests:                         0
Benchmark duration (s):                  %.2f
Request throughput (req/s):              %.2f
---------------Time to First Token----------------
Mean TTFT (ms):                          %.3f
Median TTFT (ms):                        %.3f
==================================================
`, *n, total.Seconds(), float64(*n)/max(total.Seconds(), 1e-9), ttft, ttft)
	return 0
}

// record writes this process's pid and port to $FAKESERVE_PIDDIR.
func record(port string) {
	dir := os.Getenv(PidDirEnv)
	if dir == "" {
		return
	}
	pid := strconv.Itoa(os.Getpid())
	os.WriteFile(filepath.Join(dir, pid), []byte(port), 0o644)
}

// Leftovers lists what the processes recorded in dir left behind: each
// pid that still runs (not a zombie), and each server port that still
// takes connections. Empty when everything was stopped. A process killed
// a moment ago takes a moment to die: Leftovers waits up to 5 seconds for
// the list to empty.
func Leftovers(dir string) []string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := leftovers(dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leftovers(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if alive(pid) {
			out = append(out, fmt.Sprintf("process %d still runs", pid))
		}
		port, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if len(port) == 0 {
			continue
		}
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+string(port), time.Second); err == nil {
			c.Close()
			out = append(out, fmt.Sprintf("port %s still takes connections", port))
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+string(port)); err != nil {
			out = append(out, fmt.Sprintf("port %s is not free: %v", port, err))
		} else {
			l.Close()
		}
	}
	return out
}

// Started counts the processes recorded in dir: how many times the
// engine (port != "") and the client (port == "") were started.
func Started(dir string) (servers, clients int) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		switch {
		case err != nil:
		case len(b) > 0:
			servers++
		default:
			clients++
		}
	}
	return servers, clients
}

// Children lists the live child processes of this process (pid and
// command), read from /proc; nil where there is no /proc.
func Children() []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	me := os.Getpid()
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			out = append(out, fmt.Sprintf("%d %s", pid, s[:i+1]))
		}
	}
	return out
}
