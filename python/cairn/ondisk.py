"""cairn.ondisk: a raw cairn image decoded per docs/FORMAT.md, in pure Python.

No native library: only the standard library (struct, zlib). It reads what
`cairn dump` reads and prints the same lines for the same image:

    from cairn import ondisk as cf
    img = cf.Image.open("volume.img")          # geometry found in the image
    ck = cf.find_checkpoint(img)
    for rec in cf.read_journal(img, ck).records: ...
    for node in cf.walk_tree(img, ck).nodes: ...
    print("\\n".join(cf.dump_lines(img, ck, journal=True, tree=True)))

or from a shell: `python3 python/cairn/ondisk.py [--journal] [--tree] [--all] IMAGE`
(the file runs on its own). Images are raw (docs/TOOL.md "Raw images"): NOR
and BLOCK pages back to back; NAND pages each followed by their OOB bytes,
whose bytes 0-1 are the bad-block marker and whose spare area (the tag)
starts at byte 2.

Everything read from the image is checked before it is used: a damaged or
hostile image gives problems (or FormatError when nothing can be found),
never an exception from deep inside, and every loop is bounded.
"""

from __future__ import annotations

import argparse
import dataclasses
import struct
import sys
import zlib

# ---- numbers (src/format.h) ----
DISK_VERSION = 5
DISK_VERSION_OLDEST = 4  # 4 differs only in what a format leaves
CK_MAGIC = 0x314E5243  # "CRN1"
CK_HDR = 144
CK_ENTRY = 12
CK_HEADS = 10
CK_F_CLEAN = 1
CK_F_OTHER_ERASED = 2
CK_F_OTHER_BLOCKS_SHIFT = 2
CK_F_PARTIAL = 4  # NOR: bit 2, a partial run (FORMAT.md "Checkpoint")
MIN_SEGS = 11
MAX_HEIGHT = 5

NODE_MAGIC = 0x4E43  # "CN"
NODE_VERSION = 1
NODE_HDR = 16
NODE_IENT = 12
NODE_LEAF_HDR = 10

K_INODE, K_ATTR, K_DIRENT, K_EXTENT, K_ORPHAN, K_DIROVF = range(6)
KIND_NAMES = ("INODE", "ATTR", "DIRENT", "EXTENT", "ORPHAN", "DIROVF")
SUB_MASK = 0x0FFFFFFF
MARK_SLOT = 15
SUB_OVF = 0x80000000
INODE_LEN = 16
RING_INODE_LEN = 24
INODE_F_RING = 0x01
DIRENT_HDR = 6
EXTENT_VAL = 8
MARK_VAL = 4
ATTR_MAX = 64
TYPE_FILE, TYPE_DIR = 1, 2

REC_HDR = 12
REC_MAX = 320
R_PAD, R_NEXT = 0x01, 0x02
R_EXTENT, R_SIZE, R_TRIM, R_MOVE, R_PUNCH, R_RING, R_RINGNEW = 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16
R_CREATE, R_REMOVE, R_RENAME = 0x20, 0x21, 0x22
R_ATTR, R_ATTRDEL = 0x30, 0x31
# type: (name, fixed length or fixed part, a name/value length byte ends the fixed part)
REC_KINDS = {
    R_PAD: ("PAD", 0, False),
    R_NEXT: ("NEXT", 4, False),
    R_EXTENT: ("EXTENT", 20, False),
    R_SIZE: ("SIZE", 8, False),
    R_TRIM: ("TRIM", 4, False),
    R_MOVE: ("MOVE", 20, False),
    R_PUNCH: ("PUNCH", 12, False),
    R_RING: ("RING", 24, False),
    R_RINGNEW: ("RINGNEW", 18, True),
    R_CREATE: ("CREATE", 14, True),
    R_REMOVE: ("REMOVE", 12, False),
    R_RENAME: ("RENAME", 25, True),
    R_ATTR: ("ATTR", 6, True),
    R_ATTRDEL: ("ATTRDEL", 5, False),
}

TAG_MAGIC = 0x5443  # "CT"
TAG_VERSION = 1
TAG_LEN = 28
TAG_DATA, TAG_LOG = 0, 1
OOB_MARKER = 2  # OOB bytes before cairn's spare area in an image

SEG_STATES = ("free", "erased", "open", "full", "journal", "anchor", "bad")
SEG_FLAGS = ("nodes", "scrub", "failing", "stuck", "evict")
NONE32 = 0xFFFFFFFF


class FormatError(Exception):
    """The image cannot be decoded at all (no checkpoint, wrong size...)."""


def crc32(data: bytes, crc: int = 0) -> int:
    """CRC-32 as the core computes it (zlib's)."""
    return zlib.crc32(data, crc) & 0xFFFFFFFF


def u16(b: bytes, o: int) -> int:
    return struct.unpack_from("<H", b, o)[0]


def u32(b: bytes, o: int) -> int:
    return struct.unpack_from("<I", b, o)[0]


def i32(b: bytes, o: int) -> int:
    return struct.unpack_from("<i", b, o)[0]


