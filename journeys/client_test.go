package journeys

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/fakeserve"
)

// roleEnv makes this test binary the benchmark client of the serving
// journeys (the engine is fakeserve's server).
const roleEnv = "JOURNEYS_ROLE"

// clientMain runs the client and exits when roleEnv says so.
func clientMain() {
	if os.Getenv(roleEnv) != "client" {
		return
	}
	os.Exit(client(os.Args[1:]))
}

// client calls the engine on $PERFGATE_PORT (when a server was started)
// -n times, then prints a real vllm bench serve result block (-block)
// with its Mean TTFT times the factor in the checkout's ttft.txt (a commit
// controls it; 1 when absent), and a noise of a few tenths of a percent
// that -counter's file makes differ from run to run, deterministically.
func client(args []string) int {
	fs := flag.NewFlagSet("journeys-client", flag.ContinueOnError)
	block := fs.String("block", "", "file holding the result block to print")
	n := fs.Int("n", 2, "requests to the engine")
	counter := fs.String("counter", "", "file counting the runs")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if port := os.Getenv("PERFGATE_PORT"); port != "" {
		for i := 0; i < *n; i++ {
			resp, err := http.Post("http://127.0.0.1:"+port+"/v1/completions", "application/json",
				strings.NewReader(`{"model":"fake","prompt":"hi","max_tokens":1}`))
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
		}
	}
	factor := 1.0
	if b, err := os.ReadFile("ttft.txt"); err == nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "client: ttft.txt: %v\n", err)
			return 2
		}
		factor = f
	}
	if *counter != "" {
		b, _ := os.ReadFile(*counter)
		k, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		os.WriteFile(*counter, []byte(strconv.Itoa(k+1)), 0o644)
		factor *= 1 + float64(k*5%7-3)*0.001
	}
	text, err := os.ReadFile(*block)
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 2
	}
	out, _ := scaleTTFT(string(text), factor)
	fmt.Print(out)
	return 0
}

// firstBlock is the first vllm bench serve result block of a real log,
// from its banner to its closing line.
func firstBlock(t *testing.T, log string) string {
	t.Helper()
	text := readFile(t, log)
	i := strings.Index(text, "============ Serving Benchmark Result")
	if i < 0 {
		t.Fatalf("%s has no vllm bench serve block", log)
	}
	end := strings.Index(text[i+1:], "\n==================================================")
	if end < 0 {
		t.Fatalf("%s: the block at byte %d does not end", log, i)
	}
	return text[i:i+1+end+len("\n==================================================")] + "\n"
}

// quote quotes s for sh.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// serving is a stand-in serving benchmark: the engine (fakeserve's server)
// and the client printing the real block of the optimisation log.
type serving struct {
	server, client string
}

// newServing makes the commands; the client counts its runs in a file of
// its own.
func newServing(t *testing.T) serving {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	block := tempFile(t, "block.txt", firstBlock(t, logFile()))
	counter := tempFile(t, "counter", "0")
	return serving{
		server: fakeserve.RoleEnv + "=server " + quote(exe) + " -load 20ms",
		client: roleEnv + "=client " + quote(exe) + " -block " + quote(block) + " -counter " + quote(counter),
	}
}

// logFile is the optimisation log committed in testdata.
func logFile() string {
	return filepath.Join(repoRoot, "testdata", "vllm-ascend-multimodal-optimizations.md")
}

// readyURL is the engine's health check.
const readyURL = "http://127.0.0.1:$PERFGATE_PORT/health"
