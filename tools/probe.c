/* Geometry detection and checkpoint decoding: see probe.h. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#define _DEFAULT_SOURCE

#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"


static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* CRC-32 as zlib (the core's cn_crc32). */
uint32_t probe_crc32(uint32_t crc, const uint8_t *p, size_t len)
{
    uint32_t k;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

const char *ckpt_state_name(uint8_t state)
{
    static const char *const names[] = {"free", "erased", "open", "full", "journal", "anchor", "bad"};
    return state < sizeof names / sizeof names[0] ? names[state] : "?";
}

const char *ckpt_flag_names(uint8_t flags, char *buf, size_t size)
{
    static const char *const names[] = {"nodes", "scrub", "failing", "stuck", "evict"};
    size_t i, used = 0;
    buf[0] = '\0';
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (flags & (1u << i)) {
            int n = snprintf(buf + used, size - used, "%s%s", used ? "," : "", names[i]);
            if (n > 0 && (size_t)n < size - used)
                used += (size_t)n;
        }
    if (flags & 0xE0u) {
        int n = snprintf(buf + used, size - used, "%s0x%02x", used ? "," : "", flags & 0xE0u);
        if (n > 0 && (size_t)n < size - used)
            used += (size_t)n;
    }
    if (used == 0)
        snprintf(buf, size, "-");
    return buf;
}

const char *ckpt_head_name(uint32_t h, char *buf, size_t size)
{
    if (h == 0)
        snprintf(buf, size, "meta");
    else if (h == 1)
        snprintf(buf, size, "cold");
    else
        snprintf(buf, size, "data%u", (unsigned)(h - 2));
    return buf;
}

/* Byte i of the magic as it lies on flash. */
static uint8_t magic_byte(uint32_t i) { return (uint8_t)(CN_CK_MAGIC >> (8 * i)); }

int ckpt_parse_header(const uint8_t *b, struct ckpt_hdr *h)
{
    uint32_t i;
    if (le32(b + CN_CK_O_MAGIC) != CN_CK_MAGIC)
        return -1;
    memset(h, 0, sizeof *h);
    h->version = le16(b + CN_CK_O_VERSION);
    h->flags = b[CN_CK_O_FLAGS];
    h->session = b[CN_CK_O_SESSION];
    h->seq = le32(b + CN_CK_O_SEQ);
    h->length = le32(b + CN_CK_O_LENGTH);
    h->crc = le32(b + CN_CK_O_CRC);
    h->page_size = le32(b + CN_CK_O_PAGE_SIZE);
    h->seg_pages = le32(b + CN_CK_O_SEG_PAGES);
    h->seg_count = le32(b + CN_CK_O_SEG_COUNT);
    h->node_size = le32(b + CN_CK_O_NODE_SIZE);
    h->root = le32(b + CN_CK_O_ROOT);
    h->height = le32(b + CN_CK_O_HEIGHT);
    h->next_id = le32(b + CN_CK_O_NEXT_ID);
    h->log_seg = le32(b + CN_CK_O_LOG_SEG);
    h->log_off = le32(b + CN_CK_O_LOG_OFF);
    h->log_seq = le32(b + CN_CK_O_LOG_SEQ);
    h->clock = le32(b + CN_CK_O_CLOCK);
    for (i = 0; i < CN_CK_HEADS; i++) {
        h->head_seg[i] = le32(b + CN_CK_O_HEADS + 8 * i);
        h->head_page[i] = le32(b + CN_CK_O_HEADS + 4 + 8 * i);
    }
    if (h->version < CN_CK_VERSION_OLDEST || h->version > CN_CK_VERSION ||
        h->page_size < 128 || h->page_size > 65536 || h->page_size % 8 || h->seg_pages == 0 || h->seg_pages > 65535 ||
        h->seg_count < CN_MIN_SEGS || (uint64_t)h->seg_pages * h->seg_count >= 0x80000000u ||
        h->length != CN_CK_HDR + CN_CK_ENTRY * h->seg_count ||
        h->node_size % h->page_size || h->node_size < 1024 || h->node_size > 65536 ||
        h->height == 0 || h->height > CN_MAX_HEIGHT)
        return -1;
    return 0;
}

int ckpt_clean(const struct ckpt_hdr *h)
{
    return (h->flags & CN_CK_F_CLEAN) && h->session == 0xFF;
}

static uint32_t ckpt_pages_of(const struct ckpt_hdr *h)
{
    return (h->length + h->page_size - 1) / h->page_size;
}

/* Does the checkpoint whose first page is image page k (pages `stride` bytes
 * apart) verify? 1 yes, 0 no, -1 on a read error. */
static int verify_at(detect_read_fn rd, void *arg, const struct ckpt_hdr *h, uint64_t k,
                     uint32_t stride)
{
    uint32_t ps = h->page_size, j, n = ckpt_pages_of(h), crc = 0;
    uint8_t *page = (uint8_t *)malloc(ps);
    int ok = 1;
    if (page == NULL)
        return -1;
    for (j = 0; j < n && ok == 1; j++) {
        uint32_t len = h->length - j * ps < ps ? h->length - j * ps : ps;
        if (rd(arg, (k + j) * stride, page, ps) < 0) {
            ok = -1;
            break;
        }
        if (j == 0) {
            struct ckpt_hdr again;
            if (ckpt_parse_header(page, &again) < 0 || again.seq != h->seq) {
                ok = 0;
                break;
            }
            memset(page + CN_CK_O_CRC, 0, 4);
            page[CN_CK_O_SESSION] = 0; /* outside the CRC */
        }
        crc = probe_crc32(crc, page, len);
    }
    free(page);
    if (ok == 1 && crc != h->crc)
        ok = 0;
    return ok;
}

/* Could the image's first page start a cairn volume of this geometry (when
 * the checkpoint found is in a later segment)? Erased, a checkpoint of the
 * same geometry or a torn one (bits of the magic still set), or a NAND
 * block marked bad. 1 yes, 0 no, -1 on a read error. */
static int plausible_start(detect_read_fn rd, void *arg, const struct ckpt_hdr *h,
                           uint32_t oob)
{
    uint32_t ps = h->page_size, i;
    uint8_t *page = (uint8_t *)malloc((size_t)ps + oob);
    struct ckpt_hdr other;
    int ok = 1;
    if (page == NULL)
        return -1;
    if (rd(arg, 0, page, (size_t)ps + oob) < 0) {
        free(page);
        return -1;
    }
    for (i = 0; i < ps && page[i] == 0xFF; i++)
        ;
    if (i < ps && !(oob > 0 && page[ps] != 0xFF)) {
        if (ckpt_parse_header(page, &other) == 0)
            ok = other.page_size == h->page_size && other.seg_pages == h->seg_pages &&
                 other.seg_count == h->seg_count;
        else
            for (i = 0; i < 4 && ok; i++)
                ok = (page[i] & magic_byte(i)) == magic_byte(i);
    }
    free(page);
    return ok;
}

static void set_err(char *err, size_t errlen, const char *fmt, unsigned long long a,
                    unsigned long long b, unsigned long long c)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, a, b, c);
}