def u64(b: bytes, o: int) -> int:
    return struct.unpack_from("<Q", b, o)[0]


def key_parts(key: int) -> tuple[int, int, int]:
    """(id, kind, sub) of a tree key."""
    return key >> 32, (key >> 28) & 0xF, key & SUB_MASK


def make_key(ident: int, kind: int, sub: int) -> int:
    return (ident << 32) | ((kind & 0xF) << 28) | (sub & SUB_MASK)


def name_hash(name: bytes) -> int:
    """FNV-1a folded to 24 bits: a directory entry's bucket."""
    h = 2166136261
    for c in name:
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return (h ^ (h >> 24)) & 0xFFFFFF


# ---- the image ----

@dataclasses.dataclass
class Geometry:
    page_size: int
    seg_pages: int
    seg_count: int
    medium: str  # "nor", "nand", "block"
    oob: int = 0  # NAND: OOB bytes per page in the image
    pages_per_block: int = 0  # erase block (0: the segment)

    @property
    def stride(self) -> int:
        return self.page_size + self.oob

    @property
    def pages(self) -> int:
        return self.seg_pages * self.seg_count

    @property
    def spare_size(self) -> int:
        return self.oob - OOB_MARKER if self.oob > OOB_MARKER else 0

    @property
    def tags(self) -> bool:
        """Data pages carry spare tags."""
        return self.medium == "nand" and self.spare_size >= TAG_LEN

    @property
    def paged(self) -> bool:
        """Journal records never cross a page."""
        return self.medium != "nor"


class Image:
    """A raw image's bytes with its geometry."""

    def __init__(self, data: bytes, geometry: Geometry):
        g = geometry
        if g.medium not in ("nor", "nand", "block"):
            raise FormatError(f"medium {g.medium!r}: nor, nand or block")
        if g.oob and g.medium != "nand":
            raise FormatError("OOB bytes only on NAND")
        if not g.pages_per_block:
            g.pages_per_block = g.seg_pages
        if g.seg_pages % g.pages_per_block:
            raise FormatError("the erase block does not divide the segment")
        need = g.pages * g.stride
        if len(data) < need:
            raise FormatError(
                f"the image ({len(data)} bytes) is shorter than the volume "
                f"({g.pages} pages of {g.page_size} + {g.oob} bytes): truncated")
        self.data = bytes(data)
        self.geo = g

    @classmethod
    def open(cls, path, medium: str | None = None, page_size: int | None = None,
             oob: int | None = None) -> "Image":
        with open(path, "rb") as f:
            return cls.detect(f.read(), medium, page_size, oob)

    @classmethod
    def detect(cls, data: bytes, medium: str | None = None, page_size: int | None = None,
               oob: int | None = None) -> "Image":
        """The geometry from the first checkpoint that verifies where a volume of its
        geometry puts one (a subset of what `cairn` does: docs/TOOL.md)."""
        why = f"no cairn checkpoint in the image: not a cairn image (version {DISK_VERSION})"
        pos = data.find(b"CRN1")
        while pos >= 0:
            h = parse_header(data[pos:pos + CK_HDR])
            if h is not None and (page_size is None or h.page_size == page_size):
                geo, why = _layout(h, len(data), medium, oob, why)
                if geo is not None and _verifies_at(data, h, pos, geo):
                    return cls(data, geo)
            pos = data.find(b"CRN1", pos + 1)
        raise FormatError(why)

    def page(self, p: int) -> bytes:
        g = self.geo
        o = p * g.stride
        return self.data[o:o + g.page_size]

    def spare(self, p: int, n: int) -> bytes:
        g = self.geo
        o = p * g.stride + g.page_size + OOB_MARKER
        return self.data[o:o + n]

    def block_bad(self, block: int) -> bool:
        g = self.geo
        if g.medium != "nand" or g.oob == 0:
            return False
        return self.data[block * g.pages_per_block * g.stride + g.page_size] != 0xFF

    def seg_good(self, seg: int) -> bool:
        per = self.geo.seg_pages // self.geo.pages_per_block
        return not any(self.block_bad(seg * per + i) for i in range(per))


