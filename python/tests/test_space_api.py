"""The space-management, ring-file and sector-interface API (cairn_gc,
cairn_fallocate, cairn_ring_create, cairn_bd_*) and the config / fsinfo fields
that came with it. Each test skips while the loaded library lacks the C
function (the core gains them while the bindings already declare them)."""

from __future__ import annotations

import pytest

import cairn
from conftest import pattern


def need(feature: str) -> None:
    if not cairn.has_feature(feature):
        pytest.skip(f"the library has no {feature} yet")


def test_config_fields_reach_mem_size(sim):
    fs = cairn.FS(sim, data_heads=2, wear_spread=8, gc_step_pages=4)
    assert fs.config.data_heads == 2
    assert fs.config.wear_spread == 8
    assert fs.config.gc_step_pages == 4
    assert fs.mem_size > 0


def test_fsinfo_wear_fields(fs):
    i = fs.fs_stat()
    assert i.erase_min <= i.erase_mean <= i.erase_max
    assert i.bad_blocks == 0


def test_missing_symbol_raises_not_implemented(fs, monkeypatch):
    from cairn import _fs
    monkeypatch.setattr(_fs, "has", lambda name: False)
    with pytest.raises(NotImplementedError):
        fs.gc(1)


def test_gc_returns_pages_moved(fs):
    need("gc")
    assert fs.gc(0) >= 0
    for i in range(8):
        fs.write_file(f"/f{i}", pattern(3000, i))
    for i in range(0, 8, 2):
        fs.remove(f"/f{i}")
    moved = fs.gc(64)
    assert 0 <= moved <= 64
    for i in range(1, 8, 2):
        assert fs.read_file(f"/f{i}") == pattern(3000, i)


def test_gc_unmounted_raises(sim):
    need("gc")
    cairn.format(sim)
    fs = cairn.FS(sim)
    with pytest.raises(cairn.InvalidError):
        fs.gc(1)


def test_fallocate_then_write(fs):
    need("fallocate")
    data = pattern(20000, 3)
    with fs.open("/pre", "w") as f:
        f.fallocate(len(data))
        assert f.write(data) == len(data)
    assert fs.read_file("/pre") == data


def test_fallocate_too_big_fails(fs):
    need("fallocate")
    total = fs.fs_stat().total_bytes
    with fs.open("/huge", "w") as f:
        with pytest.raises(cairn.Error) as ei:
            f.fallocate(int(min(total * 2, 2**31 - 1)))
        assert ei.value.code in (cairn.Err.NOSPC, cairn.Err.FBIG, cairn.Err.INVAL)


def test_ring_wraps(fs):
    need("ring")
    page = fs.fs_stat().page_size
    cap = 4 * page
    fs.ring_create("/ring", cap)
    data = pattern(cap * 3 + 100, 7)
    with fs.open("/ring", "a") as f:
        assert f.ring_capacity() == cap
        for i in range(0, len(data), 100):
            f.write(data[i:i + 100])
    fs.write_file("/plain", b"abc")
    with fs.open("/plain") as f:
        assert f.ring_capacity() == 0
    got = fs.read_file("/ring")
    assert len(got) <= cap
    assert got == data[len(data) - len(got):]
    assert len(got) >= cap - page


def test_ring_bad_capacity(fs):
    need("ring")
    with pytest.raises(cairn.Error):
        fs.ring_create("/r", 1)


def test_block_device_roundtrip(fs):
    need("bd")
    with fs.block_device("/disk", 512, 64) as bd:
        assert (bd.sector_size, bd.sector_count) == (512, 64)
        assert bd.read(0, 2) == bytes(1024)
        a = pattern(512 * 3, 1)
        assert bd.write(5, a) == 3
        assert bd.read(5, 3) == a
        bd.trim(6)
        assert bd.read(6) == bytes(512)
        assert bd.read(5) == a[:512]
        bd.sync()
        buf = bytearray(1024)
        assert bd.readinto(7, buf) == 2
        assert bytes(buf[:512]) == a[1024:]
    assert bd.closed
    fs.remount()
    with fs.block_device("/disk", 512, 64) as bd:
        assert bd.read(5) == a[:512]
        assert bd.read(7) == a[1024:]