struct layout {
    uint32_t oob;
    int nand; /* 1 NAND (even with oob 0 when the user said so) */
};

/* A NAND dump whose erase blocks run past the volume's last whole segment
 * (cairn's zero config leaves them unused: DESIGN.md "Segment size"): the
 * OOB bytes per page, of the usual page / 32, / 64, / 16, / 8, that make the
 * image whole pages with fewer than a segment's past the volume; 0: none. */
static const uint32_t oob_per[] = {32, 64, 16, 8}; /* usual OOB: page / these */

static uint32_t nand_oob_with_tail(const struct ckpt_hdr *h, uint64_t avail)
{
    uint64_t pages = (uint64_t)h->seg_pages * h->seg_count;
    uint32_t i;
    for (i = 0; i < sizeof oob_per / sizeof oob_per[0]; i++) {
        uint64_t stride = h->page_size + h->page_size / oob_per[i];
        if (avail % stride == 0 && avail / stride > pages && avail / stride - pages < h->seg_pages)
            return (uint32_t)(h->page_size / oob_per[i]);
    }
    return 0;
}

/* Is this OOB size a usual one? Whole-page layouts whose OOB is not come
 * after a tail layout with a usual one: a checkpoint at page 0 verifies in
 * any stride, so the order decides (a 16-block dump of 2 KiB pages with one
 * block past the volume reads as 196 OOB bytes a page, and then as corrupt). */
