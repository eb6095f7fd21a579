#!/usr/bin/env python3
"""bench/framework/gen_kineto.py — a deterministic Kineto-shaped trace.json of a requested size.

    python3 bench/framework/gen_kineto.py --size-mb 100 --out DIR/trace.json [--seed 7]
    python3 bench/framework/gen_kineto.py --mix FILE [FILE ...]   # print mixes side by side

The event mix copies tests/data/real-gpu/gpt2_eager.json.gz (PyTorch 2.11 profiler, GPT-2
eager training on one H200, profile_memory and record_shapes on), measured with --mix:

- X cpu_op about 40% (most with "Input Dims"/"Input Strides"/"Input type"/"Concrete Inputs"
  shape args, some with "Sequence number" and "Fwd thread id"), nested under ProfilerStep
  user_annotation spans;
- [memory] instant events ("ph":"i", cat cpu_instant_event) about 17%, each with its
  allocation fields;
- CUDA runtime and driver calls (X cuda_runtime / cuda_driver, args cbid and correlation),
  each with an ac2g flow end; most launch a kernel (X kernel, 13 launch args, a long C++
  template name) or a memset (X gpu_memset) on stream 7, with an ac2g flow start;
- fwdbwd flow pairs (s and f) around backward ops;
- M metadata (process and thread names, sort indexes, labels) and Kineto's trailing Spans /
  Traces events.

The layout (line breaks, indentation, key order) is Kineto's, so the bytes per event are
close to the real file's (about 7% more: more shape args and longer kernel names). Same seed and size -> same bytes. Python stdlib only.
"""
import argparse
import collections
import gzip
import json
import random
import sys

PID, CPU_TID, BWD_TID, GPU_PID, STREAM = 469, 469, 520, 0, 7

HEADER = '''
  {
    "schemaVersion": 1,
    "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132
    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472
    }
    ],
      "trace_id": "6B559AA4B68D41BB9FBCD42374066CCF",
      "profile_memory": 1,
      "cuda_driver_version": 13000,
      "record_shapes": 1,
      "with_flops": 1,
      "cuda_runtime_version": 13000,
      "cupti_version": 130001,
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": ['''

CPU_OPS = ['aten::add', 'aten::mul', 'aten::mm', 'aten::addmm', 'aten::linear', 'aten::matmul',
           'aten::copy_', 'aten::to', 'aten::_to_copy', 'aten::empty', 'aten::empty_strided',
           'aten::view', 'aten::reshape', 'aten::transpose', 'aten::t', 'aten::permute',
           'aten::contiguous', 'aten::layer_norm', 'aten::native_layer_norm', 'aten::gelu',
           'aten::softmax', 'aten::_softmax', 'aten::dropout', 'aten::fill_', 'aten::zero_',
           'aten::scaled_dot_product_attention', 'aten::_flash_attention_forward',
           'aten::embedding', 'aten::index_select', 'aten::sum', 'aten::mean', 'aten::div',
           'aten::nll_loss_backward', 'aten::add_', 'aten::mul_', 'aten::addcdiv_',
           'aten::addcmul_', 'aten::sqrt', 'aten::lerp_', 'aten::_foreach_add_']
BWD_OPS = ['autograd::engine::evaluate_function: AddmmBackward0', 'AddmmBackward0',
           'autograd::engine::evaluate_function: GeluBackward0', 'GeluBackward0',
           'autograd::engine::evaluate_function: NativeLayerNormBackward0',
           'NativeLayerNormBackward0', 'autograd::engine::evaluate_function: ViewBackward0',
           'ViewBackward0', 'autograd::engine::evaluate_function: TBackward0', 'TBackward0']
RUNTIME = [('cudaLaunchKernel', 211), ('cudaMemsetAsync', 51), ('cudaStreamIsCapturing', 317),
           ('cudaMemcpyAsync', 41), ('cudaEventRecord', 135), ('cudaStreamWaitEvent', 147)]
DRIVER = [('cuLaunchKernelEx', 652), ('cuLaunchKernel', 307)]
TYPES = ['float', 'c10::BFloat16', 'long int', 'Scalar', 'ScalarList', '', 'bool']
DIMS = [[], [4096, 768], [8, 512, 768], [768, 768], [768, 2304], [4096, 2304], [50257, 768],
        [4096, 50257], [8, 12, 512, 64], [768], [2304], [4096], [8, 512]]


