package metric

import "testing"

func TestLookup(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"mean_ttft_ms", "mean_ttft_ms", true},
		{"Mean TTFT", "mean_ttft_ms", true},
		{"mean ttft (ms)", "mean_ttft_ms", true},
		{"P99.9 ITL (ms)", "p99.9_itl_ms", true},
		{"p99.9_itl_ms", "p99.9_itl_ms", true},
		{"Mean E2E Latency (ms)", "mean_e2el_ms", true},
		{"Total Token throughput (tok/s)", "total_token_throughput", true},
		{"Output token throughput", "output_throughput", true},
		{"failed", "failed", true},
		{"nonsense", "", false},
		// Other tools' names of one quantity (issue 12, item 9).
		{"accept_length", "spec_decode_acceptance_length", true},
		{"Accept length", "spec_decode_acceptance_length", true},
		{"request_concurrency", "concurrency", true},
		{"Concurrency", "concurrency", true},
	}
	for _, tt := range tests {
		got, ok := Lookup(tt.in)
		if ok != tt.ok || got.Name != tt.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tt.in, got.Name, ok, tt.want, tt.ok)
		}
	}
}

func TestDirection(t *testing.T) {
	tests := map[string]Direction{
		"mean_ttft_ms":             LowerIsBetter,
		"p99.9_itl_ms":             LowerIsBetter,
		"output_throughput":        HigherIsBetter,
		"completed":                HigherIsBetter,
		"failed":                   LowerIsBetter,
		"total_input_tokens":       Neutral,
		"ns_per_op":                LowerIsBetter,
		"mb_per_s":                 HigherIsBetter,
		"mean_queue_wait_time_ms":  LowerIsBetter,
		"prefill_token_throughput": HigherIsBetter,
		"cache_hit_rate":           Unknown,
	}
	for name, want := range tests {
		if got := Get(name).Direction; got != want {
			t.Errorf("Get(%q).Direction = %v, want %v", name, got, want)
		}
	}
}

func TestSanitize(t *testing.T) {
	tests := map[string]string{
		"Prefill Token Throughput": "prefill_token_throughput",
		"ns/op":                    "ns_per_op",
		"MB/s":                     "mb_per_s",
		"FirstTokenTime":           "first_token_time",
		"hit%":                     "hit_pct",
		"  Acceptance rate (%)  ":  "acceptance_rate_pct",
	}
	for in, want := range tests {
		if got := Sanitize(in); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	for in, want := range map[string]string{"mean_tfft_ms": "mean_ttft_ms", "output_througput": "output_throughput", "xyzzy-completely-different-thing": ""} {
		if got := Suggest(in); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSuggestTransposition(t *testing.T) {
	if got := Suggest("Mean TFTT"); got != "mean_ttft_ms" {
		t.Errorf(`Suggest("Mean TFTT") = %q, want "mean_ttft_ms"`, got)
	}
}

// TestRegisteredLatencies: the latency names registered at start (built
// without the regexp) are what latencyInfo derives from the name.
func TestRegisteredLatencies(t *testing.T) {
	n := 0
	for name, in := range byName {
		if in.Unit != "ms" {
			continue
		}
		n++
		if want := latencyInfo(name); in != want {
			t.Errorf("%s: registered %+v, latencyInfo gives %+v", name, in, want)
		}
	}
	if n != 4*(5+6) {
		t.Errorf("%d latency names registered, want %d", n, 4*(5+6))
	}
}

// TestCanonical checks the alias table the package documentation lists:
// every alias maps to a registered canonical name that is no alias itself,
// and canonical names map to themselves.
func TestCanonical(t *testing.T) {
	want := map[string]string{
		"request_concurrency": "concurrency",
		"accept_length":       "spec_decode_acceptance_length",
	}
	got := Aliases()
	if len(got) != len(want) {
		t.Errorf("Aliases() = %v, want %v", got, want)
	}
	for a, c := range want {
		if Canonical(a) != c {
			t.Errorf("Canonical(%q) = %q, want %q", a, Canonical(a), c)
		}
		if Canonical(c) != c {
			t.Errorf("Canonical(%q) = %q, want itself", c, Canonical(c))
		}
		if in := Get(c); !in.Known {
			t.Errorf("canonical %q is not in the vocabulary", c)
		}
	}
	if Get("spec_decode_acceptance_length").Direction != HigherIsBetter || Get("concurrency").Direction != Neutral {
		t.Errorf("directions: acceptance length %v, concurrency %v", Get("spec_decode_acceptance_length").Direction, Get("concurrency").Direction)
	}
	if Canonical("mean_ttft_ms") != "mean_ttft_ms" {
		t.Errorf("Canonical changed a canonical name")
	}
}