static int usual_oob(uint32_t page_size, uint32_t oob)
{
    uint32_t i;
    for (i = 0; i < sizeof oob_per / sizeof oob_per[0]; i++)
        if (oob == page_size / oob_per[i])
            return 1;
    return 0;
}

/* The NAND layouts with whole pages and with a tail (above), in the order to
 * verify them; returns how many were added at out[n...]. */
static int nand_layouts(const struct ckpt_hdr *h, uint64_t avail, uint64_t pages, int whole_ok,
                        struct layout *out)
{
    uint32_t whole = whole_ok ? (uint32_t)(avail / pages - h->page_size) : 0;
    uint32_t tail = nand_oob_with_tail(h, avail);
    int n = 0, i;
    if (whole_ok && (usual_oob(h->page_size, whole) || tail == 0))
        out[n++].oob = whole;
    if (tail != 0)
        out[n++].oob = tail;
    if (whole_ok && !usual_oob(h->page_size, whole) && tail != 0)
        out[n++].oob = whole;
    for (i = 0; i < n; i++)
        out[i].nand = 1;
    return n;
}

/* The layouts to try for a header, best first (see docs/TOOL.md). Returns
 * their count; 0 with a message in err when the geometry is ambiguous or the
 * image cannot hold the volume. */
static int layouts(const struct ckpt_hdr *h, uint64_t avail, const struct detect_hints *hn,
                   struct layout *out, char *err, size_t errlen)
{
    uint64_t pages = (uint64_t)h->seg_pages * h->seg_count;
    uint64_t flat = pages * h->page_size;
    int n = 0;
    if (hn->page && hn->page != h->page_size) {
        set_err(err, errlen, "the checkpoint says %llu-byte pages, --page says %llu", h->page_size,
                hn->page, 0);
        return 0;
    }
    if (hn->size && hn->size != flat) {
        set_err(err, errlen, "the checkpoint says a volume of %llu bytes, --size says %llu", flat,
                hn->size, 0);
        return 0;
    }
    if (hn->block && ((uint64_t)h->seg_pages * h->page_size) % hn->block) {
        set_err(err, errlen, "--block %llu does not divide the checkpoint's segment (%llu bytes)",
                hn->block, (uint64_t)h->seg_pages * h->page_size, 0);
        return 0;
    }
    if (hn->medium == CAIRN_MEDIUM_NAND) {
        if (hn->have_oob) {
            out[n].oob = hn->oob;
            out[n++].nand = 1;
        } else {
            n = nand_layouts(h, avail, pages, avail % pages == 0 && avail / pages >= h->page_size,
                             out);
        }
        if (n == 0) {
            set_err(err, errlen,
                    "NAND image of %llu bytes is not %llu pages of data + OOB: give --spare "
                    "(OOB bytes per page) or --size",
                    avail, pages, 0);
            return 0;
        }
    } else if (hn->medium || hn->block_device || (hn->have_oob && hn->oob == 0)) {
        out[n].oob = 0;
        out[n++].nand = 0;
    } else if (hn->have_oob) {
        out[n].oob = hn->oob;
        out[n++].nand = 1;
    } else {
        if (avail == flat) {
            out[n].oob = 0;
            out[n++].nand = 0;
        } else {
            n = nand_layouts(h, avail, pages,
                             avail % pages == 0 && avail / pages > h->page_size &&
                                 avail / pages - h->page_size <= h->page_size / 4,
                             out);
        }
        if (avail > flat && (n == 0 || out[0].nand)) { /* a volume at the start of a longer image */
            out[n].oob = 0;
            out[n++].nand = 0;
        }
    }
    { /* keep those the image can hold */
        int i, kept = 0;
        for (i = 0; i < n; i++)
            if (avail >= pages * ((uint64_t)h->page_size + out[i].oob))
                out[kept++] = out[i];
        if (kept == 0)
            set_err(err, errlen,
                    "the image (%llu bytes) is shorter than the volume its checkpoint describes "
                    "(%llu pages of %llu bytes of data): truncated, or the wrong --offset",
                    avail, pages, h->page_size);
        n = kept;
    }
    return n;
}

