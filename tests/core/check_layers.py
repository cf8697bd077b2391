#!/usr/bin/env python3
"""The layers of the core (docs/DESIGN.md "Layers"), checked on the built library.

Every src/*.c file sits on one layer; a file may call down and sideways (its own
layer), never up. The calls are read from the object files of the static library
(`nm`: which file defines each external symbol, which files use it), so what is
checked is what the compiler linked, not what comments say.

The core keeps this everywhere (KNOWN_UP, the list of tolerated calls up with
their reasons, is empty). The check fails when a call up appears that is not
listed, and when a listed one is gone (so that the list only shrinks: delete
the line). Prints every edge it checked.

usage: check_layers.py LIBCAIRN.a [NM]
"""
from __future__ import annotations

import collections
import subprocess
import sys

# Lowest first. A file calls only files on its own layer or below.
LAYERS = (
    ("base", ("crc.c",)),
    ("device", ("device.c",)),                      # the driver's calls, bad blocks, erase state
    ("pages", ("tag.c",)),                          # data pages and their NAND spare tags
    ("segments", ("seg.c",)),                       # the segment table: states, live counts, wear
    ("guard", ("invariant.c",)),                    # the entry guard and the state check
    ("heads", ("alloc.c",)),                        # pages from the write heads, space accounting
    ("checkpoint", ("anchor.c", "ckpt.c")),         # anchors, checkpoint slots
    ("index", ("cache.c", "tree.c")),               # node cache, the B+tree
    ("journal", ("journal.c",)),                    # records in the log segment
    ("records", ("apply.c", "ringrec.c")),          # a change as records, applied to the tree; commit
    ("collector", ("gc.c",)),                       # GC: victims, moves
    ("settle", ("space.c",)),                       # making room at the entry of an operation
    ("names", ("name.c",)),                         # paths walked, objects created by name
    ("objects", ("file.c", "dir.c", "ring.c", "bd.c")),  # files, directories, rings, sectors
    ("api", ("fs.c", "check.c")),                   # mount, format, sync, cairn_check
)

# (caller file, callee symbol): calls up that exist today, and why. Empty
# since session 12: the last three (a corrected read closing a head, a commit
# and a GC victim invalidating open files' cursors and tails) became a
# segment flag and two generation counters. A new entry needs its reason.
KNOWN_UP: dict = {}


def layer_of() -> dict:
    out = {}
    for depth, (_, files) in enumerate(LAYERS):
        for f in files:
            out[f] = depth
    return out


def read_symbols(lib: str, nm: str):
    """defined: symbol -> file; used: file -> symbols it takes from outside."""
    text = subprocess.run([nm, "-A", lib], check=True, capture_output=True,
                          text=True).stdout
    defined, used = {}, collections.defaultdict(set)
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3 and not (len(parts) == 2 and parts[1] == "U"):
            continue
        member = parts[0].split(":")[-2] if parts[0].count(":") >= 2 else parts[0]
        member = member.rsplit("/", 1)[-1]
        for suffix in (".c.o", ".c.obj", ".o"):
            if member.endswith(suffix):
                member = member[: -len(suffix)] + ".c"
                break
        kind, sym = parts[-2], parts[-1]
        if kind == "U":
            used[member].add(sym)
        elif kind in "TDBRCG":
            defined[sym] = member
    return defined, used


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    lib, nm = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "nm"
    depth = layer_of()
    defined, used = read_symbols(lib, nm)
    files = set(used) | set(defined.values())
    unplaced = sorted(f for f in files if f not in depth)
    failures = []
    if unplaced:
        failures.append(f"files on no layer (add them to LAYERS): {', '.join(unplaced)}")
    up_seen = set()
    edges = 0
    for caller in sorted(used):
        for sym in sorted(used[caller]):
            callee = defined.get(sym)
            if callee is None or callee == caller or caller not in depth or callee not in depth:
                continue
            edges += 1
            if depth[callee] <= depth[caller]:
                continue
            up_seen.add((caller, sym))
            what = (f"{caller} ({LAYERS[depth[caller]][0]}) calls up into {callee} "
                    f"({LAYERS[depth[callee]][0]}): {sym}")
            if (caller, sym) in KNOWN_UP:
                print(f"  known call up: {what}: {KNOWN_UP[(caller, sym)]}")
            else:
                failures.append(f"new call up: {what}")
    for key in sorted(set(KNOWN_UP) - up_seen):
        failures.append(f"listed in KNOWN_UP but no longer a call up (delete the line): {key}")
    print(f"check_layers: {len(depth)} files on {len(LAYERS)} layers, {edges} calls between "
          f"files checked, {len(up_seen)} calls up ({len(KNOWN_UP)} known)")
    for f in failures:
        print(f"FAIL {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
