"""cairn.ondisk, the pure-Python decoder of docs/FORMAT.md, on images of known
contents made through the bindings (NOR, NAND, BLOCK): every field it decodes
is checked against what was written or what the format requires; the lines it
prints are compared with `cairn dump` on the same image (when the tool is
built); truncated and damaged images give FormatError or problems, never a
crash. The decoder imports without the native library."""

from __future__ import annotations

import os
import pathlib
import random
import subprocess
import sys
import zlib

import pytest

import cairn
from cairn import ondisk as cf

from conftest import MEDIA, make_sim, pattern

MEDIUM_NAMES = {1: "nor", 2: "nand", 3: "block"}
REPO = pathlib.Path(__file__).resolve().parents[2]


def raw_image(sim: cairn.Sim) -> tuple[bytes, str, int]:
    """The device's bytes as a raw image (docs/TOOL.md: NAND pages each followed by
    their OOB, bad-block marker 0xFF 0xFF then the spare), its medium and OOB."""
    g = sim.geometry
    medium = MEDIUM_NAMES[g.medium]
    out = bytearray()
    for p in range(g.page_count):
        if g.spare_size:
            data, spare = sim.peek(p, spare=True)
            out += data + b"\xff\xff" + spare
        else:
            out += sim.peek(p)
    return bytes(out), medium, g.spare_size + 2 if g.spare_size else 0


def decode(data: bytes, medium: str, oob: int) -> tuple[cf.Image, cf.Checkpoint]:
    img = cf.Image.detect(data, medium=medium, oob=oob)
    return img, cf.find_checkpoint(img)


FILES = {
    "/a.txt": pattern(11, 1),
    "/dir/big.bin": pattern(70000, 2),
    "/dir/sub/empty": b"",
    "/dir/sub/two pages": pattern(5000, 3),
    "/caf\u00e9 \"q\"": pattern(300, 4),
}


def build(fs: cairn.FS) -> None:
    fs.mkdir("/dir")
    fs.mkdir("/dir/sub")
    for path, data in FILES.items():
        fs.write_file(path, data)
    fs.setattr("/a.txt", 7, b"\x01\x02\xff")


def make_clean(medium: str):
    """A clean image (unmounted) holding FILES: (geometry, bytes, medium, OOB)."""
    with make_sim(medium) as sim:
        cairn.format(sim)
        with cairn.mount(sim) as fs:
            build(fs)
        return (sim.geometry,) + raw_image(sim)


def make_unclean(medium: str):
    """An image left with a journal of every record kind the API writes (synced,
    no unmount): (geometry, bytes, medium, OOB)."""
    with make_sim(medium) as sim:
        cairn.format(sim)
        fs = cairn.mount(sim)
        fs.mkdir("/d")
        fs.write_file("/d/f", pattern(3000, 5))
        with fs.open("/d/f", "r+") as f:
            f.truncate(100)
        fs.rename("/d/f", "/d/g")
        fs.setattr("/d/g", 9, b"v")
        fs.removeattr("/d/g", 9)
        fs.write_file("/gone", b"x")
        fs.remove("/gone")
        fs.ring_create("/ring", 4096)
        with fs.open("/ring", "a") as f:
            f.write(b"ring bytes")
        fs.sync()
        with fs.open("/d/g", "a") as f:  # nothing pending: NAND writes it as a journal page
            f.write(b"more")
            f.sync()
        fs.sync()
        image = (sim.geometry,) + raw_image(sim)
        fs.abandon()
        return image


@pytest.fixture(params=MEDIA)
def clean(request):
    return make_clean(request.param)


@pytest.fixture(params=MEDIA)
def unclean(request):
    return make_unclean(request.param)


# ---- the checkpoint ----

