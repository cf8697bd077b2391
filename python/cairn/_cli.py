"""The `cairn` command installed with the Python package.

It runs the C tool `cairn` (tools/, docs/TOOL.md) when one is installed: the
one CAIRN_TOOL names, else the first `cairn` on PATH that is not this
script. Without it, a small fallback in Python (cairn.Image) does `build`,
`ls`, `cat` and `extract` with the tool's arguments and output, and anything
else says how to get the tool.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys

TOOL_ENV = "CAIRN_TOOL"
# Set when this script starts the C tool: should "the tool" turn out to be a
# wrapper that starts this script again, the second one must not go round.
GUARD_ENV = "CAIRN_PY_CLI_EXEC"
EXIT_ERROR = 2
FALLBACK = ("build", "ls", "cat", "extract")

HOW_TO_GET = """\
cairn: the C tool `cairn` is not installed (not on PATH, CAIRN_TOOL unset).
Build and install it from the cairn repository (docs/TOOL.md):
    cmake -S . -B build && cmake --build build -j2 && cmake --install build
or point CAIRN_TOOL at a built one (build/tools/cairn).
Without it this Python package does: cairn build DIR -o IMAGE [geometry],
cairn ls [-l] [-R] IMAGE [PATH], cairn cat IMAGE PATH..., cairn extract IMAGE DIR.
"""


def _is_this_script(path: str) -> bool:
    """Is path this console script (or another copy of it, in another venv)?"""
    try:
        if sys.argv and os.path.exists(sys.argv[0]) and os.path.samefile(path, sys.argv[0]):
            return True
        with open(path, "rb") as f:
            head = f.read(1024)
    except OSError:
        return False
    return head.startswith(b"#!") and b"cairn._cli" in head


def find_tool() -> str | None:
    """The C tool to run: CAIRN_TOOL, else `cairn` on PATH; never this script."""
    if os.environ.get(GUARD_ENV):
        return None
    named = os.environ.get(TOOL_ENV)
    if named:
        return named if os.access(named, os.X_OK) and not _is_this_script(named) else None
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        found = shutil.which("cairn", path=d or os.curdir)
        if found and not _is_this_script(found):
            return found
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    tool = find_tool()
    if tool is not None:
        os.environ[GUARD_ENV] = "1"
        os.execv(tool, [tool] + args)  # does not return
    named = os.environ.get(TOOL_ENV)
    if named and not os.environ.get(GUARD_ENV):
        print(f"cairn: CAIRN_TOOL={named} is not an executable C tool", file=sys.stderr)
        return EXIT_ERROR
    if not args or args[0] not in FALLBACK:
        sys.stderr.write(HOW_TO_GET)
        return EXIT_ERROR if args and args[0] not in ("-h", "--help") else 0
    return _fallback(args)


# ---- the Python fallback ----

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cairn", description="cairn images (Python fallback of "
                                "the C tool; docs/TOOL.md)")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="a folder -> a new image")
    b.add_argument("dir")
    b.add_argument("-o", dest="output", required=True)
    b.add_argument("-q", action="store_true", help="(accepted; there is no progress bar)")
    for flag in ("model", "medium", "page", "block", "lblock", "size", "spare"):
        b.add_argument(f"--{flag}")
    ls = sub.add_parser("ls", help="list a directory")
    ls.add_argument("-l", dest="long", action="store_true")
    ls.add_argument("-R", dest="recursive", action="store_true")
    ls.add_argument("image")
    ls.add_argument("path", nargs="?", default="/")
    cat = sub.add_parser("cat", help="files to stdout")
    cat.add_argument("image")
    cat.add_argument("paths", nargs="+")
    ex = sub.add_parser("extract", help="the whole volume into a folder")
    ex.add_argument("image")
    ex.add_argument("dir")
    return p


def _fallback(args: list[str]) -> int:
    from . import Error, Image, ImageError  # the library is needed from here on

    ns = _parser().parse_args(args)
    try:
        if ns.command == "build":
            geometry = {k: getattr(ns, k) for k in ("medium", "page", "block", "lblock", "size",
                                                    "spare") if getattr(ns, k) is not None}
            with Image.from_dir(ns.dir, ns.model, **geometry) as image:
                image.save(ns.output)
            return 0
        with Image.open(ns.image) as image:
            if ns.command == "ls":
                _ls(image, ns)
            elif ns.command == "cat":
                for path in ns.paths:
                    sys.stdout.buffer.write(image.read_file(path))
            else:
                image.extract(ns.dir)
        return 0
    except (Error, ImageError, OSError) as e:
        print(f"cairn {ns.command}: {e}", file=sys.stderr)
        return EXIT_ERROR


def _ls(image, ns) -> None:
    info = image.stat(ns.path)
    if info.is_file:
        _ls_print(info, ns.path, ns.long)
        return
    _ls_dir(image, ns.path, None, ns)


def _ls_dir(image, path: str, prefix: str | None, ns) -> None:
    for e in image.scandir(path):
        shown = f"{prefix}/{e.name}" if prefix else e.name
        _ls_print(e, shown, ns.long)
        if ns.recursive and e.is_dir:
            _ls_dir(image, f"{path.rstrip('/')}/{e.name}", shown, ns)


def _ls_print(info, shown: str, long: bool) -> None:
    slash = "/" if info.is_dir else ""
    if long:
        print(f"{'d' if info.is_dir else '-'} {info.size:10d}  {shown}{slash}")
    else:
        print(f"{shown}{slash}")


if __name__ == "__main__":
    sys.exit(main())
