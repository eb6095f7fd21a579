"""Writes the seed corpus of the xspace fuzz harness (tests/fuzz/make_corpus.sh runs it):

  jax-small.xplane.pb   the real JAX XSpace of tests/data/real-gpu with each line cut to
                        its first 4 events and its /host:metadata plane (HLO protos) dropped
  jax-cut.xplane.pb     the same cut at two thirds (a truncated file)
  empty.xplane.pb       an empty file (an XSpace with nothing)
  hand-made.xplane.pb   one plane: a line with a 64-bit id and a display name, an event
                        with every kind of stat value, an internal and an aggregated event,
                        an event metadata with a display name and stats; metadata after lines

  python3 tests/fuzz/xspace_seeds.py JAX_XPLANE_PB OUT_DIR
"""
import struct
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def enc(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def fields(b):
    """(number, payload of a length-delimited field or None, the field's raw bytes)."""
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        wire, payload = key & 7, None
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            n, i = varint(b, i)
            payload = b[i:i + n]
            i += n
        yield key >> 3, payload, b[start:i]


def tag(number, wire):
    return enc(number << 3 | wire)


def ld(number, payload):
    return tag(number, 2) + enc(len(payload)) + payload


def uint(number, v):
    return tag(number, 0) + enc(v % 2**64)


def cut_line(line, keep):
    out, n = b"", 0
    for number, _, raw in fields(line):
        if number == 4:
            n += 1
            if n > keep:
                continue
        out += raw
    return out


def small_jax(src):
    out = b""
    for number, plane, raw in fields(src):
        if number != 1:
            out += raw
            continue
        if any(n == 2 and p == b"/host:metadata" for n, p, _ in fields(plane)):
            continue
        kept = b""
        for n, p, r in fields(plane):
            kept += ld(3, cut_line(p, 4)) if n == 3 else r
        out += ld(1, kept)
    return out


def stat(metadata_id, value):
    return ld(4, uint(1, metadata_id) + value)


def entry(field, key, value):
    return ld(field, uint(1, key) + ld(2, value))


def hand_made():
    ev = (uint(1, 1) + uint(2, 2500) + uint(3, 1499)
          + stat(1, tag(2, 1) + struct.pack("<d", 12.5)) + stat(2, uint(3, 2**64 - 1))
          + stat(3, uint(4, -5)) + stat(4, ld(5, b"str")) + stat(5, ld(6, b"\x00\xff"))
          + stat(6, uint(7, 1)) + stat(7, uint(4, 1)))
    internal = uint(1, 2) + uint(2, 10)
    aggregated = uint(1, 1) + uint(5, 3)
    line = (uint(1, 2**33 + 7) + ld(2, b"raw") + ld(11, b"python3") + uint(3, 50)
            + ld(4, ev) + ld(4, internal) + ld(4, aggregated) + uint(10, 9))
    plane = (ld(2, b"/host:CPU") + ld(3, line)
             + entry(4, 1, uint(1, 1) + ld(2, b"Then:sync") + ld(4, b"sync")
                     + ld(5, uint(1, 1) + tag(2, 1) + struct.pack("<d", 0.5)))
             + entry(4, 2, ld(2, b"MemoryAllocation")))
    for i, name in enumerate([b"ratio", b"big", b"neg", b"s", b"blob", b"ref", b"_p"], 1):
        plane += entry(5, i, uint(1, i) + ld(2, name))
    return ld(1, plane) + ld(4, b"host")


def main():
    src, out = sys.argv[1], sys.argv[2]
    small = small_jax(open(src, "rb").read())
    seeds = {"jax-small.xplane.pb": small, "jax-cut.xplane.pb": small[:len(small) * 2 // 3],
             "empty.xplane.pb": b"", "hand-made.xplane.pb": hand_made()}
    for name, data in seeds.items():
        with open(f"{out}/{name}", "wb") as f:
            f.write(data)


main()