def kernel_names(rng):
    """70 long C++ template names (the real file has 69, median 205 characters)."""
    functors = ['at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda(float)#1}',
                'at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >',
                'at::native::CUDAFunctor_add<float>', 'at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda(c10::BFloat16)#1}',
                'at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}',
                'at::native::FillFunctor<float>', 'at::native::sqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda(float)#1}']
    names = []
    for i in range(70):
        f = functors[i % len(functors)]
        kind = i % 5
        if kind == 0:
            names.append(f'void at::native::vectorized_elementwise_kernel<{[2, 4, 8, 16][i % 4]}, {f}, std::array<char*, {2 + i % 2}ul> >(int, {f}, std::array<char*, {2 + i % 2}ul>)')
        elif kind == 1:
            names.append(f'void at::native::unrolled_elementwise_kernel<{f}, std::array<char*, 3ul>, 4, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1> >(int, {f}, std::array<char*, 3ul>)')
        elif kind == 2:
            names.append(f'void at::native::reduce_kernel<{[128, 256, 512][i % 3]}, 4, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{{lambda(float, float)#1}}>, unsigned int, c10::BFloat16, 4, 4> >(at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, float>, unsigned int, c10::BFloat16, 4, 4>)')
        elif kind == 3:
            names.append(f'sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize{[64, 128, 256][i % 3]}x{[64, 128][i % 2]}x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas')
        else:
            names.append(f'void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, {"true" if i % 2 else "false"}>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)')
    rng.shuffle(names)
    return names


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.kernels = kernel_names(self.rng)
        self.ts = 5538127075825.384
        self.gpu_ts = self.ts + 300.0
        self.ext = 1
        self.corr = 21000
        self.flow = 1
        self.ev_idx = 0
        self.reserved = 8082423808
        self.allocated = 6898636800

    def tick(self, lo, hi):
        self.ts += round(self.rng.uniform(lo, hi), 3)
        return self.ts

    def idx(self):
        self.ev_idx += 1
        return self.ev_idx - 1

    def shapes(self):
        r = self.rng
        n = r.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7, 8, 16])
        dims = [r.choice(DIMS) for _ in range(n)]
        strides = []
        for d in dims:
            s, acc = [], 1
            for x in reversed(d):
                s.insert(0, acc)
                acc *= x
            strides.append(s)
        types = [r.choice(TYPES) if d == [] else r.choice(TYPES[:3]) for d in dims]
        concrete = ['' if d else r.choice(['', '1', '0', '-100', '[8, 512, 50257]']) for d in dims]
        js = lambda v: json.dumps(v)
        return (f'"Concrete Inputs": {js(concrete)}, "Input type": {js(types)}, '
                f'"Input Strides": {js(strides)}, "Input Dims": {js(dims)}')

    def x(self, cat, name, pid, tid, ts, dur, args):
        return (f'\n  {{\n    "ph": "X", "cat": "{cat}", "name": "{name}", "pid": {pid}, "tid": {tid},\n'
                f'    "ts": {ts:.3f}, "dur": {dur:.3f},\n    "args": {{\n      {args}\n    }}\n  }}')

    def flow_ev(self, ph, cat, fid, tid, ts):
        bp = ', "bp": "e"' if ph == 'f' else ''
        return (f'\n  {{\n    "ph": "{ph}", "id": {fid}, "pid": {PID}, "tid": {tid}, "ts": {ts:.3f},\n'
                f'    "cat": "{cat}", "name": "{cat}"{bp}\n  }}')

    def cpu_op(self):
        r = self.rng
        ts, self.ext = self.tick(2, 40), self.ext + 1
        tid = r.choice([CPU_TID, BWD_TID, BWD_TID])
        seq = f'"Sequence number": {r.randrange(4000)}, "Fwd thread id": 1, ' if r.random() < 0.29 else ''
        args = f'"External id": {self.ext},{seq}"Record function id": 0, {self.shapes()}, "Ev Idx": {self.idx()}'
        return [self.x('cpu_op', r.choice(CPU_OPS), PID, tid, ts, r.uniform(1, 300), args)]

    def backward(self):
        r = self.rng
        ts, self.ext, fid = self.tick(2, 40), self.ext + 1, self.flow
        self.flow += 1
        args = (f'"External id": {self.ext},"Record function id": 0, "Sequence number": {r.randrange(4000)}, '
                f'"Fwd thread id": 1, "Ev Idx": {self.idx()}')
        return [self.flow_ev('s', 'fwdbwd', fid, CPU_TID, ts - 5000.0),
                self.x('cpu_op', r.choice(BWD_OPS), PID, BWD_TID, ts, r.uniform(20, 300), args),
                self.flow_ev('f', 'fwdbwd', fid, BWD_TID, ts)]

    def launch(self):
        r = self.rng
        ts, self.corr, self.ext = self.tick(2, 20), self.corr + 1, self.ext + 1
        cat, (name, cbid) = ('cuda_driver', r.choice(DRIVER)) if r.random() < 0.137 else \
            ('cuda_runtime', r.choice(RUNTIME))
        out = [self.x(cat, name, PID, CPU_TID, ts, r.uniform(2, 15),
                      f'"External id": {self.ext}, "cbid": {cbid}, "correlation": {self.corr}'),
               self.flow_ev('f', 'ac2g', self.corr, CPU_TID, ts)]
        if r.random() < 0.852:
            self.gpu_ts = max(self.gpu_ts, ts + 5.0) + round(r.uniform(0.5, 3), 3)
            if r.random() < 0.912:
                k = r.choice(self.kernels)
                g = r.choice([[4096, 1, 1], [96, 8, 1], [1024, 12, 1], [132, 1, 1]])
                args = (f'"External id": {self.ext}, "queued": 0, "device": 0, "context": 1, '
                        f'"stream": {STREAM}, "correlation": {self.corr}, "registers per thread": '
                        f'{r.choice([32, 40, 64, 128, 168])}, "shared memory": {r.choice([0, 16384, 49152, 232448])}, '
                        f'"blocks per SM": {r.uniform(0.5, 40):.6f}, "warps per SM": {r.uniform(4, 200):.6f}, '
                        f'"grid": {json.dumps(g)}, "block": [{r.choice([128, 192, 256, 512])}, 1, 1], '
                        f'"est. achieved occupancy %": {r.randrange(10, 100)}')
                dur = r.uniform(1, 400)
                out.append(self.x('kernel', k, GPU_PID, STREAM, self.gpu_ts, dur, args))
            else:
                nbytes = r.choice([4, 3072, 1048576])
                dur = r.uniform(0.5, 3)
                args = (f'"External id": {self.ext}, "device": 0, "context": 1, "stream": {STREAM}, '
                        f'"correlation": {self.corr}, "bytes": {nbytes}, "memory bandwidth (GB/s)": {nbytes / dur / 1000:.16g}')
                out.append(self.x('gpu_memset', 'Memset (Device)', GPU_PID, STREAM, self.gpu_ts, dur, args))
            out.append(self.flow_ev('s', 'ac2g', self.corr, CPU_TID, ts))
            self.gpu_ts += dur
        return out

    def memory(self):
        r = self.rng
        ts = self.tick(0.5, 10)
        nbytes = r.choice([512, 3145728, 12582912, 824180736]) * r.choice([1, -1])
        self.allocated += nbytes
        self.reserved = max(self.reserved, self.allocated)
        return [f'\n  {{\n    "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",\n'
                f'    "pid": {PID}, "tid": {r.choice([CPU_TID, BWD_TID])},\n    "ts": {ts:.3f},\n    "args": {{\n'
                f'      "Total Reserved": {self.reserved}, "Total Allocated": {self.allocated}, "Bytes": {nbytes}, '
                f'"Device Id": 0, "Device Type": 1, "Addr": {140410869514240 + r.randrange(1 << 30) * 512}, '
                f'"finished": false, "Ev Idx": {self.idx()}\n    }}\n  }}']

    def step(self, n):
        """A ProfilerStep span (cpu and gpu annotation) over the next n units."""
        self.ext += 1
        return [self.x('user_annotation', f'ProfilerStep#{n}', PID, CPU_TID, self.ts, 95907.737,
                       f'"External id": {self.ext}, "Record function id": 0, "Ev Idx": {self.idx()}'),
                self.x('gpu_user_annotation', f'ProfilerStep#{n}', GPU_PID, STREAM, self.gpu_ts, 95907.737,
                       f'"External id": {self.ext}')]

    def unit(self):
        # Weights: units per real event counts (launch = runtime+driver calls, memory = [memory]
        # instants, backward = fwdbwd pairs, cpu_op = the other cpu_ops).
        u = self.rng.choices((self.cpu_op, self.launch, self.memory, self.backward),
                             weights=(16851, 4270, 8070, 1851))[0]
        return u()


