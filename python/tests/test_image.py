"""cairn.Image: volumes built from a dict or a folder, saved as raw images and
read back; the C tool reading them and Image reading the tool's; the
geometry rules; the `cairn` console script's fallback.

The C tool is found through CAIRN_TOOL (`make test` points it at
build/tools/cairn); without it those tests are skipped."""

from __future__ import annotations

import os
import pathlib
import random
import re
import subprocess
import sys

import pytest

import cairn
from cairn import _cli

REPO = pathlib.Path(__file__).resolve().parents[2]
TOOL = os.environ.get("CAIRN_TOOL", "")

# Small volumes of the three media, as the tool's tests use them (docs/TOOL.md).
GEOMETRIES = {
    "nor": {"model": "nor-m25p16", "size": "1M"},
    "nand": {"model": "nand-dhara", "size": "2M"},
    "block": {"model": "sd-tf", "block": "64K", "size": "2M"},
}


def needs_tool():
    if not TOOL or not os.access(TOOL, os.X_OK):
        pytest.skip("the C tool is not built: set CAIRN_TOOL to build/tools/cairn "
                    "(make test does)")


def tool(*args, check=True) -> subprocess.CompletedProcess:
    return subprocess.run([TOOL, *map(str, args)], capture_output=True, check=check,
                          env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1"})


def sample_files(seed: int = 1) -> dict:
    """Deep paths, empty files and directories, names of 255 bytes, spaces,
    UTF-8 and a leading '-', every byte value, random data spanning segments."""
    rnd = random.Random(seed)
    deep = "/".join(f"d{i}" for i in range(40))
    return {
        "empty": b"",
        "emptydir": None,
        "bytes.bin": bytes(range(256)) * 4,
        "rand/a.bin": rnd.randbytes(300_000),
        "rand/b.bin": rnd.randbytes(70_001),
        f"{deep}/leaf.txt": b"at the bottom\n",
        "f" * 255: b"long file name",
        "g" * 255 + "/" + "h" * 255: b"long names all the way",
        "with space/-dash": b"odd names",
        "utf8/\u00e9t\u00e9 \u2603.txt": "snow\n".encode(),
    }


def expected_tree(files: dict) -> dict:
    """What Image.files() gives for from_files(files): every directory too."""
    out = {}
    for path, data in files.items():
        parts = path.split("/")
        for i in range(1, len(parts)):
            out["/".join(parts[:i])] = None
        out[path] = None if data is None else bytes(data)
    return out


def write_tree(root: pathlib.Path, files: dict) -> None:
    for path, data in files.items():
        p = root / path
        if data is None:
            p.mkdir(parents=True, exist_ok=True)
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)


def geometry_args(geo: dict) -> list[str]:
    return [a for k, v in geo.items() for a in (f"--{k}", v)]


@pytest.fixture(params=sorted(GEOMETRIES))
def geo(request) -> dict:
    return GEOMETRIES[request.param]


# ---- building and reading back ----

def test_from_files_round_trip(geo, tmp_path):
    files = sample_files()
    with cairn.Image.from_files(files, **geo) as image:
        assert image.check().ok
        assert image.listdir() == sorted({n.split("/")[0] for n in files})
        image.save(tmp_path / "v.img")
        raw = image.tobytes()
    assert (tmp_path / "v.img").read_bytes() == raw
    with cairn.Image.open(tmp_path / "v.img") as back:
        assert back.files() == expected_tree(files)
        assert back.read_file("/rand/a.bin") == files["rand/a.bin"]
        assert back.stat("empty").size == 0 and back.isdir("emptydir")
        assert back.check().ok
    with cairn.Image.open(raw) as from_bytes:
        assert from_bytes.image_size == len(raw)


def test_geometry_and_raw_layout(geo):
    with cairn.Image(**geo) as image:
        g = image.geometry
        assert image.image_size == len(image.tobytes()) == g.page_count * (g.page_size + image.oob)
        if image.medium == cairn.Medium.NAND:
            assert image.oob == g.page_size // 32 and g.spare_size == image.oob - 2
        else:
            assert image.oob == 0 and g.total_bytes == cairn._image.parse_size(geo["size"])


def test_from_dir_is_deterministic(geo, tmp_path):
    files = sample_files(seed=2)
    write_tree(tmp_path / "tree", files)
    with cairn.Image.from_dir(tmp_path / "tree", **geo) as a, \
            cairn.Image.from_dir(tmp_path / "tree", **geo) as b:
        raw = a.tobytes()
        assert raw == b.tobytes()
        a.extract(tmp_path / "out")
    for path, data in files.items():
        p = tmp_path / "out" / path
        assert p.is_dir() if data is None else p.read_bytes() == data
    with cairn.Image.open(raw) as back:
        assert back.files() == expected_tree(files)


