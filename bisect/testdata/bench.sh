#!/bin/sh
# Stand-in benchmark for the bisect tests: prints a vLLM "bench serve"
# result whose Mean TTFT is the level in level.txt (a file of the commit)
# times 1 + NOISE_SD * z, z standard normal. The noise is seeded by
# NOISE_SEED and a run counter kept in NOISE_DIR, so a trial replays
# exactly. A commit with a file named "untestable" exits 125.
set -e
if [ -f untestable ]; then
	echo "this commit does not build" >&2
	exit 125
fi
level=$(cat level.txt)
n=$(cat "$NOISE_DIR/counter" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" >"$NOISE_DIR/counter"
awk -v level="$level" -v seed="${NOISE_SEED:-1}" -v n="$n" -v sd="${NOISE_SD:-0.015}" 'BEGIN {
	srand(seed * 100003 + n)
	u1 = rand(); u2 = rand()
	if (u1 < 1e-12) u1 = 1e-12
	z = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2)
	printf "============ Serving Benchmark Result ============\n"
	printf "Successful requests:                     500\n"
	printf "Failed requests:                         0\n"
	printf "Benchmark duration (s):                  100.00\n"
	printf "Request throughput (req/s):              5.00\n"
	printf "Output token throughput (tok/s):         %.2f\n", 300 * (1 - sd * z)
	printf "---------------Time to First Token----------------\n"
	printf "Mean TTFT (ms):                          %.2f\n", level * (1 + sd * z)
	printf "Median TTFT (ms):                        %.2f\n", level * 1.1
	printf "P99 TTFT (ms):                           %.2f\n", level * 3
	printf "==================================================\n"
}'