def _layout(h, size, medium, oob, why):
    pages = h.seg_pages * h.seg_count
    flat = pages * h.page_size
    if medium == "nand" or (oob is not None and oob > 0):
        if oob is None:
            if size % pages or size // pages < h.page_size:
                return None, f"NAND image of {size} bytes is not {pages} pages of data + OOB"
            oob = size // pages - h.page_size
        return Geometry(h.page_size, h.seg_pages, h.seg_count, "nand", oob), why
    if medium is None and oob is None and size != flat and size % pages == 0 and \
            0 < size // pages - h.page_size <= h.page_size // 4:
        return Geometry(h.page_size, h.seg_pages, h.seg_count, "nand",
                        size // pages - h.page_size), why
    if medium is None:
        medium = {512: "block", 256: "nor"}.get(h.page_size)
        if medium is None:
            return None, (f"flat image with {h.page_size}-byte pages: NOR or SD/eMMC? "
                          "give --medium")
    return Geometry(h.page_size, h.seg_pages, h.seg_count, medium, 0), why


def _verifies_at(data, h, pos, geo) -> bool:
    stride = geo.stride
    k = pos // stride
    ckpt_pages = -(-h.length // h.page_size)
    if pos % stride or k >= geo.pages or (k % h.seg_pages) % ckpt_pages:
        return False
    buf = b"".join(data[(k + j) * stride:(k + j) * stride + h.page_size]
                   for j in range(ckpt_pages))
    return len(buf) >= h.length and _ckpt_crc(buf, h.length) == h.crc


def _ckpt_crc(buf: bytes, length: int) -> int:
    """The checkpoint's CRC: over its length, the CRC field and the session
    byte (offset 7) taken as zero."""
    return crc32(buf[:7] + b"\0" + buf[8:16] + b"\0\0\0\0" + buf[20:length])


# ---- the checkpoint ----

@dataclasses.dataclass
class Header:
    version: int
    flags: int
    session: int  # 0xFF, or a NOR session began changing the volume after it
    seq: int
    length: int
    crc: int
    page_size: int
    seg_pages: int
    seg_count: int
    node_size: int
    root: int
    height: int
    next_id: int
    log_seg: int
    log_off: int
    log_seq: int
    clock: int
    heads: list  # CK_HEADS x (segment, next page)


def parse_header(b: bytes) -> Header | None:
    """A checkpoint header whose magic, version and every field are plausible
    (the checks of the tool's ckpt_parse_header), else None."""
    if len(b) < CK_HDR or u32(b, 0) != CK_MAGIC:
        return None
    f = struct.unpack_from("<HBBIIIIIIIIIIIIII", b, 4)
    heads = [(u32(b, 64 + 8 * i), u32(b, 68 + 8 * i)) for i in range(CK_HEADS)]
    h = Header(*f, heads=heads)
    ok = (DISK_VERSION_OLDEST <= h.version <= DISK_VERSION and 128 <= h.page_size <= 65536 and h.page_size % 8 == 0
          and 0 < h.seg_pages <= 65535 and h.seg_count >= MIN_SEGS
          and h.seg_pages * h.seg_count < 0x80000000
          and h.length == CK_HDR + CK_ENTRY * h.seg_count
          and h.node_size % h.page_size == 0 and 1024 <= h.node_size <= 65536
          and 1 <= h.height <= MAX_HEIGHT)
    return h if ok else None


@dataclasses.dataclass
class SegEntry:
    erase_count: int
    stamp: int
    live: int
    state: int
    flags: int


@dataclasses.dataclass
class Checkpoint:
    header: Header
    segs: list  # SegEntry per segment
    anchors: tuple  # the two anchor segments
    anchor_index: int
    slot: int
    copy: int
    valid: tuple  # valid slots per anchor
    slots: int  # slots per anchor
    ckpt_pages: int  # pages of one copy

    @property
    def seg_base(self) -> int:
        return self.anchors[1] + 1


def _read_copy(img: Image, page: int, ckpt_pages: int):
    g = img.geo
    h = parse_header(img.page(page))
    if h is None or h.page_size != g.page_size or h.seg_pages != g.seg_pages or \
            h.seg_count != g.seg_count or h.length > ckpt_pages * g.page_size:
        return None, None
    buf = b"".join(img.page(page + j) for j in range(ckpt_pages))
    if _ckpt_crc(buf, h.length) != h.crc:
        return None, None
    return h, buf


def _newer(seq: int, than: int) -> bool:
    """Serial-number order: (int32)(seq - than) > 0."""
    return 0 < (seq - than) & 0xFFFFFFFF < 0x80000000


def find_checkpoint(img: Image) -> Checkpoint:
    """The newest valid checkpoint: every slot of both anchors is read, the valid
    one of highest seq kept (serial-number order). FormatError when none."""
    g = img.geo
    copies = 2 if g.medium == "nand" else 1
    ckpt_pages = -(-(CK_HDR + CK_ENTRY * g.seg_count) // g.page_size)
    slots = g.seg_pages // (ckpt_pages * copies)
    anchors = [s for s in range(g.seg_count) if img.seg_good(s)][:2]
    if len(anchors) < 2 or slots == 0:
        raise FormatError("no two good segments for the anchors")
    best = None
    valid = [0, 0]
    for a in range(2):
        for s in range(slots):
            for c in range(copies):
                page = anchors[a] * g.seg_pages + (s * copies + c) * ckpt_pages
                h, buf = _read_copy(img, page, ckpt_pages)
                if h is None:
                    continue
                valid[a] += 1
                if best is None or _newer(h.seq, best[0].seq):
                    best = (h, buf, a, s, c)
                break
    if best is None:
        raise FormatError(f"no valid checkpoint in the anchors (segments {anchors[0]} "
                          f"and {anchors[1]})")
    h, buf, a, s, c = best
    segs = []
    for i in range(g.seg_count):
        o = CK_HDR + CK_ENTRY * i
        segs.append(SegEntry(u32(buf, o), u32(buf, o + 4), u16(buf, o + 8), buf[o + 10],
                             buf[o + 11]))
    return Checkpoint(h, segs, tuple(anchors), a, s, c, tuple(valid), slots, ckpt_pages)


def state_name(state: int) -> str:
    return SEG_STATES[state] if state < len(SEG_STATES) else "?"


def flag_names(flags: int) -> str:
    names = [n for i, n in enumerate(SEG_FLAGS) if flags & (1 << i)]
    if flags & 0xE0:
        names.append(f"0x{flags & 0xE0:02x}")
    return ",".join(names) if names else "-"


def head_name(h: int) -> str:
    return ("meta", "cold")[h] if h < 2 else f"data{h - 2}"


def other_blocks_text(flags: int, medium: str | None = None) -> str:
    """Bits 2..7 of the checkpoint flags: on NAND (anchors of several blocks)
    the other anchor's blocks from n on are erased; on NOR bit 2 is PARTIAL
    (a run format began with only its first blocks erased)."""
    if medium == "nor":
        return ", partial run" if flags & CK_F_PARTIAL else ""
    n = flags >> CK_F_OTHER_BLOCKS_SHIFT
    return f", other anchor erased from block {n}" if n else ""


def checkpoint_lines(ck: Checkpoint, medium: str | None = None) -> list[str]:
    h = ck.header
    out = [f"checkpoint in segment {ck.anchors[ck.anchor_index]} (anchor {ck.anchor_index}) "
           f"slot {ck.slot} copy {ck.copy}, {ck.ckpt_pages} page{'' if ck.ckpt_pages == 1 else 's'}"
           " a copy",
           "magic        CRN1",
           f"version      {h.version}",
           f"flags        0x{h.flags:02x} ({'clean' if h.flags & CK_F_CLEAN else 'not clean'}"
           f"{', other anchor erased' if h.flags & CK_F_OTHER_ERASED else ''}"
           f"{other_blocks_text(h.flags, medium)})",
           f"session      0x{h.session:02x} ("
           f"{'no session began after it' if h.session == 0xFF else 'a session began after it'})"]
    for name in ("seq", "length"):
        out.append(f"{name:<13}{getattr(h, name)}")
    out.append(f"crc          0x{h.crc:08x}")
    for name in ("page_size", "seg_pages", "seg_count", "node_size", "root", "height",
                 "next_id", "log_seg", "log_off", "log_seq", "clock"):
        out.append(f"{name:<13}{getattr(h, name)}")
    for i, (seg, page) in enumerate(h.heads):
        name = head_name(i)
        out.append(f"head {name:<7} none" if seg == NONE32
                   else f"head {name:<7} segment {seg} page {page}")
    out.append("segments:")
    out.append(f"  {'seg':>5} {'state':<8} {'flags':<12} {'erases':>8} {'stamp':>8} {'live':>6}")
    for i, s in enumerate(ck.segs):
        out.append(f"  {i:>5} {state_name(s.state):<8} {flag_names(s.flags):<12} "
                   f"{s.erase_count:>8} {s.stamp:>8} {s.live:>6}")
    return out


# ---- values shared by records and tree entries ----

def quote_name(name: bytes) -> str:
    return '"' + "".join(chr(c) if 0x20 <= c < 0x7F and c not in (0x22, 0x5C) else f"\\x{c:02x}"
                         for c in name) + '"'


def type_name(t: int) -> str:
    return {TYPE_FILE: "file", TYPE_DIR: "dir"}.get(t, str(t))


# ---- NAND spare tags ----

@dataclasses.dataclass
class Tag:
    magic: int
    version: int
    kind: int
    id: int
    fpage: int
    seq: int
    size: int
    data_crc: int
    crc: int
    crc_ok: bool = False  # crc is right

    @property
    def valid(self) -> bool:
        return self.magic == TAG_MAGIC and self.version == TAG_VERSION and self.crc_ok


def parse_tag(b: bytes) -> Tag:
    """A spare-area tag (28 bytes); .valid says whether magic, version and CRC hold."""
    if len(b) < TAG_LEN:
        raise FormatError("a tag is 28 bytes")
    magic, version, kind, ident, fpage, seq, size, dcrc, tcrc = struct.unpack_from(
        "<HBBIIIiII", b, 0)
    return Tag(magic, version, kind, ident, fpage, seq, size, dcrc, tcrc,
               crc_ok=crc32(b[:24]) == tcrc)


# ---- journal records ----

@dataclasses.dataclass
class Record:
    seg: int
    off: int
    seq: int
    type: int
    payload: bytes
    fields: list  # [(name, text)] as printed
    name: str  # type name, "" when unknown
    tag: bool = False  # a journal page written as a file page (its spare tag)
    malformed: bool = False

    def field(self, name: str) -> str:
        for n, v in self.fields:
            if n == name:
                return v
        raise KeyError(name)

    def line(self) -> str:
        head = f"record seg={self.seg} off={self.off} seq={self.seq}"
        if self.tag:
            head += " tag=log"
        if not self.name:
            return (f"{head} type=0x{self.type:02x} len={len(self.payload)} "
                    f"payload={self.payload.hex()} unknown-type")
        s = f"{head} type={self.name} len={len(self.payload)}"
        if self.malformed:
            return f"{s} payload={self.payload.hex()} malformed"
        return s + "".join(f" {n}={v}" for n, v in self.fields)


def _create_fields(p: bytes) -> list:
    return [("parent", str(u32(p, 0))), ("id", str(u32(p, 4))), ("sub", f"0x{u32(p, 8):08x}"),
            ("type", type_name(p[12])), ("name", quote_name(p[14:14 + p[13]]))]


def record_fields(rtype: int, p: bytes) -> list:
    """The decoded fields of a payload that fits its type."""
    def us(names, base=0):
        return [(n, str(u32(p, base + 4 * i))) for i, n in enumerate(names)]
    if rtype == R_NEXT:
        return [("seg", str(u32(p, 0)))]
    if rtype == R_EXTENT:
        return us(("id", "fpage", "phys", "count")) + [("size", str(i32(p, 16)))]
    if rtype == R_SIZE:
        return [("id", str(u32(p, 0))), ("size", str(i32(p, 4)))]
    if rtype == R_TRIM:
        return [("id", str(u32(p, 0)))]
    if rtype == R_MOVE:
        return us(("id", "fpage", "from", "to", "count"))
    if rtype == R_PUNCH:
        return us(("id", "fpage", "count"))
    if rtype == R_RING:
        return us(("id", "slot", "phys", "count")) + [("size", str(i32(p, 16))),
                                                        ("head", str(u32(p, 20)))]
    if rtype == R_RINGNEW:
        return [("capacity", str(u32(p, 0)))] + _create_fields(p[4:])
    if rtype == R_CREATE:
        return _create_fields(p)
    if rtype == R_REMOVE:
        return [("parent", str(u32(p, 0))), ("sub", f"0x{u32(p, 4):08x}"), ("id", str(u32(p, 8)))]
    if rtype == R_RENAME:
        return [("oparent", str(u32(p, 0))), ("osub", f"0x{u32(p, 4):08x}"),
                ("nparent", str(u32(p, 8))), ("nsub", f"0x{u32(p, 12):08x}"),
                ("replaced", str(u32(p, 16))), ("id", str(u32(p, 20))),
                ("name", quote_name(p[25:25 + p[24]]))]
    if rtype == R_ATTR:
        return [("id", str(u32(p, 0))), ("atype", str(p[4])), ("value", p[6:6 + p[5]].hex())]
    if rtype == R_ATTRDEL:
        return [("id", str(u32(p, 0))), ("atype", str(p[4]))]
    return []  # PAD


def decode_record(seg: int, off: int, seq: int, rtype: int, p: bytes, tag=False) -> Record:
    kind = REC_KINDS.get(rtype)
    if kind is None:
        return Record(seg, off, seq, rtype, p, [], "", tag)
    name, fixed, named = kind
    fits = len(p) == fixed if not named else len(p) >= fixed and len(p) == fixed + p[fixed - 1]
    return Record(seg, off, seq, rtype, p, record_fields(rtype, p) if fits else [], name, tag,
                  not fits)


@dataclasses.dataclass
class Journal:
    start: tuple  # (segment, offset, seq)
    records: list
    end_seg: int = 0
    end_off: int = 0
    reason: str = ""  # why it ends there
    problems: list = dataclasses.field(default_factory=list)
    unwritten: bool = False  # format left the volume unwritten: no journal yet

    def lines(self) -> list[str]:
        if self.unwritten:
            return ["journal: none yet (the volume was never written)"]
        out = [f"journal from segment {self.start[0]} offset {self.start[1]} seq {self.start[2]}"]
        out += [r.line() for r in self.records]
        if self.problems and not self.reason:
            return out + [f"problem: {p}" for p in self.problems]
        return out + [f"journal end segment {self.end_seg} offset {self.end_off}: "
                      f"{len(self.records)} records, {self.reason}"]


class _Reader:
    def __init__(self, img: Image, ck: Checkpoint):
        g = img.geo
        self.img, self.g = img, g
        self.seg_bytes = g.seg_pages * g.page_size
        self.seg_base = ck.seg_base

    def bytes_at(self, seg: int, off: int, n: int) -> bytes:
        ps = self.g.page_size
        out = b""
        while n > 0:
            in_page = off % ps
            take = min(ps - in_page, n)
            out += self.img.page(seg * self.g.seg_pages + off // ps)[in_page:in_page + take]
            off += take
            n -= take
        return out


def _tagged_entry(r: _Reader, seg: int, off: int, seq: int):
    g = r.g
    if not g.tags or off % g.page_size:
        return None
    page = seg * g.seg_pages + off // g.page_size
    t = parse_tag(r.img.spare(page, TAG_LEN))
    if not t.valid or t.kind != TAG_LOG or t.seq != seq:
        return None
    p = struct.pack("<IIIIi", t.id, t.fpage, page, 1, t.size)
    return decode_record(seg, off, seq, R_EXTENT, p, tag=True)


def _header_end(r: _Reader, off: int, seq: int, h: bytes):
    g = r.g
    length = u16(h, 2)
    if h == b"\xff" * REC_HDR:
        return "erased"
    if REC_HDR + length > REC_MAX or off + REC_HDR + length > r.seg_bytes:
        return f"bad length {length}"
    if u32(h, 4) != seq:
        return f"seq {u32(h, 4)}, expected {seq}"
    if g.paged and off % g.page_size + REC_HDR + length > g.page_size:
        return "crosses a page"
    if h[0] == R_PAD and (not g.paged or length != 0):
        return "bad PAD"
    return None


def read_journal(img: Image, ck: Checkpoint) -> Journal:
    """The records from the checkpoint's journal position to the end of the valid
    chain (FORMAT.md "Reading it, and where it ends")."""
    h, g = ck.header, img.geo
    r = _Reader(img, ck)
    j = Journal((h.log_seg, h.log_off, h.log_seq), [])
    if h.log_seg == NONE32 and h.root == NONE32:
        j.unwritten = True  # format left the volume unwritten: no journal until its first change
        return j
    if not (ck.seg_base <= h.log_seg < g.seg_count and h.log_off <= r.seg_bytes):
        j.problems.append("the checkpoint's journal position is outside the volume")
        return j
    seg, off, seq, hops = h.log_seg, h.log_off, h.log_seq, 0
    while True:
        if g.paged and g.page_size - off % g.page_size < REC_HDR:
            off += g.page_size - off % g.page_size
        if off + REC_HDR > r.seg_bytes:
            j.reason = "end of segment"
            break
        rec = _tagged_entry(r, seg, off, seq)
        if rec is not None:
            j.records.append(rec)
            seq, off = seq + 1, off + g.page_size
            continue
        hdr = r.bytes_at(seg, off, REC_HDR)
        why = _header_end(r, off, seq, hdr)
        if why:
            j.reason = why
            break
        length, rtype = u16(hdr, 2), hdr[0]
        payload = r.bytes_at(seg, off + REC_HDR, length)
        if crc32(hdr[:8] + b"\0\0\0\0" + payload) != u32(hdr, 8):
            j.reason = "bad crc"
            break
        j.records.append(decode_record(seg, off, seq, rtype, payload))
        seq += 1
        if rtype == R_PAD:
            off += g.page_size - off % g.page_size
            continue
        if rtype != R_NEXT:
            off += REC_HDR + length
            continue
        nxt = u32(payload, 0) if length == 4 else NONE32
        if nxt < ck.seg_base or nxt >= g.seg_count or nxt == seg:
            j.reason = "bad NEXT"
            break
        hops += 1
        if hops > g.seg_count:
            j.reason = "too many segments"
            break
        seg, off = nxt, 0
    j.end_seg, j.end_off = seg, off
    return j


# ---- tree nodes ----

@dataclasses.dataclass
class Entry:
    key: int
    value: bytes = b""  # leaf entries
    child: int | None = None  # internal entries
    text: str = ""  # as printed
    problem: bool = False

    @property
    def id(self) -> int:
        return key_parts(self.key)[0]

    @property
    def kind(self) -> int:
        return key_parts(self.key)[1]

    @property
    def sub(self) -> int:
        return key_parts(self.key)[2]


@dataclasses.dataclass
class Node:
    page: int
    level: int | None = None
    count: int = 0
    used: int = 0
    seq: int = 0
    crc: int = 0
    problem: str = ""
    entries: list = dataclasses.field(default_factory=list)

    def lines(self) -> list[str]:
        if self.level is None:
            return [f"node page={self.page}", f"  problem: {self.problem}"]
        out = [f"node page={self.page} level={self.level} count={self.count} used={self.used} "
               f"seq={self.seq} crc=0x{self.crc:08x}"]
        if self.problem:
            return out + [f"  problem: {self.problem}"]
        return out + [e.text for e in self.entries]


@dataclasses.dataclass
class Tree:
    root: int
    height: int
    nodes: list = dataclasses.field(default_factory=list)
    problems: int = 0
    stopped: bool = False  # more nodes than the volume holds
    unwritten: bool = False  # format left the volume unwritten: the root directory only

    @property
    def entries(self) -> list:
        return [e for n in self.nodes for e in n.entries]

    def leaf_entries(self) -> list:
        return [e for n in self.nodes if n.level == 0 for e in n.entries]

    def lines(self) -> list[str]:
        if self.unwritten:
            return ["tree: none yet (the volume was never written: an empty root directory)"]
        out = [f"tree from page {self.root}, height {self.height}"]
        for n in self.nodes:
            out += n.lines()
        if self.stopped:
            out.append("problem: more nodes than the volume holds: children shared or looping; "
                       "the walk stops")
        p = self.problems
        out.append(f"tree: {len(self.nodes)} nodes, {len(self.entries)} entries, "
                   f"{p} problem{'' if p == 1 else 's'}")
        return out


class _Walker:
    def __init__(self, img: Image, ck: Checkpoint):
        self.img, self.g, self.ck = img, img.geo, ck
        self.node_size = ck.header.node_size
        self.node_pages = self.node_size // self.g.page_size
        self.seg_base = ck.seg_base
        self.problems = 0

    def place(self, ref: int) -> str:
        g = self.g
        if ref >= g.seg_count * g.seg_pages:
            return "outside the volume"
        if ref % g.seg_pages + self.node_pages > g.seg_pages:
            return "crosses its segment"
        if ref // g.seg_pages < self.seg_base:
            return "in an anchor"
        return ""

    def header_problem(self, n: bytes, want: int) -> str:
        used = u16(n, 6)
        if u16(n, 0) != NODE_MAGIC:
            return f"bad magic 0x{u16(n, 0):04x}"
        if n[2] != NODE_VERSION:
            return f"bad version {n[2]}"
        if n[3] >= MAX_HEIGHT:
            return f"bad level {n[3]}"
        if used > self.node_size - NODE_HDR:
            return f"bad used {used}"
        crc = crc32(n[:12] + b"\0\0\0\0" + n[NODE_HDR:NODE_HDR + used])
        if crc != u32(n, 12):
            return f"bad crc (computed 0x{crc:08x})"
        if n[3] != want:
            return f"level {n[3]}, expected {want}"
        return ""

    @staticmethod
    def internal_problem(n: bytes) -> str:
        count, used = u16(n, 4), u16(n, 6)
        if count == 0 or used != count * NODE_IENT:
            return f"bad count {count} for used {used}"
        for i in range(count):
            e = NODE_HDR + i * NODE_IENT
            if i > 1 and u64(n, e) <= u64(n, e - NODE_IENT):
                return f"keys out of order at entry {i}"
            if u32(n, e + 8) & 0x80000000:
                return f"child of entry {i} names a cache slot"
        return ""

    @staticmethod
    def leaf_problem(n: bytes) -> str:
        count, used = u16(n, 4), u16(n, 6)
        off, prev = 0, 0
        for i in range(count):
            e = NODE_HDR + off
            if off + NODE_LEAF_HDR > used or off + NODE_LEAF_HDR + u16(n, e + 8) > used:
                return f"entry {i} overruns used"
            if i > 0 and u64(n, e) <= prev:
                return f"keys out of order at entry {i}"
            prev = u64(n, e)
            off += NODE_LEAF_HDR + u16(n, e + 8)
        if off != used:
            return f"entries end at {off}, used {used}"
        return ""

    def run_ok(self, fpage: int, phys: int, count: int) -> bool:
        g = self.g
        return (0 < count <= g.seg_pages and fpage <= SUB_MASK - count
                and self.seg_base <= phys // g.seg_pages < g.seg_count
                and phys // g.seg_pages == (phys + count - 1) // g.seg_pages)

    def tags_text(self, ident: int, fpage: int, phys: int, count: int) -> str:
        for i in range(count):
            t = parse_tag(self.img.spare(phys + i, TAG_LEN))
            why = ""
            if not t.valid:
                why = "no valid tag"
            elif t.id != ident or t.fpage != fpage + i:
                why = "another page's tag"
            if why:
                self.problems += 1
                return f" tags=bad page={phys + i} ({why})"
        return " tags=ok"

    def value_text(self, e: Entry) -> str:
        ident, kind, sub = key_parts(e.key)
        v = e.value
        bad = f" value={v.hex()} malformed"
        if kind == K_INODE:
            ring = len(v) == RING_INODE_LEN and v[1] & INODE_F_RING and v[0] == TYPE_FILE
            if not (len(v) == INODE_LEN and not v[1] & INODE_F_RING) and not ring:
                return bad
            s = (f" type={type_name(v[0])} flags=0x{v[1]:02x} parent={u32(v, 4)} "
                 f"size={i32(v, 8)} dsub=0x{u32(v, 12):08x}")
            return s + (f" capacity={u32(v, 16)} head={u32(v, 20)}" if ring else "")
        if (kind == K_DIRENT and sub & 15 != MARK_SLOT) or kind == K_DIROVF:
            if len(v) < DIRENT_HDR + 1 or len(v) != DIRENT_HDR + v[5]:
                return bad
            return (f" child={u32(v, 0)} type={type_name(v[4])} "
                    f"name={quote_name(v[DIRENT_HDR:])}")
        if kind == K_DIRENT and len(v) == MARK_VAL:
            return f" mark={u32(v, 0)}"
        if kind == K_EXTENT:
            if len(v) != EXTENT_VAL:
                return bad
            phys, count = u32(v, 0), u32(v, 4)
            s = f" fpage={sub} phys={phys} count={count}"
            if not self.run_ok(sub, phys, count):
                self.problems += 1
                return s + " bad-run"
            return s + (self.tags_text(ident, sub, phys, count) if self.g.tags else "")
        if kind == K_ORPHAN and not v:
            return " orphan"
        if kind == K_ATTR and len(v) <= ATTR_MAX:
            return f" value={v.hex()}"
        return bad

    def entries(self, n: bytes, level: int) -> list:
        out, off = [], 0
        for i in range(u16(n, 4)):
            if level > 0:
                e = NODE_HDR + i * NODE_IENT
                ent = Entry(u64(n, e), child=u32(n, e + 8))
                ent.text = f"  key={ent.key:016x} child={ent.child}"
            else:
                e = NODE_HDR + off
                vlen = u16(n, e + 8)
                ent = Entry(u64(n, e), n[e + NODE_LEAF_HDR:e + NODE_LEAF_HDR + vlen])
                off += NODE_LEAF_HDR + vlen
                ident, kind, sub = key_parts(ent.key)
                name = KIND_NAMES[kind] if kind < len(KIND_NAMES) else f"kind={kind}"
                before = self.problems
                ent.text = (f"  key={ent.key:016x} {name} id={ident} sub=0x{sub:07x}"
                            + self.value_text(ent))
                ent.problem = self.problems != before or ent.text.endswith("malformed")
            out.append(ent)
        return out

    def visit(self, ref: int, want: int) -> Node:
        node = Node(ref)
        why = self.place(ref)
        if why:
            node.problem = why
            self.problems += 1
            return node
        n = b"".join(self.img.page(ref + i) for i in range(self.node_pages))
        node.level, node.count, node.used, node.seq, node.crc = n[3], u16(n, 4), u16(n, 6), \
            u32(n, 8), u32(n, 12)
        why = self.header_problem(n, want) or (
            self.internal_problem(n) if want > 0 else self.leaf_problem(n))
        if why:
            node.problem = why
            self.problems += 1
            return node
        node.entries = self.entries(n, want)
        return node


def walk_tree(img: Image, ck: Checkpoint) -> Tree:
    """Every node from the root, depth first, children in entry order, each
    checked as FORMAT.md "Tree nodes" says; at most as many nodes as the volume
    holds."""
    h = ck.header
    w = _Walker(img, ck)
    t = Tree(h.root, h.height)
    if h.root == NONE32 and h.log_seg == NONE32:
        t.unwritten = True  # format left it unwritten: the empty tree, the root directory only
        return t
    max_nodes = img.geo.seg_count * img.geo.seg_pages // w.node_pages
    stack = []  # [node, next child] per depth
    root = w.visit(h.root, h.height - 1)
    t.nodes.append(root)
    if root.entries and h.height > 1:
        stack.append([root, 0])
    while stack:
        node, nxt = stack[-1]
        if nxt >= len(node.entries):
            stack.pop()
            continue
        stack[-1][1] += 1
        if len(t.nodes) >= max_nodes:
            t.stopped = True
            w.problems += 1
            break
        depth = len(stack)
        child = w.visit(node.entries[nxt].child, h.height - 1 - depth)
        t.nodes.append(child)
        if child.entries and h.height - 1 - depth > 0:
            stack.append([child, 0])
    t.problems = w.problems
    return t


# ---- dump ----

def dump_lines(img: Image, ck: Checkpoint | None = None, checkpoint: bool | None = None,
               journal: bool = False, tree: bool = False) -> tuple[list[str], int]:
    """The lines `cairn dump` prints (checkpoint: by default only when neither
    journal nor tree is asked), and the problems found."""
    ck = ck or find_checkpoint(img)
    if checkpoint is None:
        checkpoint = not journal and not tree
    out, problems = [], 0
    if checkpoint:
        out += checkpoint_lines(ck, img.geo.medium)
    if journal:
        j = read_journal(img, ck)
        out += j.lines()
        problems += len(j.problems)
    if tree:
        t = walk_tree(img, ck)
        out += t.lines()
        problems += t.problems
    return out, problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Decode a raw cairn image (docs/FORMAT.md) as "
                                 "`cairn dump` does. Exit 0, 1 problems found, 2 error.")
    ap.add_argument("image")
    ap.add_argument("--journal", action="store_true", help="the journal records")
    ap.add_argument("--tree", action="store_true", help="every tree node with its entries")
    ap.add_argument("--all", action="store_true", help="checkpoint, journal and tree")
    ap.add_argument("--medium", choices=("nor", "nand", "block"))
    ap.add_argument("--page", type=int, help="page size (default: the checkpoint's)")
    ap.add_argument("--spare", type=int, help="NAND: OOB bytes per page in the image")
    a = ap.parse_args(argv)
    try:
        img = Image.open(a.image, a.medium, a.page, a.spare)
        lines, problems = dump_lines(img, checkpoint=True if a.all else None,
                                     journal=a.journal or a.all, tree=a.tree or a.all)
    except (FormatError, OSError) as e:
        print(f"cairn.ondisk: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