def metadata(ts):
    out = []
    for name, pid, tid, args in [('process_name', PID, 0, '"name": "python3"'),
                                 ('process_labels', PID, 0, '"labels": "CPU"'),
                                 ('process_sort_index', PID, 0, f'"sort_index": {PID}'),
                                 ('process_name', GPU_PID, 0, '"name": "python3"'),
                                 ('process_labels', GPU_PID, 0, '"labels": "GPU 0"'),
                                 ('process_sort_index', GPU_PID, 0, '"sort_index": 16777216'),
                                 ('thread_name', GPU_PID, STREAM, '"name": "stream 7 "'),
                                 ('thread_sort_index', GPU_PID, STREAM, f'"sort_index": {STREAM}'),
                                 ('thread_name', PID, CPU_TID, '"name": "thread 469 (python3)"'),
                                 ('thread_sort_index', PID, CPU_TID, f'"sort_index": {CPU_TID}'),
                                 ('thread_name', PID, BWD_TID, '"name": "thread 520 (pt_autograd_0)"'),
                                 ('thread_sort_index', PID, BWD_TID, f'"sort_index": {BWD_TID}')]:
        out.append(f'\n  {{\n    "name": "{name}", "ph": "M", "ts": {ts:.3f}, "pid": {pid}, "tid": {tid},\n'
                   f'    "args": {{\n      {args}\n    }}\n  }}')
    out.append(f'\n  {{\n    "ph": "X", "cat": "Trace", "ts": {ts:.3f}, "dur": 297249.611,\n'
               '    "pid": "Spans", "tid": "PyTorch Profiler",\n    "name": "PyTorch Profiler (0)",\n'
               '    "args": {\n      "Op count": 0\n    }\n  }')
    out.append(f'\n  {{\n    "name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g",\n'
               f'    "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": {ts:.3f}\n  }}')
    return out