/* The geometry for a verified header and layout. */
static int make_geometry(const struct ckpt_hdr *h, const struct layout *l,
                         const struct detect_hints *hn, struct detect_result *out, char *err,
                         size_t errlen)
{
    struct cairn_geometry *g = &out->geo;
    uint32_t seg_bytes = h->seg_pages * h->page_size;
    memset(g, 0, sizeof *g);
    g->page_size = h->page_size;
    g->pages_per_block = hn->block ? hn->block / h->page_size : h->seg_pages;
    if (g->pages_per_block == 0 || h->seg_pages % g->pages_per_block) {
        set_err(err, errlen, "--block %llu is not a whole number of pages dividing the segment",
                hn->block, 0, 0);
        return -1;
    }
    g->blocks_per_lblock = h->seg_pages / g->pages_per_block;
    g->block_count = h->seg_count * g->blocks_per_lblock;
    out->oob = l->oob;
    if (l->nand) {
        g->medium = CAIRN_MEDIUM_NAND;
        g->max_partial_programs = 1;
    } else if (hn->medium) {
        g->medium = hn->medium;
    } else if (hn->block_device || h->page_size == 512) {
        g->medium = CAIRN_MEDIUM_BLOCK;
    } else if (h->page_size == 256) {
        g->medium = CAIRN_MEDIUM_NOR;
    } else {
        set_err(err, errlen,
                "flat image with %llu-byte pages: NOR or SD/eMMC? give --medium nor or "
                "--medium block (or --medium nand --spare 0 for NAND without OOB)",
                h->page_size, 0, 0);
        return -1;
    }
    if (g->medium == CAIRN_MEDIUM_BLOCK) {
        g->write_unit = 262144;
        while (g->write_unit > g->page_size && seg_bytes % g->write_unit)
            g->write_unit /= 2;
        if (g->write_unit <= g->page_size)
            g->write_unit = 0;
    }
    return 0;
}

