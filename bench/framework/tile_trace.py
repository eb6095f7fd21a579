#!/usr/bin/env python3
"""bench/framework/tile_trace.py — a large trace.json from a generated one, fast: the
traceEvents of IN written COPIES times over, inside IN's own top-level object, so that the
memory bound of `nxprof process` can be checked at 10 GB without waiting for gen_kineto.py
(about 1 MB/s per CPU-second at that size on a loaded machine). The events repeat exactly
(same times, ids and flows), which changes the profile's content but not the work per byte.

    python3 bench/framework/tile_trace.py IN_TRACE_JSON COPIES OUT_TRACE_JSON
"""
import sys

OPEN = b'"traceEvents": ['


def main(src, copies, out):
    with open(src, 'rb') as f:
        text = f.read()
    start = text.index(OPEN) + len(OPEN)
    end = text.rindex(b']', 0, text.rindex(b'"traceName"'))
    body = text[start:end].rstrip()
    with open(out, 'wb') as o:
        o.write(text[:start])
        for i in range(copies):
            if i:
                o.write(b',')
            o.write(body)
        o.write(b'\n  ' + text[end:])
    return 0


if __name__ == '__main__':
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
