#!/usr/bin/env python3
"""The FUSE debug log of `cairn mount -f -o debug` (real_programs.py writes it
to WORKDIR/NAME.img.mount.log with RP_FUSE_DEBUG=1) -> a compact trace of the
calls the mount made, for python/tests/test_traces.py to replay through the
bindings without FUSE. One call a line:

  M            the mount ended and a new one began (unmount, mount)
  S PATH       stat (FUSE's LOOKUP and getattr)
  L PATH       list a directory (opendir)
  R PATH N     open PATH for reading and read its first N bytes
  D PATH       mkdir
  U PATH       remove
  C PATH       create (exclusive); W, F and X apply to it
  W OFF LEN    write LEN bytes at OFF
  F            sync the file (FUSE's flush at each close(2))
  X            close it

usage: fuse_trace.py MOUNT.LOG > TRACE   (then gzip -9 it)
"""
import re
import sys


def trace(lines):
    out, reading = [], None
    for line in lines:
        if line.startswith("=== mount") and not line.startswith("=== mount 1 "):
            out.append("M")
            continue
        m = re.match(r"^LOOKUP (\S+)$", line) or re.match(r"^getattr\[\w+\] (\S+)$", line)
        if m:
            out.append("S " + m.group(1))
            continue
        m = re.match(r"^opendir flags: \S+ (\S+)$", line)
        if m:
            out.append("L " + m.group(1))
            continue
        m = re.match(r"^open flags: 0x8000 (\S+)$", line)
        if m:
            reading = len(out)
            out.append(["R", m.group(1), 0])
            continue
        m = re.match(r"^read\[\d+\] (\d+) bytes from (\d+)", line)
        if m and reading is not None:
            out[reading][2] = max(out[reading][2], int(m.group(1)) + int(m.group(2)))
            continue
        for op, pattern in (("D", r"^mkdir (\S+) "), ("U", r"^unlink (\S+)$"),
                            ("C", r"^create flags: \S+ (\S+) ")):
            m = re.match(pattern, line)
            if m:
                out.append(op + " " + m.group(1))
                break
        else:
            m = re.match(r"^write\[\d+\] (\d+) bytes to (\d+) flags", line)
            if m:
                out.append("W %s %s" % (m.group(2), m.group(1)))
                continue
            # handle 0 is a read-only one (the tool sets a flag above it for writers)
            m = re.match(r"^(flush|release)\[(\d+)\]", line)
            if m and m.group(2) != "0":
                out.append("F" if m.group(1) == "flush" else "X")
    return [o if isinstance(o, str) else "%s %s %d" % tuple(o) for o in out]


if __name__ == "__main__":
    with open(sys.argv[1], errors="replace") as f:
        print("\n".join(trace(f.read().split("\n"))))
