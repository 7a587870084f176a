"""The client's own limit: the highest request rate each tool keeps to its
schedule, against islkit's test server (not vLLM: a server this fast leaves
only the client's cost). Started by bench/peers/run.sh after run.py.

    rate.py ROOT BIN TOKENIZER_DIR PROXY_URL PROXY_LOG VLLM_BIN OUT_DIR

PROXY_URL is usage_proxy.py in front of `islkit-testserver -no-tokenize`;
it stamps each request's arrival (t). Every tool is asked for a constant
arrival rate R (islkit --rate-distribution constant, AIPerf
--arrival-pattern constant, GuideLLM kind=constant; `vllm bench serve` has
only gamma arrivals: --burstiness 1e9 makes its gaps even to a few
microseconds) for about PEERS_RATE_SECONDS seconds (default 4, at least
20 requests), ISL 50, OSL 4, no concurrency cap. A request's schedule lag
is its arrival minus its due time, first arrival + i/R, less the smallest
lag of the run (the tool's start is not its fault); a rate is kept when
the p99 lag is at most 5 ms and every request arrived. The rates are
PEERS_RATES (default 5,10,25,50,100,200,400 per second), in order; a tool's
figure is the highest rate kept before its first miss. Appends a section
to bench/peers/RESULTS.md.
"""
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys

root, bin_dir, tok, proxy, proxy_log, vllm_bin, out = sys.argv[1:8]
RATES = [float(r) for r in os.environ.get("PEERS_RATES", "5,10,25,50,100,200,400").split(",")]
SECONDS = float(os.environ.get("PEERS_RATE_SECONDS", "4"))
ISL, OSL, LIMIT_MS = 50, 4, 5.0
TIMEOUT = float(os.environ.get("PEERS_RATE_TIMEOUT", "900"))  # seconds per tool and rate
ONLY = set(filter(None, os.environ.get("PEERS_ONLY", "").split(",")))
out = os.path.join(out, "rate")
os.makedirs(out, exist_ok=True)


def proxy_lines():
    with open(proxy_log) as f:
        return [json.loads(l) for l in f]


def commands(rate, n, tag):
    """The command of each tool for n requests at a constant rate."""
    aiperf, guidellm = shutil.which("aiperf"), shutil.which("guidellm")
    return {
        "islkit": (f'set -o pipefail; "{bin_dir}/probe" --tokenizer "{tok}" --apply-chat-template'
                   f' | "{bin_dir}/compose" --isl {ISL} --osl {OSL} --conversations {n} --turns 1 --seed 1 --model m'
                   f' | "{bin_dir}/send" --url {proxy} --rate {rate} --rate-distribution constant > "{out}/islkit-{tag}.jsonl"', True),
        "AIPerf": ([aiperf, "profile", "--model", "m", "--tokenizer", tok, "--url", proxy, "--endpoint-type", "chat", "--streaming",
                    "--isl", str(ISL), "--isl-stddev", "0", "--osl", str(OSL), "--request-count", str(n),
                    "--request-rate", str(rate), "--arrival-pattern", "constant", "--random-seed", "1", "--ui-type", "none",
                    "--artifact-dir", os.path.join(out, "aiperf-" + tag)], False),
        "vllm bench serve": ([vllm_bin, "bench", "serve", "--backend", "openai-chat", "--base-url", proxy,
                              "--endpoint", "/v1/chat/completions", "--model", "m", "--tokenizer", tok,
                              "--num-prompts", str(n), "--request-rate", str(rate), "--burstiness", "1e9", "--seed", "1",
                              "--num-warmups", "0", "--disable-tqdm", "--dataset-name", "random",
                              "--random-input-len", str(ISL), "--random-output-len", str(OSL), "--random-range-ratio", "0"], False),
        "GuideLLM": ([guidellm, "run",
                      "--backend", f"kind=openai_http,target={proxy},model=m,request_format=/v1/chat/completions,validate_backend=false",
                      "--tokenizer", f"kind=hf_auto,model={tok}",
                      "--data", f"kind=synthetic_text,prompt_tokens={ISL},output_tokens={OSL}",
                      "--profile", f"kind=constant,rate={rate}", "--constraint", f"kind=max_requests,count={n}",
                      "--disable-console-interactive"], False),
    }


