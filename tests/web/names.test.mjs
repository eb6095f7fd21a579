// js.web_modules: web/js/names.js — kernel names shortened for display, on the real kernel
// names of tests/data/real-gpu/gpt2_eager.json.gz (torch 2.11 on an H200) and the names of
// the JAX trace beside it. Every expected short name is written out by hand here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { shortName, LONG } from '../../web/js/names.js';

const DATA = new URL('../data/real-gpu/', import.meta.url);
const traceNames = (file, keep) => new Set(JSON.parse(gunzipSync(readFileSync(new URL(file, DATA))))
  .traceEvents.filter((e) => e && e.ph === 'X' && keep(e)).map((e) => e.name));
const KERNELS = traceNames('gpt2_eager.json.gz', (e) => e.cat === 'kernel');
const TORCH = traceNames('gpt2_eager.json.gz', () => true);
const JAX = traceNames('jax_perfetto_trace.json.gz', () => true);

test('the issue example: return type dropped, template arguments and parameters folded', () => {
  assert.equal(shortName('void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)'),
    'at::native::vectorized_elementwise_kernel<…>(…)');
});

test('real PyTorch kernels', () => {
  const cases = [
    ['void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)',
      'at::native::vectorized_elementwise_kernel<…>(…)'],
    // lambdas with their own parameter lists and operator() inside the template arguments
    ['void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)',
      'at::native::vectorized_elementwise_kernel<…>(…)'],
    // an anonymous namespace is a scope; short enough, it stays
    ['void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)',
      'at::native::(anonymous namespace)::cunn_SoftMaxForward<…>(…)'],
    // still long: the name and its nearest named scope
    ['void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float, false>(float const*, float const*, float const*, float const*, float const*, float*, int)',
      'native::layer_norm_grad_input_kernel_vectorized<…>(…)'],
    ['void at_cuda_detail::cub::detail::scan::DeviceScanInitKernel<at_cuda_detail::cub::ScanTileState<long, true> >(at_cuda_detail::cub::ScanTileState<long, true>, int)',
      'scan::DeviceScanInitKernel<…>(…)'],
    // one identifier as template argument names the configuration: it stays
    ['void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x256_nt_align1>(cutlass_75_tensorop_bf16_s1688gemm_bf16_128x256_nt_align1::Params)',
      'cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x256_nt_align1>(…)'],
    ['void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, float const*, float const*, float const*, float*, void const*, void*, void*, bool, bool)',
      'cudnn::fusion::convert_dq_to_16bits<true>(…)'],
    // no return type
    ['at::cuda::philox::unpack_cudnn(at::PhiloxCudaState, long*, long*)', 'at::cuda::philox::unpack_cudnn(…)'],
  ];
  for (const [full, short] of cases) {
    assert.ok(KERNELS.has(full), `the fixture has ${full.slice(0, 60)}…`);
    assert.equal(shortName(full), short);
  }
});

test('every long C++ kernel of the trace gets a short name that keeps its function name', () => {
  let n = 0;
  for (const full of KERNELS) {
    if (full.length <= LONG || !full.includes('(')) continue;
    n++;
    const s = shortName(full);
    assert.ok(s.length < full.length, s);
    assert.ok(s.endsWith('(…)'), s);
    assert.ok(!s.startsWith('void '), s);
    // the identifier right before the outermost template or parameter list of the full
    // name, found by the first '<' or '(' that is not "(anonymous namespace)"
    const head = full.replaceAll('(anonymous namespace)', '').match(/^[^<(]*/)[0];
    const fn = head.split('::').pop().split(' ').pop();
    assert.ok(s.includes(`${fn}<`) || s.includes(`${fn}(`), `${s} names ${fn}`);
  }
  assert.ok(n >= 50, `${n} long kernels`);
});

test('names that are not long C++ signatures stay as they are', () => {
  const same = ['Memcpy DtoD (Device -> Device)', 'autograd::engine::evaluate_function: ScaledDotProductCudnnAttentionBackward0',
    'cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0',
    'nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT', 'aten::scaled_dot_product_attention', 'ProfilerStep#2'];
  for (const n of same) assert.equal(shortName(n), n);
  for (const n of TORCH) if (!KERNELS.has(n)) assert.equal(shortName(n), n, 'no CPU-side name of the trace changes');
  for (const n of ['PjitFunction(step)', 'cuGraphLaunch (CudaGraph:2)', '$profiler.py:385 __init__', 'loop_add_fusion', 'gemm_fusion_dot_16',
    'CommonPjRtLoadedExecutable::Execute (jit_step)', 'ComputeSemaphoreAcquire [capacity=32, value=31]']) {
    assert.ok(JAX.has(n), `the JAX trace has ${n}`);
    assert.equal(shortName(n), n);
  }
  for (const n of JAX) assert.equal(shortName(n), n, 'no JAX name changes');
  for (const n of ['loop_fusion', 'input_fusion_reduce', `cutlass_80_tensorop_s16816gemm_relu_bf16_${'x'.repeat(60)}`]) assert.equal(shortName(n), n);
  assert.equal(shortName(null), null);
  assert.equal(shortName(42), 42);
});

test('unbalanced or odd brackets never throw and never grow the name', () => {
  for (const n of [`void f<${'a,'.repeat(40)}`, `void g(${'int, '.repeat(20)}`, `void operator<<<${'T, '.repeat(30)}>(int)`,
    `${'>'.repeat(70)}`, `void ns::h<${'<'.repeat(70)}>(int)`]) {
    const s = shortName(n);
    assert.equal(typeof s, 'string');
    assert.ok(s.length <= n.length, s);
  }
});