def test_checkpoint_fields(clean):
    g, data, medium, oob = clean
    img, ck = decode(data, medium, oob)
    h = ck.header
    assert h.version == cf.DISK_VERSION == cairn.DISK_VERSION
    assert h.flags & cf.CK_F_CLEAN
    assert h.session == 0xFF  # no session began after the clean unmount
    assert h.seq >= 2  # format's, then the unmount's
    assert h.length == cf.CK_HDR + cf.CK_ENTRY * h.seg_count
    assert h.page_size == g.page_size
    assert h.seg_pages % g.pages_per_block == 0
    assert h.seg_pages * h.seg_count <= g.page_count
    assert h.seg_count == g.block_count // (h.seg_pages // g.pages_per_block)
    assert h.node_size % h.page_size == 0 and h.node_size >= 1024
    assert 1 <= h.height <= cf.MAX_HEIGHT
    # the copy that was found verifies, byte for byte
    copies = 2 if medium == "nand" else 1
    first = ck.anchors[ck.anchor_index] * h.seg_pages + \
        (ck.slot * copies + ck.copy) * ck.ckpt_pages
    buf = b"".join(img.page(first + j) for j in range(ck.ckpt_pages))
    assert cf.u32(buf, 0) == cf.CK_MAGIC and buf[:4] == b"CRN1"
    assert buf[7] == 0xFF  # the session byte, left erased
    # the CRC covers the length with its own field and the session byte as zeros
    assert zlib.crc32(buf[:7] + bytes(1) + buf[8:16] + bytes(4) + buf[20:h.length]) == h.crc
    assert buf[h.length:] == bytes(len(buf) - h.length)  # zero padding
    assert ck.ckpt_pages == -(-h.length // h.page_size)
    assert ck.slots == h.seg_pages // (ck.ckpt_pages * copies) >= 16
    # every slot before the newest in its anchor holds an older checkpoint
    assert ck.valid[ck.anchor_index] >= 1


def test_segment_table(clean):
    geo, data, medium, oob = clean
    img, ck = decode(data, medium, oob)
    h, segs = ck.header, ck.segs
    assert len(segs) == h.seg_count
    assert ck.anchors == (0, 1) and ck.seg_base == 2
    assert [s.state for s in segs[:2]] == [5, 5]
    assert all(s.state <= 6 and s.live <= h.seg_pages for s in segs)
    assert all(s.flags & ~0x1F == 0 for s in segs)
    assert segs[h.log_seg].state == 4  # LOG
    assert h.log_seg >= ck.seg_base and h.log_off <= h.seg_pages * h.page_size
    for seg, page in h.heads:
        assert seg == cf.NONE32 or (ck.seg_base <= seg < h.seg_count and page <= h.seg_pages)
    meta_seg = h.heads[0][0]
    assert segs[meta_seg].flags & 0x01  # NODES
    assert all(s.stamp <= h.clock for s in segs)
    # live pages: every node and every extent page, nothing else
    tree = cf.walk_tree(img, ck)
    node_pages = h.node_size // h.page_size
    extents = [e for e in tree.leaf_entries() if e.kind == cf.K_EXTENT]
    live = [0] * h.seg_count
    for n in tree.nodes:
        live[n.page // h.seg_pages] += node_pages
    for e in extents:
        live[cf.u32(e.value, 0) // h.seg_pages] += cf.u32(e.value, 4)
    assert live == [s.live for s in segs]


def test_checkpoint_lines(clean):
    geo, data, medium, oob = clean
    img, ck = decode(data, medium, oob)
    lines = cf.checkpoint_lines(ck)
    h = ck.header
    assert "magic        CRN1" in lines
    assert f"version      {h.version}" in lines
    assert f"root         {h.root}" in lines
    assert any(line.startswith("head meta    segment") for line in lines)
    rows = lines[lines.index("segments:") + 2:]
    assert len(rows) == h.seg_count
    assert [r.split()[1] for r in rows[:2]] == ["anchor", "anchor"]
    assert [int(r.split()[0]) for r in rows] == list(range(h.seg_count))
    assert [int(r.split()[-1]) for r in rows] == [s.live for s in ck.segs]


# ---- the tree ----

def files_from_tree(img: cf.Image, tree: cf.Tree) -> dict:
    """path -> (inode, bytes read through the extents) of every file."""
    ps = img.geo.page_size
    inodes, names, extents, attrs = {}, {}, {}, {}
    for e in tree.leaf_entries():
        if e.kind == cf.K_INODE:
            inodes[e.id] = e.value
        elif e.kind in (cf.K_DIRENT, cf.K_DIROVF) and e.sub & 15 != cf.MARK_SLOT:
            child, nlen = cf.u32(e.value, 0), e.value[5]
            names[child] = (e.id, e.value[6:6 + nlen], e)
        elif e.kind == cf.K_EXTENT:
            extents.setdefault(e.id, []).append((e.sub, cf.u32(e.value, 0), cf.u32(e.value, 4)))
        elif e.kind == cf.K_ATTR:
            attrs[(e.id, e.sub)] = e.value
    out = {}
    for ident, v in inodes.items():
        if ident == 1:
            continue
        parts, cur = [], ident
        while cur != 1:
            parent, name, _ = names[cur]
            parts.append(name.decode())
            cur = parent
        path = "/" + "/".join(reversed(parts))
        size = cf.i32(v, 8)
        content = bytearray(size)
        for fpage, phys, count in extents.get(ident, []):
            for i in range(count):
                o = (fpage + i) * ps
                if o < size:
                    content[o:o + ps] = img.page(phys + i)[:min(ps, size - o)]
        out[path] = (v, bytes(content), names[ident][2])
    return out, attrs


def test_tree_holds_the_files(clean):
    geo, data, medium, oob = clean
    img, ck = decode(data, medium, oob)
    h = ck.header
    tree = cf.walk_tree(img, ck)
    assert tree.problems == 0 and not tree.stopped
    assert tree.nodes[0].page == h.root and tree.nodes[0].level == h.height - 1
    for n in tree.nodes:
        assert not n.problem
        assert n.seq <= h.seq
        assert n.used <= h.node_size - cf.NODE_HDR
        assert n.page // h.seg_pages >= ck.seg_base
        assert ck.segs[n.page // h.seg_pages].flags & 0x01
        raw = b"".join(img.page(n.page + i) for i in range(h.node_size // h.page_size))
        assert raw[:2] == b"CN" and raw[2] == cf.NODE_VERSION
        assert zlib.crc32(raw[:12] + bytes(4) + raw[16:16 + n.used]) == n.crc
        assert raw[16 + n.used:] == b"\xff" * (h.node_size - 16 - n.used)
        keys = [e.key for e in n.entries]
        assert keys[1:] == sorted(set(keys[1:])) if n.level else keys == sorted(set(keys))
    leaves = tree.leaf_entries()
    assert [e.key for e in leaves] == sorted(e.key for e in leaves)
    root_inode = next(e for e in leaves if e.key == cf.make_key(1, cf.K_INODE, 0))
    assert "type=dir" in root_inode.text and "parent=1 " in root_inode.text
    files, attrs = files_from_tree(img, tree)
    for path, want in FILES.items():
        v, got, dirent = files[path]
        assert v[0] == cf.TYPE_FILE and cf.i32(v, 8) == len(want), path
        assert got == want, path
        name = path.rsplit("/", 1)[1].encode()
        assert dirent.value[6:] == name and dirent.value[4] == cf.TYPE_FILE
        assert dirent.sub >> 4 == cf.name_hash(name)
        assert cf.u32(v, 12) == dirent.sub  # the inode names its entry
        assert f" name={cf.quote_name(name)}" in dirent.text
    for d in ("/dir", "/dir/sub"):
        v = files[d][0]
        assert v[0] == cf.TYPE_DIR and cf.i32(v, 8) == 0
    a_id = files["/a.txt"][2].value[:4]
    assert attrs[(cf.u32(a_id, 0), 7)] == b"\x01\x02\xff"
    assert max(e.id for e in leaves) < h.next_id
    for e in leaves:
        if e.kind == cf.K_EXTENT:
            assert f"fpage={e.sub} phys={cf.u32(e.value, 0)} count={cf.u32(e.value, 4)}" in e.text
            assert ("tags=ok" in e.text) == (medium == "nand")


def test_nand_tags(clean):
    geo, data, medium, oob = clean
    if medium != "nand":
        pytest.skip("spare tags: NAND only")
    img, ck = decode(data, medium, oob)
    ps = img.geo.page_size
    tree = cf.walk_tree(img, ck)
    checked = 0
    for e in tree.leaf_entries():
        if e.kind != cf.K_EXTENT:
            continue
        phys, count = cf.u32(e.value, 0), cf.u32(e.value, 4)
        for i in range(count):
            t = cf.parse_tag(img.spare(phys + i, cf.TAG_LEN))
            assert t.valid and t.magic == cf.TAG_MAGIC and t.version == cf.TAG_VERSION
            assert t.kind in (cf.TAG_DATA, cf.TAG_LOG)
            assert (t.id, t.fpage) == (e.id, e.sub + i)
            assert t.data_crc == zlib.crc32(img.page(phys + i))
            assert t.size == 0 if t.kind == cf.TAG_DATA else t.size > 0
            checked += 1
    assert checked >= 70000 // ps
    for n in tree.nodes:  # nodes and checkpoints carry no tag
        assert img.spare(n.page, cf.TAG_LEN) == b"\xff" * cf.TAG_LEN


# ---- the journal ----

def test_journal_records(unclean):
    geo, data, medium, oob = unclean
    img, ck = decode(data, medium, oob)
    h = ck.header
    # the volume's first session (format leaves it unwritten): on every medium
    # a checkpoint without the clean flag names the tree and the journal it
    # began (on NOR a later session marks the clean checkpoint's session byte
    # instead: test_anchor "session mark")
    assert not h.flags & cf.CK_F_CLEAN and h.session == 0xFF
    assert h.root != cf.NONE32 and h.log_seg != cf.NONE32
    j = cf.read_journal(img, ck)
    assert j.reason == "erased" and not j.problems
    assert [r.seq for r in j.records] == list(range(h.log_seq, h.log_seq + len(j.records)))
    names = [r.name for r in j.records if r.name != "PAD"]
    for kind in ("CREATE", "EXTENT", "SIZE", "TRIM", "RENAME", "ATTR", "ATTRDEL", "REMOVE",
                 "RINGNEW", "RING"):
        assert kind in names, kind
    assert not any(r.malformed or not r.name for r in j.records)
    assert ("PAD" in [r.name for r in j.records]) == (medium != "nor")
    paged = medium != "nor"
    for r in j.records:
        if r.tag:
            continue
        raw = cf._Reader(img, ck).bytes_at(r.seg, r.off, cf.REC_HDR + len(r.payload))
        assert raw[0] == r.type and raw[1] == 0 and cf.u16(raw, 2) == len(r.payload)
        assert cf.u32(raw, 4) == r.seq
        assert zlib.crc32(raw[:8] + bytes(4) + raw[12:]) == cf.u32(raw, 8)
        if paged:
            assert r.off % img.geo.page_size + len(raw) <= img.geo.page_size
    create = [r for r in j.records if r.name == "CREATE"]
    assert [r.field("name") for r in create] == ['"d"', '"f"', '"gone"']
    d_id = create[0].field("id")
    assert create[1].field("parent") == d_id and create[0].field("type") == "dir"
    ren = next(r for r in j.records if r.name == "RENAME")
    assert ren.field("name") == '"g"' and ren.field("id") == create[1].field("id")
    assert ren.field("oparent") == ren.field("nparent") == d_id
    size = next(r for r in j.records if r.name == "SIZE")
    assert size.field("size") == "100"
    ringnew = next(r for r in j.records if r.name == "RINGNEW")
    assert ringnew.field("capacity") == "4096" and ringnew.field("name") == '"ring"'
    ring = next(r for r in j.records if r.name == "RING")
    assert (ring.field("size"), ring.field("head"), ring.field("slot")) == ("10", "0", "0")
    attr = next(r for r in j.records if r.name == "ATTR")
    assert (attr.field("atype"), attr.field("value")) == ("9", b"v".hex())
    tagged = [r for r in j.records if r.tag]
    if medium == "nand":
        assert len(tagged) == 1
        t = cf.parse_tag(img.spare(int(tagged[0].field("phys")), cf.TAG_LEN))
        assert t.valid and t.kind == cf.TAG_LOG and t.seq == tagged[0].seq
        assert tagged[0].field("size") == "104" and tagged[0].field("count") == "1"
    else:
        assert not tagged
    # the pages the records name hold what was written
    last = [r for r in j.records if r.name == "EXTENT" and r.field("id") == create[1].field("id")]
    phys = int(last[-1].field("phys"))
    assert img.page(phys)[:104] == pattern(3000, 5)[:100] + b"more"
    lines = j.lines()
    assert lines[0] == f"journal from segment {h.log_seg} offset {h.log_off} seq {h.log_seq}"
    assert lines[-1].endswith(f"{len(j.records)} records, erased")


# ---- the C tool agrees ----

def tool_path() -> pathlib.Path | None:
    if os.environ.get("CAIRN_TOOL"):
        return pathlib.Path(os.environ["CAIRN_TOOL"])
    lib = os.environ.get("CAIRN_LIB")
    guesses = [pathlib.Path(lib).parent.parent / "tools" / "cairn"] if lib else []
    guesses.append(REPO / "build" / "tools" / "cairn")
    return next((p for p in guesses if p.is_file()), None)


def run_tool(args) -> subprocess.CompletedProcess:
    tool = tool_path()
    if tool is None or not tool.is_file():
        pytest.skip("the cairn tool is not built (set CAIRN_TOOL, or `make build`)")
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:exitcode=86")
    return subprocess.run([str(tool), *args], capture_output=True, text=True, env=env,
                          errors="replace", timeout=120)


@pytest.mark.parametrize("make", [make_clean, make_unclean], ids=["clean", "unclean"])
@pytest.mark.parametrize("medium", MEDIA)
def test_tool_prints_the_same(make, medium, tmp_path):
    geo, data, medium, oob = make(medium)
    path = tmp_path / "vol.img"
    path.write_bytes(data)
    img, ck = decode(data, medium, oob)
    for flags, kw in (([], {}), (["--journal"], {"journal": True}),
                      (["--tree"], {"tree": True}),
                      (["--all"], {"checkpoint": True, "journal": True, "tree": True})):
        r = run_tool(["dump", *flags, "--medium", medium, str(path)])
        assert r.returncode == 0, r.stderr
        lines, problems = cf.dump_lines(img, ck, **kw)
        assert problems == 0
        assert r.stdout.splitlines() == lines, flags


# ---- damaged images ----

def test_truncated_image(clean):
    geo, data, medium, oob = clean
    with pytest.raises(cf.FormatError, match="shorter"):
        cf.Image(data[: len(data) // 2], decode(data, medium, oob)[0].geo)
    with pytest.raises(cf.FormatError):
        cf.Image.detect(data[: len(data) // 3 + 7], medium=medium, oob=oob)
    with pytest.raises(cf.FormatError):
        cf.Image.detect(b"\xff" * 4096, medium=medium)


def test_damaged_images(unclean, tmp_path):
    """Bytes changed where the structures are (anchors, journal, nodes) and at random:
    the decoder reports problems or FormatError, and prints what `cairn dump` prints."""
    geo, data, medium, oob = unclean
    img, ck = decode(data, medium, oob)
    h, g = ck.header, img.geo
    live_pages = [ck.anchors[ck.anchor_index] * h.seg_pages + ck.slot * ck.ckpt_pages,
                  h.log_seg * h.seg_pages + h.log_off // h.page_size, h.root]
    rng = random.Random(12)
    have_tool = tool_path() is not None
    outcomes = set()
    for i in range(24):
        b = bytearray(data)
        for _ in range(rng.choice((1, 4, 32))):
            if i % 3:  # the start of a structure: what its CRC covers
                page, off = rng.choice(live_pages), rng.randrange(64)
            else:
                page, off = rng.randrange(g.pages), rng.randrange(g.page_size)
            b[page * g.stride + off] = rng.randrange(256)
        try:
            dimg = cf.Image.detect(bytes(b), medium=medium, oob=oob)
            lines, problems = cf.dump_lines(dimg, journal=True, tree=True, checkpoint=True)
            rc = 1 if problems else 0
        except cf.FormatError:
            lines, rc = None, 2
        outcomes.add(rc)
        if have_tool:
            path = tmp_path / "bad.img"
            path.write_bytes(bytes(b))
            r = run_tool(["dump", "--all", "--medium", medium, str(path)])
            assert r.returncode in (0, 1, 2) and "Sanitizer" not in r.stderr
            assert r.returncode == rc
            if lines is not None:
                assert r.stdout.splitlines() == lines
    assert outcomes - {0}  # some damage was seen


def test_pure_import():
    """ondisk.py needs neither cffi nor the library (cairn/__init__ loads both, so
    this loads the file by itself)."""
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('cairn_format', {str(cf.__file__)!r})\n"
        "m = importlib.util.module_from_spec(spec)\n"
        "sys.modules['cairn_format'] = m\n"
        "spec.loader.exec_module(m)\n"
        "assert 'cffi' not in sys.modules and 'cairn' not in sys.modules\n"
        "print(m.DISK_VERSION)\n"
    )
    r = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(cairn.DISK_VERSION)


def test_numbers_match_format_h():
    """The decoder's numbers are src/format.h's (the C side defines them once; this
    keeps the Python copy honest)."""
    import re
    text = (REPO / "src" / "format.h").read_text()
    defs = {m[1]: m[2].strip() for m in re.finditer(r"#define (CN_\w+) +([^/\n]+)", text)}
    enums = {m[1]: int(m[2], 0) for m in re.finditer(r"\b(CN_\w+) = (0x[0-9A-Fa-f]+|\d+)", text)}

    def num(name):
        v = defs[name].replace("CN_RESERVE_SEGS", defs["CN_RESERVE_SEGS"])
        v = re.sub(r"\b(0x[0-9A-Fa-f]+|\d+)u\b", r"\1", v)
        assert re.fullmatch(r"[0-9A-Fa-fx +()]+", v), (name, v)  # literals and + only
        return int(eval(v, {}))

    same = {"CK_MAGIC": "CN_CK_MAGIC", "CK_HDR": "CN_CK_HDR", "CK_ENTRY": "CN_CK_ENTRY",
            "CK_HEADS": "CN_CK_HEADS", "CK_F_CLEAN": "CN_CK_F_CLEAN",
            "CK_F_OTHER_ERASED": "CN_CK_F_OTHER_ERASED",
            "CK_F_OTHER_BLOCKS_SHIFT": "CN_CK_F_OTHER_BLOCKS_SHIFT", "NODE_MAGIC": "CN_NODE_MAGIC",
            "NODE_VERSION": "CN_NODE_VERSION", "NODE_HDR": "CN_NODE_HDR",
            "NODE_IENT": "CN_NODE_IENT", "NODE_LEAF_HDR": "CN_NODE_LEAF_HDR",
            "SUB_MASK": "CN_SUB_MASK", "MARK_SLOT": "CN_MARK_SLOT", "SUB_OVF": "CN_SUB_OVF",
            "INODE_LEN": "CN_INODE_LEN", "RING_INODE_LEN": "CN_RING_INODE_LEN",
            "INODE_F_RING": "CN_INODE_F_RING", "DIRENT_HDR": "CN_DIRENT_HDR",
            "EXTENT_VAL": "CN_EXTENT_VAL", "MARK_VAL": "CN_MARK_VAL", "REC_HDR": "CN_REC_HDR",
            "REC_MAX": "CN_REC_MAX", "TAG_MAGIC": "CN_TAG_MAGIC", "TAG_VERSION": "CN_TAG_VERSION",
            "TAG_LEN": "CN_TAG_LEN", "TAG_DATA": "CN_TAG_DATA", "TAG_LOG": "CN_TAG_LOG",
            "MAX_HEIGHT": "CN_MAX_HEIGHT", "MIN_SEGS": "CN_MIN_SEGS"}
    for py, c in same.items():
        assert getattr(cf, py) == num(c), (py, c)
    for rtype, (name, fixed, _) in cf.REC_KINDS.items():
        assert enums["CN_R_" + name] == rtype, name
        if rtype != cf.R_PAD:
            assert num("CN_RL_" + name) == fixed, name
    assert sorted(v for k, v in enums.items() if k.startswith("CN_R_")) == sorted(cf.REC_KINDS)
    for i, name in enumerate(cf.KIND_NAMES):
        assert enums["CN_K_" + name] == i
    for i, name in enumerate(("FREE", "ERASED", "OPEN", "FULL", "LOG", "ANCHOR", "BAD")):
        assert enums["CN_SEG_" + name] == i
    for i, name in enumerate(cf.SEG_FLAGS):
        assert num("CN_SF_" + {"nodes": "NODES", "scrub": "SCRUB", "failing": "FAILING",
                               "stuck": "STUCK", "evict": "EVICT"}[name]) == 1 << i