def test_reading_changes_nothing(tmp_path):
    with cairn.Image.from_files(sample_files(), **GEOMETRIES["nand"]) as image:
        raw = image.tobytes()
    with cairn.Image.open(raw) as image:
        image.files()
        image.check()
        assert image.tobytes() == raw


def test_changes_after_open(geo, tmp_path):
    with cairn.Image.from_files({"keep": b"1", "old/x": b"2", "tree/a/b": b"3"}, **geo) as image:
        image.save(tmp_path / "v.img")
    with cairn.Image.open(tmp_path / "v.img") as image:
        image.write_file("/new/deeper/file", b"fresh")
        image.rename("keep", "kept")
        image.remove("tree", recursive=True)
        image.mkdir("made/here", parents=True)
        image.mkdir("made", exist_ok=True)
        with pytest.raises(cairn.ExistsError):
            image.mkdir("made")
        with pytest.raises(cairn.NotEmptyError):
            image.remove("old")
        image.add_files({"added": b"4", "sub": None}, "/old")
        image.save()  # back to the file it came from
    with cairn.Image.open(tmp_path / "v.img") as image:
        assert image.files() == {"kept": b"1", "made": None, "made/here": None, "new": None,
                                 "new/deeper": None, "new/deeper/file": b"fresh",
                                 "old": None, "old/added": b"4", "old/sub": None,
                                 "old/x": b"2"}


def test_save_that_dies_halfway_leaves_the_old_image(tmp_path, monkeypatch):
    with cairn.Image.from_files({"a": b"1"}, **GEOMETRIES["nor"]) as image:
        image.save(tmp_path / "v.img")
    before = (tmp_path / "v.img").read_bytes()
    os.chmod(tmp_path / "v.img", 0o640)
    with cairn.Image.open(tmp_path / "v.img") as image:
        image.write_file("b", b"2" * 5000)
        real = cairn.Image._raw_blocks

        def dies_halfway(self):
            for n, chunk in enumerate(real(self)):
                if n == 3:
                    raise KeyboardInterrupt("the host goes down")
                yield chunk
        monkeypatch.setattr(cairn.Image, "_raw_blocks", dies_halfway)
        with pytest.raises(KeyboardInterrupt):
            image.save()
        assert (tmp_path / "v.img").read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["v.img"]
        monkeypatch.setattr(cairn.Image, "_raw_blocks", real)
        image.save()
    assert os.stat(tmp_path / "v.img").st_mode & 0o777 == 0o640
    with cairn.Image.open(tmp_path / "v.img") as image:
        assert image.files() == {"a": b"1", "b": b"2" * 5000}


def test_longer_image_keeps_its_tail(tmp_path):
    with cairn.Image.from_files({"a": b"1"}, **GEOMETRIES["nor"]) as image:
        volume = image.tobytes()
    # 1000 bytes: not a whole number per page, which the probe would take for
    # NAND OOB bytes (as the tool would)
    tail = bytes(range(250)) * 4
    (tmp_path / "fw.bin").write_bytes(volume + tail)
    with cairn.Image.open(tmp_path / "fw.bin") as image:
        assert image.image_size == len(volume)
        image.write_file("b", b"2")
        image.save()
        image.save(tmp_path / "alone.img")
    data = (tmp_path / "fw.bin").read_bytes()
    assert data[len(volume):] == tail
    assert data[:len(volume)] == (tmp_path / "alone.img").read_bytes()
    with cairn.Image.open(tmp_path / "fw.bin") as image:
        assert image.files() == {"a": b"1", "b": b"2"}


def test_fs_gives_the_whole_api():
    with cairn.Image(**GEOMETRIES["nor"]) as image:
        with image.fs.open("/log", "a") as f:
            f.write(b"line\n")
        image.fs.setattr("/log", 7, b"tag")
        raw = image.tobytes()
    with cairn.Image.open(raw) as back:
        assert back.read_file("log") == b"line\n"
        assert back.fs.getattr("/log", 7) == b"tag"


def test_nand_bad_block_mark_kept():
    with cairn.Image.from_files({"f": b"data" * 1000}, **GEOMETRIES["nand"]) as image:
        raw = bytearray(image.tobytes())
        stride = image.geometry.page_size + image.oob
        last = (image.geometry.block_count - 1) * image.geometry.pages_per_block
    raw[last * stride + 2048] = 0x00  # the last block's mark (OOB byte 0 of its first page)
    with cairn.Image.open(bytes(raw)) as image:
        assert image._sim.is_bad(image.geometry.block_count - 1)
        assert image.read_file("f") == b"data" * 1000
        again = image.tobytes()
    assert again == bytes(raw)