def generate(path, size, seed):
    g = Gen(seed)
    start = g.ts
    written, n_step, first = 0, 0, True
    with open(path, 'w', buffering=1 << 22) as f:
        f.write(HEADER)
        written += len(HEADER)
        tail_reserve = 4096
        while written < size - tail_reserve:
            batch = []
            if g.ev_idx // 5000 >= n_step:
                n_step += 1
                batch += g.step(n_step)
            for _ in range(32):
                batch += g.unit()
            text = ','.join(batch)
            if not first:
                text = ',' + text
            first = False
            f.write(text)
            written += len(text)
        text = ',' + ','.join(metadata(start)) + '\n  ],\n  "traceName": "/tmp/trace.json"\n}'
        f.write(text)
        written += len(text)
    return written


def mix(path):
    """Share of events per (ph, cat) and mean bytes per event, as {label: share}, bytes/event."""
    opener = gzip.open if path.endswith('.gz') else open
    with opener(path, 'rb') as f:
        raw = f.read()
    events = json.loads(raw)['traceEvents']
    counts = collections.Counter()
    for e in events:
        label = e.get('ph', '?') + ' ' + ('[memory]' if e.get('name') == '[memory]' else e.get('cat', ''))
        counts[label] += 1
    n = len(events)
    return {k: v / n for k, v in counts.items()}, len(raw) / n, n


def print_mix(paths):
    mixes = [mix(p) for p in paths]
    labels = sorted({k for m, _, _ in mixes for k in m}, key=lambda k: -mixes[0][0].get(k, 0))
    print('%-28s' % 'ph cat' + ''.join('%14s' % p.split('/')[-1][:13] for p in paths))
    for k in labels:
        print('%-28s' % k + ''.join('%13.2f%%' % (100 * m.get(k, 0)) for m, _, _ in mixes))
    print('%-28s' % 'events' + ''.join('%14d' % n for _, _, n in mixes))
    print('%-28s' % 'bytes/event' + ''.join('%14.1f' % b for _, b, _ in mixes))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--size-mb', type=float, help='size of the JSON text in MB (10^6 bytes)')
    ap.add_argument('--out', help='output trace.json')
    ap.add_argument('--seed', type=int, default=7)
    ap.add_argument('--mix', nargs='+', metavar='FILE', help='print the event mix of FILEs')
    a = ap.parse_args()
    if a.mix:
        print_mix(a.mix)
        return
    if not a.out or not a.size_mb or a.size_mb <= 0:
        ap.error('--size-mb and --out are needed (or --mix)')
    n = generate(a.out, int(a.size_mb * 1e6), a.seed)
    print(f'{a.out}: {n} bytes', file=sys.stderr)


if __name__ == '__main__':
    main()