int detect_geometry(detect_read_fn rd, void *arg, uint64_t avail, const struct detect_hints *hints,
                    struct detect_result *out, detect_progress_fn progress, void *parg,
                    char *err, size_t errlen)
{
    const size_t chunk = 1u << 20;
    uint64_t limit = avail < DETECT_SCAN_MAX ? avail : DETECT_SCAN_MAX, base;
    uint8_t *buf = (uint8_t *)malloc(chunk + CN_CK_HDR);
    char why[256] = "";
    int found_header = 0;
    if (buf == NULL) {
        set_err(err, errlen, "out of memory", 0, 0, 0);
        return -1;
    }
    for (base = 0; base < limit; base += chunk) {
        size_t len = limit - base < chunk + CN_CK_HDR ? (size_t)(limit - base)
                                                            : chunk + CN_CK_HDR;
        size_t i, scan = len < chunk ? len : chunk;
        if (rd(arg, base, buf, len) < 0) {
            set_err(err, errlen, "read error at image byte %llu", base, 0, 0);
            free(buf);
            return -1;
        }
        if (progress)
            progress(parg, base, limit);
        for (i = 0; i < scan && i + CN_CK_HDR <= len; i++) {
            struct ckpt_hdr h;
            struct layout l[4];
            int n, j;
            if (buf[i] != magic_byte(0) || le32(buf + i) != CN_CK_MAGIC ||
                ckpt_parse_header(buf + i, &h) < 0)
                continue;
            found_header = 1;
            n = layouts(&h, avail, hints, l, why, sizeof why);
            for (j = 0; j < n; j++) {
                uint32_t stride = h.page_size + l[j].oob;
                uint64_t pos = base + i, k = pos / stride;
                uint32_t copy_pages = ckpt_pages_of(&h);
                int ok;
                if (pos % stride || k >= (uint64_t)h.seg_pages * h.seg_count ||
                    (k % h.seg_pages) % copy_pages) {
                    snprintf(why, sizeof why,
                             "a checkpoint at image byte %llu is not where a %s image puts one: "
                             "%s",
                             (unsigned long long)pos, l[j].nand ? "NAND" : "flat",
                             l[j].nand ? "check --spare (OOB bytes per page) and --offset"
                                       : "a NAND image with OOB? give --medium nand and --spare "
                                         "(OOB bytes per page); else check --offset");
                    continue;
                }
                ok = verify_at(rd, arg, &h, k, stride);
                if (ok < 0) {
                    set_err(err, errlen, "read error at image byte %llu", pos, 0, 0);
                    free(buf);
                    return -1;
                }
                if (!ok) {
                    snprintf(why, sizeof why, "the checkpoint at image byte %llu fails its CRC",
                             (unsigned long long)pos);
                    continue;
                }
                if (k >= h.seg_pages) {
                    ok = plausible_start(rd, arg, &h, l[j].oob);
                    if (ok < 0) {
                        set_err(err, errlen, "read error at image byte 0", 0, 0, 0);
                        free(buf);
                        return -1;
                    }
                    if (!ok) {
                        snprintf(why, sizeof why,
                                 "a checkpoint is at image byte %llu (in segment %llu), but the "
                                 "image does not start with a cairn segment: if the volume "
                                 "starts %llu bytes further, add that to --offset",
                                 (unsigned long long)pos,
                                 (unsigned long long)(k / h.seg_pages),
                                 (unsigned long long)(pos - (k % h.seg_pages) * stride));
                        continue;
                    }
                }
                out->found_at = pos;
                out->hdr = h;
                free(buf);
                if (progress)
                    progress(parg, limit, limit);
                return make_geometry(&h, &l[j], hints, out, err, errlen);
            }
        }
    }
    free(buf);
    if (progress)
        progress(parg, limit, limit);
    if (found_header && why[0])
        snprintf(err, errlen, "%s", why);
    else
        snprintf(err, errlen,
                 "no cairn checkpoint in the first %llu bytes: not a cairn image (version %u), "
                 "or the wrong --offset",
                 (unsigned long long)limit, (unsigned)CAIRN_DISK_VERSION);
    return -1;
}

/* ---- the newest checkpoint through the device ---- */

static int seg_good(struct cairn_dev *dev, uint32_t seg, uint32_t bpl)
{
    uint32_t i;
    if (dev->is_bad == NULL)
        return 1;
    for (i = 0; i < bpl; i++)
        if (dev->is_bad(dev->ctx, seg * bpl + i) != 0)
            return 0;
    return 1;
}

/* Reads the checkpoint copy starting at `page` into buf (length bytes) and
 * verifies it. 1 valid, 0 not. */
