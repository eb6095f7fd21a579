# harness.sh — shared by the CLI test scripts (source it after setting BIN).
# Counts passes and failures; `finish` prints the "N passed, N failed" line and
# returns non-zero if anything failed.
pass=0 fail=0
OUT=

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# check SHELL-CONDITION DESCRIPTION
check() { if eval "$1"; then ok; else bad "$2"; fi; }

# expect CODE DESCRIPTION -- ARGS...: runs nxprof ARGS, keeps its output in OUT.
expect() {
    local want=$1 what=$2; shift 3
    local rc
    OUT=$("$BIN" "$@" 2>&1); rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else bad "$what: 'nxprof $*' exited $rc, want $want"; echo "$OUT" | head -5; fi
}

# contains TEXT DESCRIPTION: the last expect's output holds TEXT.
contains() {
    if grep -qF -- "$1" <<<"$OUT"; then ok; else bad "$2: output lacks '$1'"; fi
}

finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