def p99(xs):
    xs = sorted(xs)
    return xs[max(0, -(-99 * len(xs) // 100) - 1)]  # nearest rank


results = {}  # tool -> [(rate, n asked, n seen, p99 ms, max ms, rc)]
for rate in RATES:
    n = max(20, int(rate * SECONDS))
    tag = "%g" % rate
    for tool, (cmd, shell) in commands(rate, n, tag).items():
        if ONLY and tool not in ONLY:
            continue
        if any(r[5] != 0 or r[3] is None or r[3] > LIMIT_MS for r in results.get(tool, [])):
            continue  # missed at a lower rate: its figure is known
        before = len(proxy_lines())
        with open(os.path.join(out, "%s-%s.log" % (tool.split()[0].lower(), tag)), "w") as log:
            proc = subprocess.Popen(cmd, shell=shell, stdout=log, stderr=subprocess.STDOUT, cwd=out,
                                    executable="/bin/bash" if shell else None, start_new_session=True)
            try:  # one stuck run must not hold the others (AIPerf took 4 min to start on a loaded machine)
                rc = proc.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait()
                rc = 124
        ts = sorted(r["t"] for r in proxy_lines()[before:] if r["path"].startswith("/v1/chat") and "t" in r)
        lags = [(t - ts[0] - i / rate) * 1000 for i, t in enumerate(ts)]
        if lags:
            low = min(lags)
            lags = [x - low for x in lags]
        row = (rate, n, len(ts), p99(lags) if lags else None, max(lags) if lags else None, rc)
        if rc == 0 and len(ts) < n:
            row = row[:5] + (-1,)  # fewer requests than asked: a miss
        results.setdefault(tool, []).append(row)
        print(tool, row, flush=True)


def loadavg():
    try:
        return open("/proc/loadavg").read().split()[:3]
    except OSError:
        return ["?"] * 3


lines = ["", "## The client's own limit (against islkit's test server)", "",
         "Measured by `bench/peers/rate.py` on %s UTC (load average then %s on %d cores). Each tool was asked for a constant "
         "rate (ISL %d, OSL %d, about %g s per rate, no concurrency cap) against `islkit-testserver -no-tokenize` through the "
         "proxy, which stamps each request's arrival; schedule lag = arrival − (first arrival + i/R), less the run's smallest. "
         "A rate is kept while the p99 lag is ≤ %g ms and every request arrived." % (
             datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"), " ".join(loadavg()), os.cpu_count(),
             ISL, OSL, SECONDS, LIMIT_MS),
         "", "| tool | highest rate kept (req/s) | per rate: p99 / max lag (ms), requests seen |", "| --- | --- | --- |"]
for tool, rows in results.items():
    best = None
    for r in rows:
        if r[5] != 0 or r[3] is None or r[3] > LIMIT_MS:
            break
        best = r[0]
    cells = "; ".join("%g/s: %s" % (r[0], ("%.1f / %.1f, %d of %d" % (r[3], r[4], r[2], r[1])) if r[3] is not None else "no request seen")
                      + ("" if r[5] == 0 else " (exit %d)" % r[5] if r[5] > 0 else " (too few)") for r in rows)
    lines.append("| %s | %s | %s |" % (tool, ("%g" % best) if best is not None else "below %g" % rows[0][0], cells))
lines += ["", "The rates above the highest listed were not tried (PEERS_RATES); "
          "a tool that keeps every rate tried has a limit above the last. On a machine shared with other work the lag is "
          "the machine's as much as the tool's: compare the tools with each other, in the same run."]
with open(os.path.join(root, "bench", "peers", "RESULTS.md"), "a") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
