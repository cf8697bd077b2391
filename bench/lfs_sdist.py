#!/usr/bin/env python3
"""littlefs's C sources for the footprint comparison (bench/footprint.py).

    python3 bench/lfs_sdist.py [CACHE_DIR]     # prints the directory holding lfs.c

The sources come from the source distribution of the littlefs-python version
pinned in bench/requirements.txt (the same littlefs the benchmark scenarios
run), fetched with `pip download --no-deps --no-binary :all:` into a cache
under build/ (default build/bench-cache/), never into the repository. Only
littlefs/lfs.c, lfs.h, lfs_util.c, lfs_util.h and the licence are extracted,
into build/bench-cache/littlefs-python-<version>/. A second call reuses them.
"""
from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "bench" / "requirements.txt"
DEFAULT_CACHE = ROOT / "build" / "bench-cache"
WANTED = ("lfs.c", "lfs.h", "lfs_util.c", "lfs_util.h", "LICENSE.md")


class SdistError(RuntimeError):
    """The littlefs sources could not be had; the message says why."""


def pinned_version(requirements: Path = REQUIREMENTS) -> str:
    """The littlefs-python version pinned in bench/requirements.txt."""
    m = re.search(r"^littlefs-python==([\w.]+)\s*$", requirements.read_text(), re.M)
    if not m:
        raise SdistError(f"no 'littlefs-python==VERSION' line in {requirements}")
    return m.group(1)


def download(version: str, dest: Path) -> Path:
    """pip-downloads littlefs-python's sdist into dest; returns the tarball."""
    found = glob.glob(str(dest / f"littlefs_python-{version}.tar.gz"))
    if found:
        return Path(found[0])
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
           "--no-deps", "--no-binary", ":all:", f"littlefs-python=={version}", "-d", str(dest)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SdistError(f"`{' '.join(cmd)}` could not run: {e}") from e
    if r.returncode:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        raise SdistError(f"`pip download` of littlefs-python=={version} failed "
                         f"(needs pip and the package registry): {' / '.join(tail)}")
    found = glob.glob(str(dest / f"littlefs_python-{version}.tar.gz"))
    if not found:
        raise SdistError(f"pip download gave no littlefs_python-{version}.tar.gz in {dest}")
    return Path(found[0])


def extract(tarball: Path, out: Path) -> None:
    """Copies littlefs/{lfs.c,...} out of the sdist into out (by base name only)."""
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/")
            if member.isfile() and len(parts) == 3 and parts[1] == "littlefs" \
                    and parts[2] in WANTED:
                data = tar.extractfile(member).read()
                (out / parts[2]).write_bytes(data)
    missing = [f for f in WANTED[:4] if not (out / f).is_file()]
    if missing:
        raise SdistError(f"{tarball.name} has no littlefs/{', littlefs/'.join(missing)}")


def lfs_version(src: Path) -> str:
    """littlefs's own version from lfs.h (LFS_VERSION 0x0002000b -> '2.11')."""
    m = re.search(r"#define\s+LFS_VERSION\s+0x([0-9a-fA-F]{8})", (src / "lfs.h").read_text())
    if not m:
        return "?"
    v = int(m.group(1), 16)
    return f"{v >> 16}.{v & 0xffff}"


def sources(cache: Path = DEFAULT_CACHE) -> tuple[Path, str]:
    """(directory with lfs.c ..., littlefs-python version), downloading if needed."""
    version = pinned_version()
    out = cache / f"littlefs-python-{version}"
    if not all((out / f).is_file() for f in WANTED[:4]):
        extract(download(version, cache), out)
    return out, version


def main() -> int:
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CACHE
    try:
        src, version = sources(cache)
    except SdistError as e:
        print(f"lfs_sdist: {e}", file=sys.stderr)
        return 1
    print(os.path.relpath(src, Path.cwd()))
    print(f"littlefs-python {version}, littlefs {lfs_version(src)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
