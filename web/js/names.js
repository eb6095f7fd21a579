// names.js — event names shortened for display, the way GPU profilers show demangled C++
// kernel names (docs/viewer.md, "Kernel names"): the full name stays in the tooltip and
// in Event Details; timeline labels, the colour legend and the summary's lists show the
// short one.
//
// shortName(name): a name of at most LONG characters, or one that is not a C++ function
// signature, comes back unchanged (Python frames, "Memcpy HtoD (Pinned -> Device)",
// "PjitFunction(step)", JAX fusions, nvjet/cutlass kernels). A longer signature:
//   1. template arguments `<...>` (nested) fold to `<…>`, parameter lists `(...)` to
//      `(…)`; `(anonymous namespace)` is a scope and `operator()` a name, neither folds,
//      and a template argument that is one identifier stays, since it names the kernel's
//      configuration (`cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_…>`);
//   2. the return type before the qualified name is dropped (`void `, `unsigned int `);
//   3. when the result is still longer than LONG characters, only the function's name and
//      its nearest named scope stay (anonymous namespaces are skipped).
export const LONG = 60;
const ANON = '(anonymous namespace)';
const CLOSE = { '<': '>', '(': ')' };
const FOLDED = { '<': '<…>', '(': '(…)' };
const OPERATOR = /^operator(?:\(\)|\[\]|[^\s\w(]{1,3})?/;
// One scope of a folded name: an identifier, an operator, an anonymous namespace or a
// lambda, with its template arguments.
const SCOPE = String.raw`(?:[A-Za-z_~$][\w$]*|operator\S*?|\(anonymous namespace\)|\{lambda\(…\)#\d+\})(?:<…>|<[A-Za-z_]\w*>)?`;
const SIGNATURE = new RegExp(String.raw`^(?:[\w:*&<>…]+ )*${SCOPE}(?:::${SCOPE})*\(…\)(?: const)?$`);

// Length of the token at s[i] that is never folded: an anonymous namespace, or an
// operator's name with its symbol (`operator()`, `operator<`); 0 for anything else.
function keepLength(s, i) {
  if (s.startsWith(ANON, i)) return ANON.length;
  if (!s.startsWith('operator', i) || /\w/.test(s[i - 1] || '')) return 0;
  return OPERATOR.exec(s.slice(i, i + 12))[0].length;
}

// The index just past the bracket group opening at s[i] (the end of s when unclosed).
function groupEnd(s, i) {
  const stack = [CLOSE[s[i]]];
  let j = i + 1;
  while (j < s.length && stack.length) {
    const keep = keepLength(s, j);
    if (keep) { j += keep; continue; }
    if (CLOSE[s[j]]) stack.push(CLOSE[s[j]]);
    else if (s[j] === stack[stack.length - 1]) stack.pop();
    j++;
  }
  return j;
}

// Step 1: every top-level bracket group folded.
function fold(s) {
  let out = '';
  for (let i = 0; i < s.length;) {
    const keep = keepLength(s, i);
    if (keep) { out += s.slice(i, i + keep); i += keep; continue; }
    if (CLOSE[s[i]]) {
      const end = groupEnd(s, i), inner = s.slice(i, end);
      out += s[i] === '<' && /^<[A-Za-z_]\w*>$/.test(inner) ? inner : FOLDED[s[i]];
      i = end;
      continue;
    }
    out += s[i++];
  }
  return out;
}

// Step 2: a folded signature has spaces only in its return type, its anonymous
// namespaces and a trailing " const".
function dropReturnType(s) {
  const hidden = s.replaceAll(ANON, ANON.replace(' ', '\u0000'));
  const head = hidden.slice(0, hidden.indexOf('(…)'));
  return hidden.slice(head.lastIndexOf(' ') + 1).replaceAll('\u0000', ' ');
}

// Step 3: the function's name and its nearest named scope.
function lastScopes(s) {
  const parts = s.split('::').filter((p, i, all) => i === all.length - 1 || p !== ANON);
  return parts.slice(-2).join('::');
}

const cache = new Map();
const CACHE_MAX = 20000;

export function shortName(name) {
  if (typeof name !== 'string' || name.length <= LONG) return name;
  const hit = cache.get(name);
  if (hit !== undefined) return hit;
  const folded = fold(name.trim());
  let s = name;
  if (SIGNATURE.test(folded)) {
    s = dropReturnType(folded);
    if (s.length > LONG) s = lastScopes(s);
  }
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(name, s);
  return s;
}