static int read_copy(struct cairn_dev *dev, uint32_t page, uint32_t ckpt_pages, uint8_t *buf,
                     uint32_t buf_len, uint8_t *pagebuf, const struct ckpt_hdr *want,
                     struct ckpt_hdr *h)
{
    uint32_t ps = dev->geo.page_size, j, crc;
    if (dev->read(dev->ctx, page, 0, pagebuf, ps) < 0 || ckpt_parse_header(pagebuf, h) < 0 ||
        h->page_size != ps || h->seg_pages != want->seg_pages ||
        h->seg_count != want->seg_count || h->length > buf_len)
        return 0;
    for (j = 0; j < ckpt_pages; j++) {
        uint32_t off = j * ps, n = h->length - off < ps ? h->length - off : ps;
        if (j > 0 && dev->read(dev->ctx, page + j, 0, pagebuf, ps) < 0)
            return 0;
        memcpy(buf + off, pagebuf, n);
    }
    memset(buf + CN_CK_O_CRC, 0, 4);
    buf[CN_CK_O_SESSION] = 0; /* outside the CRC */
    crc = probe_crc32(0, buf, h->length);
    return crc == h->crc;
}

int ckpt_find_newest(struct cairn_dev *dev, uint32_t seg_pages, uint32_t seg_count,
                     struct ckpt *out, char *err, size_t errlen)
{
    struct ckpt_hdr want, h;
    uint32_t ps = dev->geo.page_size, copies = dev->geo.medium == CAIRN_MEDIUM_NAND ? 2u : 1u;
    uint32_t bpl = seg_pages / dev->geo.pages_per_block, length, a, s, c, found = 0, seg;
    uint8_t *buf, *pagebuf;
    memset(out, 0, sizeof *out);
    memset(&want, 0, sizeof want);
    want.seg_pages = seg_pages;
    want.seg_count = seg_count;
    length = CN_CK_HDR + CN_CK_ENTRY * seg_count;
    out->ckpt_pages = (length + ps - 1) / ps;
    out->slots = seg_pages / (out->ckpt_pages * copies);
    for (a = 0, seg = 0; a < 2 && seg < seg_count; seg++)
        if (seg_good(dev, seg, bpl ? bpl : 1))
            out->anchor[a++] = seg;
    if (a < 2 || out->slots == 0) {
        snprintf(err, errlen, "no two good segments for the anchors");
        return -1;
    }
    buf = (uint8_t *)malloc((size_t)out->ckpt_pages * ps);
    pagebuf = (uint8_t *)malloc(ps);
    if (buf == NULL || pagebuf == NULL) {
        free(buf);
        free(pagebuf);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (a = 0; a < 2; a++)
        for (s = 0; s < out->slots; s++)
            for (c = 0; c < copies; c++) {
                uint32_t page = out->anchor[a] * seg_pages + (s * copies + c) * out->ckpt_pages;
                if (!read_copy(dev, page, out->ckpt_pages, buf, out->ckpt_pages * ps, pagebuf,
                               &want, &h))
                    continue;
                out->valid[a]++;
                if (!found || (int32_t)(h.seq - out->h.seq) > 0) {
                    uint32_t i;
                    struct ckpt_seg *segs = out->segs;
                    if (segs == NULL)
                        segs = (struct ckpt_seg *)calloc(seg_count, sizeof *segs);
                    if (segs == NULL)
                        break;
                    for (i = 0; i < seg_count; i++) {
                        const uint8_t *e = buf + CN_CK_HDR + CN_CK_ENTRY * i;
                        segs[i].erase_count = le32(e + CN_CK_E_ERASES);
                        segs[i].stamp = le32(e + CN_CK_E_STAMP);
                        segs[i].live = le16(e + CN_CK_E_LIVE);
                        segs[i].state = e[CN_CK_E_STATE];
                        segs[i].flags = e[CN_CK_E_FLAGS];
                    }
                    out->segs = segs;
                    out->h = h;
                    out->anchor_index = a;
                    out->slot = s;
                    out->copy = c;
                    found = 1;
                }
                break; /* one copy of a slot is enough */
            }
    free(buf);
    free(pagebuf);
    if (!found) {
        snprintf(err, errlen, "no valid checkpoint in the anchors (segments %u and %u)",
                 (unsigned)out->anchor[0], (unsigned)out->anchor[1]);
        return -1;
    }
    return 0;
}

void ckpt_free(struct ckpt *c)
{
    free(c->segs);
    c->segs = NULL;
}