def test_block_device_bounds_and_close(fs):
    need("bd")
    bd = fs.block_device("/disk", 512, 8)
    with pytest.raises(cairn.InvalidError):
        bd.read(7, 2)
    with pytest.raises(ValueError):
        bd.write(0, b"x" * 100)
    bd.close()
    bd.close()
    with pytest.raises(cairn.BadHandleError):
        bd.read(0)


def test_block_device_dies_with_mount(fs):
    need("bd")
    bd = fs.block_device("/disk", 512, 8)
    fs.remount()
    assert bd.closed
    with pytest.raises(cairn.BadHandleError):
        bd.read(0)


# ---- the sector interface against a bytearray model ----
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SECTOR, SECTORS = 512, 48
bd_ops = st.lists(st.one_of(
    st.tuples(st.just("write"), st.integers(0, SECTORS - 1), st.integers(1, 6),
              st.integers(0, 2**16)),
    st.tuples(st.just("trim"), st.integers(0, SECTORS - 1), st.integers(1, 6), st.just(0)),
    st.tuples(st.just("remount"), st.just(0), st.just(0), st.just(0)),
), min_size=1, max_size=25)


@settings(max_examples=25)
@given(ops=bd_ops)
def test_block_device_model(ops):
    if not cairn.has_feature("bd"):
        pytest.skip("the library has no bd yet")
    from conftest import make_sim
    model = bytearray(SECTOR * SECTORS)
    with make_sim("nor") as sim:
        cairn.format(sim)
        with cairn.mount(sim) as fs:
            bd = fs.block_device("/disk", SECTOR, SECTORS)
            for op, sector, count, seed in ops:
                count = min(count, SECTORS - sector)
                if op == "write":
                    data = pattern(SECTOR * count, seed)
                    bd.write(sector, data)
                    model[sector * SECTOR:(sector + count) * SECTOR] = data
                elif op == "trim":
                    bd.trim(sector, count)
                    model[sector * SECTOR:(sector + count) * SECTOR] = bytes(SECTOR * count)
                else:
                    bd.close()
                    fs.remount()
                    bd = fs.block_device("/disk", SECTOR, SECTORS)
                assert bd.read(0, SECTORS) == bytes(model)
            bd.close()
            assert fs.check().ok
        assert sim.counters().violations == 0, sim.last_violation


@pytest.mark.parametrize("blocks", [16, 32])
def test_fill_write_worst_call_within_one_erase_and_16_pages(blocks):
    """The spiffs seed's fill-write on 1 MiB and on the whole 2 MiB of
    nor-m25p16 (aged, filled as far as cairn takes, every other file removed,
    then 100,000 B in 256 B writes): a write call that erases programs at most
    16 pages. Before the hard path waited for the bounded steps (space.c
    steps_keep_up), one call on 2 MiB erased and programmed 91 pages (moves of
    a whole victim); before light calls erased ahead (space.c
    cn_write_call_ends), one on 1 MiB erased and programmed 24 (a commit's node
    flush opened the metadata head's next segment). Counts of device
    operations: deterministic."""
    import pathlib
    import sys
    root = pathlib.Path(__file__).resolve().parents[2]
    if not (root / "bench" / "scenarios" / "fill_write.py").exists():
        pytest.skip("the benchmark scenarios are not here (installed package)")
    sys.path.insert(0, str(root))
    from bench.scenarios import fill_write
    r = fill_write.run_cairn(blocks, "max")
    assert not r["failed"], r["failed"]
    erasing = [pages for erases, pages in r["calls"] if erases > 0]
    assert erasing, "the run erased nothing: it no longer reaches the collection it checks"
    assert max(erasing) <= 16, f"a write call erased and programmed {max(erasing)} pages"