def test_nand_without_oob():
    with cairn.Image(model="nand-dhara", size="2M", spare=0) as image:
        assert image.oob == 0 and image.geometry.spare_size == 0
        image.write_file("a", b"x" * 5000)
        raw = image.tobytes()
    assert len(raw) == 2 << 20
    with pytest.raises(cairn.ImageError, match="NOR or SD/eMMC"):
        cairn.Image.open(raw)
    with cairn.Image.open(raw, medium="nand", spare=0) as image:
        assert image.read_file("a") == b"x" * 5000


def test_limits_and_errors():
    with cairn.Image(**GEOMETRIES["nor"]) as image:
        with pytest.raises(cairn.NameTooLongError):
            image.write_file("n" * 256, b"")
        with pytest.raises(cairn.NoSpaceError):
            image.write_file("big", bytes(2 << 20))
        with pytest.raises(ValueError):
            image.write_file("a/../b", b"")
    with pytest.raises(ValueError, match="file and a directory"):
        cairn.Image.from_files({"a": b"1", "a/b": b"2"}, **GEOMETRIES["nor"])
    with pytest.raises(TypeError):
        cairn.Image.from_files({"a": "text"}, **GEOMETRIES["nor"])


@pytest.mark.parametrize("geo", sorted(GEOMETRIES))
def test_replacing_a_file_that_does_not_fit_keeps_it(geo):
    """write_file over an existing file is all or nothing: on a volume too
    full for the replacement the old file stays whole (it was written over
    and left cut short before session 40), and one that fits replaces it
    with no temporary name left."""
    rng = random.Random(40)
    with cairn.Image(**GEOMETRIES[geo]) as image:
        free = image.fs_stat().free_bytes
        old = rng.randbytes(free // 2)
        image.write_file("d/keep", old)
        filler = rng.randbytes(free // 3)
        image.write_file("other", filler)
        with pytest.raises(cairn.NoSpaceError, match="as it was") as e:
            image.write_file("d/keep", rng.randbytes(free - 4096))
        assert e.value.path == "/d/keep"
        assert image.read_file("d/keep") == old
        assert image.listdir("d") == ["keep"]
        new = rng.randbytes(4096)
        image.write_file("d/keep", new)
        assert image.read_file("d/keep") == new
        assert image.listdir("d") == ["keep"] and image.listdir("/") == ["d", "other"]
        assert image.check().errors == 0


@pytest.mark.parametrize("kwargs, message", [
    ({}, "no geometry"),
    ({"model": "no-such"}, "unknown model"),
    ({"model": "nor-m25p16", "medium": "nand"}, "contradicts"),
    ({"model": "nor-m25p16", "spare": 64}, "spare= is for NAND"),
    ({"model": "nor-m25p16", "size": 100000}, "whole number of erase blocks"),
    ({"model": "nor-m25p16", "size": "128K"}, "cairn refuses this geometry"),
    ({"medium": "tape"}, "unknown medium"),
    ({"model": "nor-m25p16", "size": "1Q"}, "not a size"),
])
def test_geometry_errors(kwargs, message):
    with pytest.raises(cairn.ImageError, match=message):
        cairn.Image(**kwargs)


def test_odd_block_count_cut_to_whole_segments():
    # 253 sectors = 11 x 23: no power of two divides it into segments cairn
    # takes; the fewest sectors a segment it takes (4), the last one left out
    with cairn.Image(model="nor-w25q128", size=253 * 4096) as image:
        g = image.geometry
        assert (g.blocks_per_lblock, g.block_count) == (4, 252)
        assert image.image_size == 252 * 4096
        image.write_file("f", b"odd")
        raw = image.tobytes()
    with cairn.Image.open(raw) as back:
        assert back.read_file("f") == b"odd" and back.check().ok


def test_nand_dump_with_a_block_past_the_volume():
    # 33 blocks in segments of 2: the last block past the last whole segment,
    # as zero config leaves it; the length also reads as 2,048 pages of 2,178 B
    with cairn.Image(model="nand-dhara", size="4M", lblock=2) as image:
        image.write_file("p", b"page")
        raw = image.tobytes()
    raw += b"\xff" * (64 * 2112)
    with cairn.Image.open(raw) as back:
        assert back.oob == 64 and back.read_file("p") == b"page" and back.check().ok


def test_medium_alone_takes_its_model():
    with cairn.Image(medium="block", block="64K", size="1M") as image:
        assert image.medium == cairn.Medium.BLOCK and image.geometry.page_size == 512


def test_open_refuses_what_is_not_an_image(tmp_path):
    with pytest.raises(cairn.ImageError, match="no cairn checkpoint"):
        cairn.Image.open(b"\xff" * 65536)
    with cairn.Image(**GEOMETRIES["nor"]) as image:
        raw = image.tobytes()
    with pytest.raises(cairn.ImageError, match="shorter than the volume"):
        cairn.Image.open(raw[:len(raw) // 2])
    with pytest.raises(cairn.ImageError, match="page= says 512"):
        cairn.Image.open(raw, page=512)
    (tmp_path / "empty").write_bytes(b"")
    with pytest.raises(cairn.ImageError, match="empty"):
        cairn.Image.open(tmp_path / "empty")
    with cairn.Sim("nor-m25p16", image=tmp_path / "sim.img"):
        pass
    with pytest.raises(cairn.ImageError, match="simulator image"):
        cairn.Image.open(tmp_path / "sim.img")


def test_closed_image():
    image = cairn.Image(**GEOMETRIES["nor"])
    image.close()
    image.close()
    with pytest.raises(ValueError, match="closed"):
        image.listdir()
    assert "closed" in repr(image)


# ---- the C tool ----

def test_tool_reads_image(geo, tmp_path):
    needs_tool()
    files = sample_files(seed=3)
    with cairn.Image.from_files(files, **geo) as image:
        image.save(tmp_path / "v.img")
    listing = tool("ls", "-R", tmp_path / "v.img").stdout.decode().splitlines()
    want = sorted(expected_tree(files).items(), key=lambda kv: kv[0].encode())
    assert sorted(listing) == sorted(p + ("/" if d is None else "") for p, d in want)
    assert tool("cat", tmp_path / "v.img", "rand/a.bin").stdout == files["rand/a.bin"]
    assert "clean" in tool("fsck", tmp_path / "v.img").stdout.decode()
    tool("extract", tmp_path / "v.img", tmp_path / "out")
    assert (tmp_path / "out" / "bytes.bin").read_bytes() == files["bytes.bin"]


def test_image_reads_tool_build_and_same_bytes(geo, tmp_path):
    """`cairn build` and Image.from_dir make the same bytes of the same folder,
    and Image reads what the tool changed afterwards."""
    needs_tool()
    files = sample_files(seed=4)
    write_tree(tmp_path / "tree", files)
    tool("build", tmp_path / "tree", "-o", tmp_path / "tool.img", "-q", *geometry_args(geo))
    with cairn.Image.from_dir(tmp_path / "tree", **geo) as image:
        assert image.tobytes() == (tmp_path / "tool.img").read_bytes()
    (tmp_path / "extra").write_bytes(b"put by the tool")
    tool("put", tmp_path / "tool.img", tmp_path / "extra", "/rand/extra")
    tool("rm", "-r", tmp_path / "tool.img", "utf8")
    with cairn.Image.open(tmp_path / "tool.img") as image:
        assert image.read_file("rand/extra") == b"put by the tool"
        assert not image.exists("utf8")
        assert image.read_file("rand/b.bin") == files["rand/b.bin"]
        image.write_file("from/python", b"back again")
        image.save()
    assert tool("cat", tmp_path / "tool.img", "from/python").stdout == b"back again"
    assert tool("fsck", tmp_path / "tool.img").returncode == 0


# ---- the console script ----

def test_cli_fallback_matches_tool_output(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(_cli.GUARD_ENV, "1")  # as if re-entered: never start a tool
    write_tree(tmp_path / "tree", {"a/b": b"12345", "c": b"", "d": None})
    img = tmp_path / "v.img"
    assert _cli.main(["build", str(tmp_path / "tree"), "-o", str(img), "--model", "nor-m25p16",
                      "--size", "1M"]) == 0
    assert _cli.main(["ls", "-l", "-R", str(img)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["d          0  a/", "-          5  a/b", "-          0  c",
                                "d          0  d/"]
    assert _cli.main(["cat", str(img), "a/b"]) == 0
    assert _cli.main(["extract", str(img), str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "a" / "b").read_bytes() == b"12345"
    assert _cli.main(["ls", str(img), "nope"]) == 2
    assert _cli.main(["fsck", str(img)]) == 2
    assert "not installed" in capsys.readouterr().err
    if TOOL and os.access(TOOL, os.X_OK):
        assert tool("ls", "-l", "-R", img).stdout.decode() == out


def test_cli_finds_the_tool_not_itself(tmp_path, monkeypatch):
    monkeypatch.delenv(_cli.GUARD_ENV, raising=False)
    script = tmp_path / "bin1" / "cairn"  # what pip writes for the console script
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom cairn._cli import main\n"
                      "sys.exit(main())\n")
    script.chmod(0o755)
    real = tmp_path / "bin2" / "cairn"
    real.parent.mkdir()
    real.write_bytes(b"\x7fELF stand-in")
    real.chmod(0o755)
    monkeypatch.delenv(_cli.TOOL_ENV, raising=False)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{real.parent}")
    assert _cli.find_tool() == str(real)
    monkeypatch.setenv("PATH", str(script.parent))
    assert _cli.find_tool() is None
    monkeypatch.setenv(_cli.TOOL_ENV, str(script))
    assert _cli.find_tool() is None
    monkeypatch.setenv(_cli.TOOL_ENV, str(real))
    assert _cli.find_tool() == str(real)
    monkeypatch.setenv(_cli.GUARD_ENV, "1")
    assert _cli.find_tool() is None


def test_cli_runs_the_tool(tmp_path):
    needs_tool()
    with cairn.Image.from_files({"x": b"1"}, **GEOMETRIES["nor"]) as image:
        image.save(tmp_path / "v.img")
    env = {k: v for k, v in os.environ.items() if k != _cli.GUARD_ENV}
    env[_cli.TOOL_ENV] = TOOL
    run = subprocess.run([sys.executable, "-m", "cairn._cli", "info", str(tmp_path / "v.img")],
                         capture_output=True, env=env, check=True)
    assert b"segment" in run.stdout  # `info` exists only in the C tool


# ---- the package ----

def test_version_from_one_place():
    cmake = (REPO / "CMakeLists.txt").read_text()
    version = re.search(r"project\(cairn VERSION (\d+\.\d+\.\d+)", cmake).group(1)
    assert cairn.__version__ == version
    assert tuple(int(x) for x in version.split(".")[:2]) == cairn.VERSION


def cut_volume() -> bytes:
    """1 MiB of nor-m25p16 cut after 440 files were created in 80 directories
    and synced: the creates are in the journal, not in a checkpoint, and a
    read-only mount's replay of them needs 39 cache slots."""
    with cairn.Image.from_files({}, model="nor-m25p16", size=1 << 20) as image:
        fs = image.fs
        for d in range(80):
            fs.mkdir(f"/dir{d:02}")
        for i in range(440):
            fs.write_file(f"/dir{i % 80:02}/file-{i:03}", b"x%d" % i)
        fs.sync()
        fs.abandon()  # the cut
        return image.tobytes()


def test_read_only_mount_after_a_cut_grows_its_cache(monkeypatch):
    """A read-only mount replays the journal with every node its records
    change kept in the cache; one too small says NOSPC (CORRUPT before
    session 42), and Image's reading mount then doubles its cache (as the C
    tool's does)."""
    from cairn import _image
    raw = cut_volume()
    monkeypatch.setitem(_image.MOUNT_CONFIG, "cache_nodes", 12)
    monkeypatch.setattr(_image, "MOUNT_CACHE_MOST", 12)
    with cairn.Image.open(raw, model="nor-m25p16") as image:
        with pytest.raises(cairn.NoSpaceError):
            image.listdir("/")
    monkeypatch.setattr(_image, "MOUNT_CACHE_MOST", 16384)
    with cairn.Image.open(raw, model="nor-m25p16") as image:
        assert sum(len(image.listdir(f"/dir{d:02}")) for d in range(80)) == 440
        assert image.read_file("/dir07/file-087") == b"x87"
        assert image._fs.config.cache_nodes > 12 and image._fs.config.read_only
        assert image.tobytes() == raw  # reading changed nothing


def test_tool_reads_a_cut_volume_its_cache_does_not_hold(tmp_path):
    """`cairn fsck` and `ls` mount read-only with 32 cache slots, fewer than
    this replay needs: they double the cache (tools/vol.c) where they said
    CORRUPT before session 42 (found on a SIGKILLed tar run,
    tests/tool/real_programs.py RP_SEED=10)."""
    needs_tool()
    img = tmp_path / "cut.img"
    img.write_bytes(cut_volume())
    r = tool("fsck", img, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert b"clean: 440 files, 81 directories" in r.stdout, r.stdout
    listing = tool("ls", "-R", img).stdout.decode()
    assert listing.count("file-") == 440
    assert tool("cat", img, "/dir07/file-087").stdout == b"x87"
    assert img.read_bytes() == cut_volume()  # nothing written
