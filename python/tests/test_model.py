"""Hypothesis state machine: the file API against a Python model.

The model is a dict of paths to objects (bytearrays) plus the open handles
(object, position, access, dead). Rules: create / exclusive create, write at
offsets, append, read ranges, truncate, remove, rename, mkdir / rmdir of /d,
sync, remount, and operations on up to two open handles (which see each
other's writes, keep their own positions, and die with BADF when their file
is removed or renamed over). Invalid operations must fail with the right code.

Bounded for CI: max_examples and stateful_step_count are set explicitly per
machine (about 15 s for the four together on one core); the default
Hypothesis profile of conftest.py is derandomized.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

import cairn
from conftest import make_sim, pattern

NAMES = ["/a", "/b", "/c", "/d/e", "/d/f"]
names = st.sampled_from(NAMES)
lengths = st.integers(min_value=0, max_value=2500)
offsets = st.integers(min_value=0, max_value=6000)
seeds = st.integers(min_value=0, max_value=2**16)
MAX_HANDLES = 2  # default max_open is 4: path-based rules need a free one


@dataclass
class Handle:
    file: cairn.File
    obj: int
    pos: int
    readable: bool
    writable: bool
    append: bool
    dead: bool = False


class FileModel(RuleBasedStateMachine):
    MEDIUM = "nor"
    # Offsets and lengths are taken modulo these + 1; no write ends past
    # MAX_OFF + MAX_LEN (see room()).
    MAX_OFF = 6000
    MAX_LEN = 2500

    def __init__(self):
        super().__init__()
        self.sim = self.new_sim()
        cairn.format(self.sim)
        self.fs = cairn.mount(self.sim)
        self.paths: dict[str, int] = {}  # path -> object
        self.objs: dict[int, bytearray] = {}
        self.next_obj = 0
        self.handles: list[Handle] = []
        self.d_exists = False

    def new_sim(self) -> cairn.Sim:
        return make_sim(self.MEDIUM, seed=7)

    # ---- helpers ----
    def room(self, pos: int, n: int) -> int:
        """n, cut so that a write at pos ends by MAX_OFF + MAX_LEN: files (and
        so the live data) stay bounded however many appends a run makes."""
        return max(0, min(n, self.MAX_OFF + self.MAX_LEN - pos))

    def parent_ok(self, path: str) -> bool:
        return not path.startswith("/d/") or self.d_exists

    def expect(self, code, call, *args):
        with pytest.raises(cairn.Error) as ei:
            call(*args)
        assert ei.value.code == code, (ei.value, code)
        return ei.value

    def new_obj(self, path: str) -> int:
        o = self.next_obj
        self.next_obj += 1
        self.objs[o] = bytearray()
        self.paths[path] = o
        return o

    def kill(self, obj: int) -> None:
        for h in self.handles:
            if h.obj == obj:
                h.dead = True
        if obj not in self.paths.values():
            self.objs.pop(obj, None)

    @staticmethod
    def put(buf: bytearray, off: int, data: bytes) -> None:
        if not data:
            return  # an empty write does not extend the file
        if off > len(buf):
            buf.extend(bytes(off - len(buf)))
        buf[off:off + len(data)] = data

    @staticmethod
    def resize(buf: bytearray, size: int) -> None:
        if size < len(buf):
            del buf[size:]
        else:
            buf.extend(bytes(size - len(buf)))

    # ---- set-up ----
    @initialize(with_d=st.booleans())
    def setup(self, with_d):
        if with_d:
            self.fs.mkdir("/d")
            self.d_exists = True

    # ---- path rules ----
    @rule(path=names)
    def create(self, path):
        if not self.parent_ok(path):
            self.expect(cairn.Err.NOENT, self.fs.open, path, "w")
            return
        with self.fs.open(path, "w"):
            pass
        if path in self.paths:
            self.objs[self.paths[path]].clear()
        else:
            self.new_obj(path)

    @rule(path=names)
    def create_exclusive(self, path):
        if path in self.paths:
            self.expect(cairn.Err.EXIST, self.fs.open, path, "x")
        elif not self.parent_ok(path):
            self.expect(cairn.Err.NOENT, self.fs.open, path, "x")
        else:
            self.fs.open(path, "x").close()
            self.new_obj(path)

    @rule(path=names, off=offsets, n=lengths, seed=seeds)
    def write_at(self, path, off, n, seed):
        off, n = off % (self.MAX_OFF + 1), n % (self.MAX_LEN + 1)
        data = pattern(n, seed)
        if path not in self.paths:
            self.expect(cairn.Err.NOENT, self.fs.open, path, "r+")
            return
        with self.fs.open(path, "r+") as f:
            assert f.seek(off) == off
            assert f.write(data) == n
        self.put(self.objs[self.paths[path]], off, data)

    @rule(path=names, n=lengths, seed=seeds)
    def append(self, path, n, seed):
        n = n % (self.MAX_LEN + 1)
        if path in self.paths:
            n = self.room(len(self.objs[self.paths[path]]), n)
        data = pattern(n, seed)
        if not self.parent_ok(path):
            self.expect(cairn.Err.NOENT, self.fs.open, path, "a")
            return
        self.fs.write_file(path, data, mode="a")
        if path not in self.paths:
            self.new_obj(path)
        self.objs[self.paths[path]] += data

    @rule(path=names, seed=seeds)
    def churn(self, path, seed):
        """Rewrite a file whole a few times: dead data for the GC."""
        if not self.parent_ok(path):
            return
        size = self.MAX_OFF // 2 + self.MAX_LEN
        for k in range(4):
            data = pattern(size, seed + k)
            self.fs.write_file(path, data)
        if path not in self.paths:
            self.new_obj(path)
        self.objs[self.paths[path]][:] = data

    @rule(path=names, off=offsets, n=lengths)
    def read_range(self, path, off, n):
        if path not in self.paths:
            self.expect(cairn.Err.NOENT, self.fs.open, path)
            return
        with self.fs.open(path) as f:
            f.seek(off)
            got = f.read(n)
        assert got == bytes(self.objs[self.paths[path]][off:off + n])

    @rule(path=names, size=offsets)
    def truncate(self, path, size):
        size = size % (self.MAX_OFF + 1)
        if path not in self.paths:
            self.expect(cairn.Err.NOENT, self.fs.open, path, "r+")
            return
        with self.fs.open(path, "r+") as f:
            assert f.truncate(size) == size
        self.resize(self.objs[self.paths[path]], size)

    @rule(path=names)
    def remove(self, path):
        if path not in self.paths:
            self.expect(cairn.Err.NOENT, self.fs.remove, path)
            return
        self.fs.remove(path)
        self.kill(self.paths.pop(path))

    @rule(src=names, dst=names)
    def rename(self, src, dst):
        if src not in self.paths or not self.parent_ok(dst):
            self.expect(cairn.Err.NOENT, self.fs.rename, src, dst)
            return
        self.fs.rename(src, dst)
        if src == dst:
            return
        obj = self.paths.pop(src)
        old = self.paths.get(dst)
        self.paths[dst] = obj
        if old is not None:
            self.kill(old)

    @rule()
    def mkdir_d(self):
        if self.d_exists:
            self.expect(cairn.Err.EXIST, self.fs.mkdir, "/d")
        else:
            self.fs.mkdir("/d")
            self.d_exists = True

    @rule()
    def rmdir_d(self):
        if not self.d_exists:
            self.expect(cairn.Err.NOENT, self.fs.remove, "/d")
        elif any(p.startswith("/d/") for p in self.paths):
            self.expect(cairn.Err.NOTEMPTY, self.fs.remove, "/d")
        else:
            self.fs.remove("/d")
            self.d_exists = False

    @rule()
    def sync(self):
        self.fs.sync()

    @precondition(lambda self: cairn.has_feature("gc"))
    @rule(budget=st.integers(0, 64))
    def gc(self, budget):
        """Idle-time GC moves at most `budget` pages and changes no content
        (the read rules and the final check compare with the model)."""
        moved = self.fs.gc(budget)
        assert 0 <= moved <= budget

    @rule()
    def remount(self):
        self.fs.remount()
        assert all(h.file.closed for h in self.handles)
        self.handles.clear()
        self.objs = {o: b for o, b in self.objs.items() if o in self.paths.values()}
        assert self.fs.check().ok

    # ---- handle rules ----
    @precondition(lambda self: len(self.handles) < MAX_HANDLES)
    @rule(path=names, mode=st.sampled_from(["r", "r+", "a", "a+"]))
    def h_open(self, path, mode):
        if path not in self.paths and (mode[0] == "r" or not self.parent_ok(path)):
            self.expect(cairn.Err.NOENT, self.fs.open, path, mode)
            return
        f = self.fs.open(path, mode)
        if path not in self.paths:
            self.new_obj(path)
        self.handles.append(Handle(f, self.paths[path], 0, readable=mode != "a",
                                   writable=mode != "r", append=mode[0] == "a"))

    def pick(self, i: int) -> Handle:
        return self.handles[i % len(self.handles)]

    @precondition(lambda self: self.handles)
    @rule(i=st.integers(0, 1), n=lengths, seed=seeds)
    def h_write(self, i, n, seed):
        h = self.pick(i)
        n = n % (self.MAX_LEN + 1)
        if not h.dead:
            n = self.room(len(self.objs[h.obj]) if h.append else h.pos, n)
        data = pattern(n, seed)
        if h.dead or not h.writable:
            self.expect(cairn.Err.BADF, h.file.write, data)
            return
        assert h.file.write(data) == n
        buf = self.objs[h.obj]
        if h.append:
            h.pos = len(buf)
        self.put(buf, h.pos, data)
        h.pos += n
        assert h.file.tell() == h.pos

    @precondition(lambda self: self.handles)
    @rule(i=st.integers(0, 1), n=lengths)
    def h_read(self, i, n):
        h = self.pick(i)
        if h.dead or not h.readable:
            self.expect(cairn.Err.BADF, h.file.read, n)
            return
        got = h.file.read(n)
        buf = self.objs[h.obj]
        assert got == bytes(buf[h.pos:h.pos + n])
        h.pos += len(got)

    @precondition(lambda self: self.handles)
    @rule(i=st.integers(0, 1), off=offsets)
    def h_seek(self, i, off):
        off = off % (self.MAX_OFF + 1)
        h = self.pick(i)
        if h.dead:
            self.expect(cairn.Err.BADF, h.file.seek, off)
            return
        assert h.file.seek(off) == off
        h.pos = off

    @precondition(lambda self: self.handles)
    @rule(i=st.integers(0, 1), size=offsets)
    def h_truncate(self, i, size):
        size = size % (self.MAX_OFF + 1)
        h = self.pick(i)
        if h.dead or not h.writable:
            self.expect(cairn.Err.BADF, h.file.truncate, size)
            return
        h.file.truncate(size)
        self.resize(self.objs[h.obj], size)

    @precondition(lambda self: self.handles)
    @rule(i=st.integers(0, 1))
    def h_sync(self, i):
        h = self.pick(i)
        if h.dead:
            self.expect(cairn.Err.BADF, h.file.sync)
            return
        h.file.sync()
        assert h.file.size() == len(self.objs[h.obj])

    @precondition(lambda self: self.handles)
    @rule(i=st.integers(0, 1))
    def h_close(self, i):
        h = self.pick(i)
        h.file.close()  # works on a dead handle too
        self.handles.remove(h)
        self.objs = {o: b for o, b in self.objs.items()
                     if o in self.paths.values() or any(x.obj == o for x in self.handles)}

    # ---- invariants ----
    @invariant()
    def namespace_matches(self):
        root = {p[1:] for p in self.paths if p.count("/") == 1}
        if self.d_exists:
            root.add("d")
            inside = {p[3:] for p in self.paths if p.startswith("/d/")}
            assert set(self.fs.listdir("/d")) == inside
        assert set(self.fs.listdir("/")) == root
        for p, o in self.paths.items():
            assert self.fs.stat(p).size == len(self.objs[o]), p

    def teardown(self):
        try:
            if self.fs.mounted:
                for p, o in self.paths.items():
                    assert self.fs.read_file(p) == bytes(self.objs[o]), p
                assert self.fs.check().ok
                self.fs.unmount()
                with cairn.mount(self.sim) as fs:
                    for p, o in self.paths.items():
                        assert fs.read_file(p) == bytes(self.objs[o]), p
                    assert fs.check().ok
            assert self.sim.counters().violations == 0, self.sim.last_violation
        finally:
            self.sim.close()


class NorModel(FileModel):
    MEDIUM = "nor"


class NandModel(FileModel):
    MEDIUM = "nand"


class BlockModel(FileModel):
    MEDIUM = "block"


class NorTinyModel(FileModel):
    """320 KiB of NOR (20 segments of 16 KiB, the smallest segment that holds 16
    tree nodes; files stay under 3 KB): churn makes the GC move live data and
    reuse segments within an example. (Smaller segments are refused: see
    test_api.py::test_tiny_segments_refused.)"""

    MAX_OFF = 2000
    MAX_LEN = 1000

    def new_sim(self) -> cairn.Sim:
        return cairn.Sim("nor-w25q128", block_count=80, blocks_per_lblock=4, seed=7)


def _bounded(machine, examples: int, steps: int):
    case = machine.TestCase
    case.settings = settings(max_examples=examples, stateful_step_count=steps, deadline=None)
    return case


TestNorModel = _bounded(NorModel, 150, 50)
TestNandModel = _bounded(NandModel, 150, 50)
TestBlockModel = _bounded(BlockModel, 150, 50)
TestNorTinyModel = _bounded(NorTinyModel, 150, 100)
