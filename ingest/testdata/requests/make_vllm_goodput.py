#!/usr/bin/env python3
"""Builds the vLLM per-request test files of this directory (see PROVENANCE).

It computes request_goodput the way `vllm bench serve --goodput` does
(vllm/benchmarks/serve.py, calculate_metrics, as documented there): for each
successful request, TPOT = (latency - ttft) / (output_len - 1), or 0 when
output_len <= 1; a request is good when every objective, converted from
milliseconds to seconds (slo_ms / 1000), is >= its value; goodput is the good
requests divided by the benchmark duration. This is a re-statement of that
computation, not vLLM's code.

Usage: make_vllm_goodput.py ORIGINAL_QPS16_JSON   (writes both files here)
"""
import json
import random
import sys


def goodput(d, slo):
    good = 0
    for i, ttft in enumerate(d["ttfts"]):
        if d["errors"][i]:
            continue  # failed requests are not counted
        vals = {"ttft": ttft}
        if "e2els" in d:
            lat = d["e2els"][i]
            out = d["output_lens"][i]
            vals["tpot"] = (lat - ttft) / (out - 1) if out > 1 else 0.0
            vals["e2el"] = lat
        if all(slo[k] / 1000 >= vals[k] for k in slo):
            good += 1
    return good / d["duration"]


def real(path):
    d = json.load(open(path))
    d.pop("generated_texts")
    d.pop("itls")
    d.pop("request_goodput:")
    d["request_goodput"] = goodput(d, {"ttft": 80.0})
    with open("vllm_llm-k8s_qps16_goodput_ttft80.json", "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")


def constructed():
    rng = random.Random(35)
    n = 60
    ttfts, itls, e2els, outs, errors = [], [], [], [], []
    for i in range(n):
        if i % 29 == 28:  # two failed requests, as vLLM records them
            ttfts.append(0.0); itls.append([]); e2els.append(0.0); outs.append(0)
            errors.append("Bad Request")
            continue
        ttft = 0.03 + rng.expovariate(1 / 0.05)
        out = 1 if i == 5 else rng.randint(20, 200)
        itl = [round(0.018 + rng.random() * 0.012, 6) for _ in range(out - 1)]
        lat = ttft + sum(itl) + 0.0004  # the last chunk (usage) after the last token
        ttfts.append(round(ttft, 9)); itls.append(itl); e2els.append(round(lat, 9)); outs.append(out)
        errors.append("")
    d = {
        "date": "20261128-000000", "backend": "vllm", "label": None,
        "model_id": "example/model", "tokenizer_id": "example/model",
        "num_prompts": n, "request_rate": 8.0, "burstiness": 1.0, "max_concurrency": None,
        "duration": 7.912345678, "completed": n - 2, "failed": 2,
        "total_input_tokens": 0, "total_output_tokens": sum(outs),
        "request_throughput": (n - 2) / 7.912345678,
        "input_lens": [0] * n, "output_lens": outs, "ttfts": ttfts, "itls": itls,
        "e2els": e2els, "errors": errors,
    }
    d["request_goodput"] = goodput(d, {"ttft": 100.0, "tpot": 25.0, "e2el": 4000.0})
    with open("vllm_constructed_goodput_ttft100_tpot25_e2el4000.json", "w") as f:
        json.dump(d, f)
        f.write("\n")


real(sys.argv[1])
constructed()
