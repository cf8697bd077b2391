"""Differential test of path resolution: the same random namespace operations
on a cairn volume and on a Linux directory (the os module, every call relative
to a directory fd), comparing the outcome class of each call (success, or
which error) and, at the end, the whole tree.

Paths are drawn from a few names ("a", "b", bytes such as 0xff and 0x01,
"...", names of 255 and 256 bytes, "." and ".."), joined by "/" or "//", with
or without a trailing "/" or "//", and the empty path. Errno maps to cairn's
codes one to one (ENOENT -> NOENT, ...). cairn's documented choices, where it
is not Linux (docs/DESIGN.md "Paths"), are applied to the Linux answer:
a "." or ".." component is INVAL (Linux resolves it; the call is not made on
Linux, which would also leave the directory; in rename's target the source's
lookup errors may come first), and remove() is C's remove:
unlink, then rmdir when unlink says EISDIR.
"""

from __future__ import annotations

import errno
import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

import cairn
from cairn import Err
from conftest import make_sim

ERRNO = {
    errno.ENOENT: Err.NOENT,
    errno.EEXIST: Err.EXIST,
    errno.ENOTDIR: Err.NOTDIR,
    errno.EISDIR: Err.ISDIR,
    errno.ENOTEMPTY: Err.NOTEMPTY,
    errno.ENAMETOOLONG: Err.NAMETOOLONG,
    errno.EINVAL: Err.INVAL,
}

LOOKUP_ERRS = (Err.INVAL, Err.NOENT, Err.NOTDIR, Err.NAMETOOLONG)

NAMES = [b"a", b"b", b"a", b"b", b"\xff", b"\x01x", b"...", b"n" * 255, b"n" * 256,
         b".", b".."]
seps = st.sampled_from([b"/", b"//"])


@st.composite
def paths(draw) -> bytes:
    """A relative path (the Linux side needs it relative to its directory)."""
    if draw(st.integers(0, 15)) == 0:
        return b""
    parts = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3))
    out = parts[0]
    for p in parts[1:]:
        out += draw(seps) + p
    return out + draw(st.sampled_from([b"", b"", b"", b"/", b"//"]))


OPEN_FLAGS = {
    "rw": (cairn.O_RDWR, os.O_RDWR),
    "creat": (cairn.O_RDWR | cairn.O_CREAT, os.O_RDWR | os.O_CREAT),
    "excl": (cairn.O_RDWR | cairn.O_CREAT | cairn.O_EXCL, os.O_RDWR | os.O_CREAT | os.O_EXCL),
}

ops = st.one_of(
    st.tuples(st.just("mkdir"), paths()),
    st.tuples(st.just("stat"), paths()),
    st.tuples(st.just("remove"), paths()),
    st.tuples(st.just("open"), paths(), st.sampled_from(sorted(OPEN_FLAGS))),
    st.tuples(st.just("rename"), paths(), paths()),
    st.tuples(st.just("listdir"), paths()),
)


def has_dot(*ps: bytes) -> bool:
    return any(c in (b".", b"..") for p in ps for c in p.split(b"/"))


def outcome(fn):
    """("ok", value) or ("err", cairn code) for a call on either side."""
    try:
        return ("ok", fn())
    except cairn.Error as e:
        return ("err", Err(e.code))
    except OSError as e:
        return ("err", ERRNO.get(e.errno, e.errno))


class Linux:
    def __init__(self, root: str):
        self.fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)

    def mkdir(self, p):
        os.mkdir(p, dir_fd=self.fd)

    def stat(self, p):
        import stat as st_
        return "dir" if st_.S_ISDIR(os.stat(p, dir_fd=self.fd).st_mode) else "file"

    def remove(self, p):
        try:
            os.unlink(p, dir_fd=self.fd)
        except IsADirectoryError:
            os.rmdir(p, dir_fd=self.fd)

    def open(self, p, flags):
        os.close(os.open(p, OPEN_FLAGS[flags][1], 0o644, dir_fd=self.fd))

    def rename(self, a, b):
        os.rename(a, b, src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def listdir(self, p):
        fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY, dir_fd=self.fd)
        try:
            return sorted(os.listdir(fd))
        finally:
            os.close(fd)

    def tree(self) -> set:
        out = set()
        stack = [b""]
        while stack:
            d = stack.pop()
            fd = os.open(d or b".", os.O_RDONLY | os.O_DIRECTORY, dir_fd=self.fd)
            try:
                for e in os.scandir(fd):
                    full = d + b"/" + os.fsencode(e.name) if d else os.fsencode(e.name)
                    isdir = e.is_dir(follow_symlinks=False)
                    out.add((full, "dir" if isdir else "file"))
                    if isdir:
                        stack.append(full)
            finally:
                os.close(fd)
        return out


class Cairn:
    def __init__(self, fs, lead: bool):
        self.fs = fs
        self.lead = lead  # prefix "/" (cairn resolves from the root either way)

    def p(self, p: bytes) -> bytes:
        return b"/" + p if self.lead and p else p

    def mkdir(self, p):
        self.fs.mkdir(self.p(p))

    def stat(self, p):
        return "dir" if self.fs.stat(self.p(p)).is_dir else "file"

    def remove(self, p):
        self.fs.remove(self.p(p))

    def open(self, p, flags):
        self.fs.open(self.p(p), OPEN_FLAGS[flags][0]).close()

    def rename(self, a, b):
        self.fs.rename(self.p(a), self.p(b))

    def listdir(self, p):
        return sorted(os.fsencode(n) for n in self.fs.listdir(self.p(p)))

    def tree(self) -> set:
        out = set()
        for top, dirs, files in self.fs.walk("/"):
            base = os.fsencode(top).lstrip(b"/")
            for n, kind in [(d, "dir") for d in dirs] + [(f, "file") for f in files]:
                name = os.fsencode(n)
                out.add((base + b"/" + name if base else name, kind))
        return out


@settings(max_examples=150)
@given(st.lists(ops, min_size=1, max_size=25), st.booleans())
def test_paths_match_linux(seq, lead):
    with tempfile.TemporaryDirectory() as root, make_sim("nor") as sim:
        cairn.format(sim)
        with cairn.mount(sim) as fs:
            lx, cn = Linux(root), Cairn(fs, lead)
            try:
                for i, (op, *args) in enumerate(seq):
                    path_args = [a for a in args if isinstance(a, bytes)]
                    got = outcome(lambda: getattr(cn, op)(*args))
                    if has_dot(path_args[0]):
                        want = ("err", Err.INVAL)  # cairn's rule, not Linux's
                    elif has_dot(*path_args):  # rename's target: its source is resolved first
                        assert got[0] == "err" and got[1] in LOOKUP_ERRS, (i, op, args, got)
                        continue
                    else:
                        want = outcome(lambda: getattr(lx, op)(*args))
                    if op in ("mkdir", "remove", "open", "rename") and want[0] == "ok":
                        want = ("ok", None)
                    assert got == want, f"step {i}: {op}{tuple(args)}: cairn {got}, linux {want}"
                assert cn.tree() == lx.tree()
                assert fs.check().ok
            finally:
                os.close(lx.fd)
