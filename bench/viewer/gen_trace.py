#!/usr/bin/env python3
"""gen_trace.py — writes a large Chrome Trace Event file (trace.json, as the PyTorch
profiler writes them) of nested complete ("X") events, for benchmarking the System
Trace Viewer on a system profile of millions of framework events.

    python3 bench/viewer/gen_trace.py --events 10000000 --out DIR/trace.json
                                      [--threads 8] [--depth 8] [--seed 7] [--args]

Then `nxprof process DIR --data-path P --display-name big` gives the system profile
`big` (DIR holding only the trace). The file is {"traceEvents": [...]}: per thread a
thread_name metadata event, then call stacks in pre-order (parents before their
children): top-level "ProfilerStep#k" events, each holding a random tree of operators up
to --depth levels (children inside their parent, siblings one after another with small
gaps), until the thread has its share of --events. Threads are written one after the
other, each over the same time span, so the file is not in time order (as real traces
are not). Times are microseconds with three decimals (whole nanoseconds). The output is
written as it is generated: memory stays a few MB at any --events. Deterministic for a
given --seed (--args does not change the events). A name ending in .gz is written
gzip-compressed (slower).

--args gives every X event PyTorch's {"External id": N} args, which become
extra_attributes_json (about 25 more bytes per event in the file).
"""
import argparse
import gzip
import random
import sys

OPS = ["aten::linear", "aten::matmul", "aten::addmm", "aten::mm", "aten::add", "aten::mul",
       "aten::softmax", "aten::layer_norm", "aten::gelu", "aten::copy_", "aten::to", "aten::view",
       "aten::transpose", "aten::empty", "aten::cat", "aten::reshape", "aten::native_layer_norm",
       "aten::scaled_dot_product_attention", "aten::embedding", "aten::dropout"]
MODULES = ["nn.Module: Linear", "nn.Module: LayerNorm", "nn.Module: Attention", "nn.Module: MLP",
           "nn.Module: DecoderLayer", "Optimizer.step#AdamW.step", "DataLoader.__next__"]


def us(ns):
    """ns as the decimal microseconds Chrome traces use."""
    return "%d.%03d" % divmod(ns, 1000)


class Writer:
    def __init__(self, out):
        self.out = out
        self.first = True
        self.buf = []

    def event(self, text):
        if not self.first:
            self.buf.append(",\n")
        self.first = False
        self.buf.append(text)
        if len(self.buf) >= 8192:
            self.flush()

    def flush(self):
        self.out.write("".join(self.buf))
        self.buf.clear()


def thread_events(w, rng, pid, tid, quota, max_depth, t0, ext, args):
    """Writes `quota` X events of one thread; returns the next external id."""
    left = [quota]

    def emit(name, start, end, cat):
        nonlocal ext
        ext += 1
        tail = ',"args":{"External id":%d}}' % ext if args else "}"
        w.event('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s%s'
                % (cat, name, pid, tid, us(start), us(end - start), tail))
        left[0] -= 1

    def tree(lo, hi, depth):
        if depth > max_depth or hi - lo < 2000 or left[0] <= 0:
            return
        t = lo + rng.randrange(0, 200)
        for _ in range(rng.randint(1, 5)):
            if t >= hi or left[0] <= 0:
                return
            span = hi - t
            d = rng.randrange(span // 8 + 1, span // 2 + 2)
            end = min(t + d, hi)
            emit(rng.choice(OPS) if depth > 1 or rng.random() < 0.5 else rng.choice(MODULES), t, end, "cpu_op")
            tree(t, end, depth + 1)
            t = end + rng.randrange(0, 500)

    t, step = t0, 0
    while left[0] > 0:
        d = rng.randrange(2_000_000, 40_000_000)   # 2-40 ms steps
        emit("ProfilerStep#%d" % step, t, t + d, "user_annotation")
        tree(t, t + d, 1)
        t += d + rng.randrange(10_000, 200_000)
        step += 1
    return ext


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=10_000_000, help="X events in all (default 10,000,000)")
    ap.add_argument("--threads", type=int, default=8, help="threads, each with events/threads events (default 8)")
    ap.add_argument("--depth", type=int, default=8, help="deepest operator level under a step (default 8)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default="trace.json", help="output file (.gz: gzip-compressed); - for stdout")
    ap.add_argument("--args", action="store_true", help='give each event {"External id": N} args')
    a = ap.parse_args()
    if a.events < 1 or a.threads < 1 or a.depth < 1:
        ap.error("--events, --threads and --depth must be at least 1")
    rng = random.Random(a.seed)
    if a.out == "-":
        out = sys.stdout
    elif a.out.endswith(".gz"):
        out = gzip.open(a.out, "wt", compresslevel=1)
    else:
        out = open(a.out, "w", buffering=1 << 20)
    w = Writer(out)
    out.write('{"schemaVersion": 1, "displayTimeUnit": "ms",\n "traceEvents": [\n')
    t0 = 1_712_195_495_519_695_000   # ns, 2024-04-04
    ext, pid = 0, 4242
    for k in range(a.threads):
        tid = pid + k
        quota = a.events // a.threads + (1 if k < a.events % a.threads else 0)
        w.event('{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"thread %d"}}' % (pid, tid, k))
        ext = thread_events(w, rng, pid, tid, quota, a.depth, t0, ext, a.args)
    w.flush()
    out.write("\n]}\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
