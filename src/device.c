/* The core's only door to the device: bounds every request against the
 * geometry (so corrupted metadata can never send I/O outside the volume),
 * splits requests at erase-block boundaries, and maps driver results to
 * cairn errors. */
#include "cn.h"

static int map_result(int r)
{
    if (r == CAIRN_DEV_OK || r == CAIRN_DEV_CORRECTED)
        return 0;
    return CAIRN_ERR_IO;
}

/* A failed program or erase wears the segment out: its data is moved and
 * the segment retired (seg.c, gc.c). */
static int note_result(cairn *fs, uint32_t page, int r)
{
    uint32_t s = page / fs->seg_pages;
    if (s < fs->seg_count && (r == CAIRN_DEV_PROG_FAIL || r == CAIRN_DEV_ERASE_FAIL))
        cn_seg_add_flags(&fs->segs[s], CN_SF_FAILING);
    return map_result(r);
}

/* A corrected read schedules a scrub: the segment's data moves soon. The
 * flag alone tells a head writing there to move on when it next takes pages
 * (alloc.c need_segment), so that the segment can be collected. */
static int note_read(cairn *fs, uint32_t page, int r)
{
    uint32_t s = page / fs->seg_pages;
    if (r == CAIRN_DEV_CORRECTED && s >= fs->seg_base && s < fs->seg_count)
        cn_seg_add_flags(&fs->segs[s], CN_SF_SCRUB);
    return map_result(r);
}

static int in_volume(const cairn *fs, uint32_t page, uint32_t off, uint32_t len)
{
    uint64_t total = (uint64_t)fs->seg_count * fs->seg_pages * fs->page_size;
    uint64_t start = (uint64_t)page * fs->page_size + off;
    return start <= total && len <= total - start;
}

int cn_dev_read(cairn *fs, uint32_t page, uint32_t off, void *buf, uint32_t len)
{
    struct cairn_dev *d = fs->dev;
    uint32_t ppb = d->geo.pages_per_block;
    uint8_t *out = (uint8_t *)buf;
    if (!in_volume(fs, page, off, len))
        return CAIRN_ERR_CORRUPT;
    page += off / fs->page_size;
    off %= fs->page_size;
    while (len > 0) { /* NAND reads stop at the erase block's end */
        uint32_t room = (ppb - page % ppb) * fs->page_size - off;
        uint32_t n = len < room || fs->medium != CAIRN_MEDIUM_NAND ? len : room;
        int r = d->read(d->ctx, page, off, out, n);
        if (r != CAIRN_DEV_OK)
            r = note_read(fs, page, r);
        if (r < 0)
            return r;
        out += n;
        len -= n;
        page += (off + n) / fs->page_size;
        off = (off + n) % fs->page_size;
    }
    return 0;
}

/* Pages [page, +pages) are about to change on flash: the read-ahead window
 * (cache.c fills it into node slots) no longer holds what they will. */
static void ra_forget(cairn *fs, uint32_t page, uint32_t pages)
{
    if (fs->ra_pages && page < fs->ra_phys + fs->ra_pages && page + pages > fs->ra_phys)
        fs->ra_pages = 0;
}

static int erase_block(cairn *fs, uint32_t seg, uint32_t i)
{
    struct cairn_dev *d = fs->dev;
    uint32_t ppb = d->geo.pages_per_block;
    ra_forget(fs, seg * fs->seg_pages + i * ppb, ppb);
    fs->call_erases = (uint16_t)(fs->call_erases + (fs->call_erases < 0xFFFFu));
    return note_result(fs, seg * fs->seg_pages, d->erase(d->ctx, seg * (fs->seg_pages / ppb) + i));
}

/* ---- erase fronts ---- */

static uint32_t blocks_per_seg(const cairn *fs)
{
    return fs->seg_pages / fs->dev->geo.pages_per_block;
}

static struct cn_front *front_find(const cairn *fs, uint32_t seg)
{
    uint32_t i;
    for (i = 0; i < CN_FRONTS; i++)
        if (fs->fronts[i].seg == seg)
            return &fs->fronts[i];
    return NULL;
}

/* Erase blocks from segment seg's start known erased: its front, or the
 * whole segment when it has none (erased whole, or written no further). */
uint32_t cn_dev_front(const cairn *fs, uint32_t seg)
{
    const struct cn_front *f = front_find(fs, seg);
    return f != NULL ? f->erased : blocks_per_seg(fs);
}

/* A front no writer can use any more: its segment is neither written by a
 * head or the journal nor an anchor (the writer moved on, the segment was
 * freed). Stale fronts are reused when the table is full. */
static int front_stale(const cairn *fs, const struct cn_front *f)
{
    unsigned st = fs->segs[f->seg].state;
    return st != CN_SEG_OPEN && st != CN_SEG_LOG && st != CN_SEG_ANCHOR;
}

void cn_dev_set_front(cairn *fs, uint32_t seg, uint32_t erased)
{
    struct cn_front *f = front_find(fs, seg);
    uint32_t i;
    if (erased >= blocks_per_seg(fs)) { /* erased whole: no front */
        if (f != NULL)
            f->seg = CN_NONE;
        return;
    }
    for (i = 0; i < CN_FRONTS && f == NULL; i++)
        if (fs->fronts[i].seg == CN_NONE)
            f = &fs->fronts[i];
    for (i = 0; i < CN_FRONTS && f == NULL; i++)
        if (front_stale(fs, &fs->fronts[i]))
            f = &fs->fronts[i];
    /* more part-erased segments than writers and anchors: cannot happen
     * (CN_FRONTS counts them all) */
    CN_ASSERT(f != NULL);
    if (f == NULL)
        f = &fs->fronts[0];
    f->seg = seg;
    f->erased = erased;
}

/* A segment handed out lazily (cn_seg_alloc) has only its first erase block
 * erased: the blocks that pages [page, page + npages) reach and that are not
 * erased yet are erased now, in order. One program call so erases at most
 * the blocks it writes into, and a sequential writer one block per block it
 * fills. The erase count grows once per segment (seg.c counts it). */
static int erase_ahead(cairn *fs, uint32_t page, uint32_t npages)
{
    uint32_t ppb = fs->dev->geo.pages_per_block;
    uint32_t seg = page / fs->seg_pages, last, to;
    if (seg >= fs->seg_count)
        return 0;
    to = cn_dev_front(fs, seg);
    last = (page % fs->seg_pages + (npages ? npages : 1) - 1) / ppb;
    /* I3: an anchor is erased whole before its first slot is programmed
     * (ckpt.c: at once or a block a call), so an erase here never reaches
     * the slots of the newest checkpoint */
    CN_ASSERT(to > last || fs->segs[seg].state != CN_SEG_ANCHOR);
    while (to <= last) {
        int err = erase_block(fs, seg, to);
        if (err)
            return err;
        cn_dev_set_front(fs, seg, ++to);
    }
    return 0;
}

int cn_dev_prog(cairn *fs, uint32_t page, uint32_t off, const void *buf,
                uint32_t len, const void *spare, uint32_t spare_len)
{
    struct cairn_dev *d = fs->dev;
    uint32_t ppb = d->geo.pages_per_block;
    const uint8_t *in = (const uint8_t *)buf;
    int err;
    if (fs->read_only)
        return CAIRN_ERR_ROFS;
    if (!in_volume(fs, page, off, len))
        return CAIRN_ERR_CORRUPT;
    page += off / fs->page_size;
    off %= fs->page_size;
    err = erase_ahead(fs, page, (off + len + fs->page_size - 1) / fs->page_size);
    if (err)
        return err;
    {
        uint32_t n = fs->call_pages + (off + len + fs->page_size - 1) / fs->page_size;
        fs->call_pages = (uint16_t)(n < 0xFFFFu ? n : 0xFFFFu);
    }
    ra_forget(fs, page, (off + len + fs->page_size - 1) / fs->page_size);
    if (off + len <= fs->page_size)
        return note_result(fs, page, d->prog(d->ctx, page, off, in, len, spare, spare_len));
    while (len > 0) { /* whole pages from here on: off is 0 */
        uint32_t room = (ppb - page % ppb) * fs->page_size;
        uint32_t unit = d->geo.write_unit / fs->page_size;
        /* BLOCK: no write straddles two of the medium's preferred units */
        if (fs->medium == CAIRN_MEDIUM_BLOCK && unit > 1 &&
            room > (unit - page % unit) * fs->page_size)
            room = (unit - page % unit) * fs->page_size;
        uint32_t n = len < room ? len : room;
        int r = d->prog(d->ctx, page, 0, in, n, NULL, 0);
        if (r < 0)
            return note_result(fs, page, r);
        in += n;
        len -= n;
        page += n / fs->page_size;
    }
    return 0;
}

int cn_dev_erase_seg(cairn *fs, uint32_t seg)
{
    struct cairn_dev *d = fs->dev;
    uint32_t bpl = blocks_per_seg(fs);
    uint32_t i;
    if (fs->read_only)
        return CAIRN_ERR_ROFS;
    if (seg >= fs->seg_count)
        return CAIRN_ERR_CORRUPT;
    ra_forget(fs, seg * fs->seg_pages, fs->seg_pages);
    fs->call_erases = (uint16_t)(fs->call_erases + (fs->call_erases < 0xFFFFu));
    for (i = 0; i < bpl; i++) {
        int r = d->erase(d->ctx, seg * bpl + i);
        if (r < 0)
            return note_result(fs, seg * fs->seg_pages, r);
    }
    cn_dev_set_front(fs, seg, bpl);
    return 0;
}

/* Idle time: erase the next block of a lazily erased segment that a writer
 * is filling (nothing lives past its front: writers fill blocks in order). */
int cn_dev_erase_next(cairn *fs, uint32_t seg)
{
    uint32_t to;
    int err;
    if (fs->read_only)
        return CAIRN_ERR_ROFS;
    if (seg >= fs->seg_count || (to = cn_dev_front(fs, seg)) >= blocks_per_seg(fs))
        return CAIRN_ERR_CORRUPT;
    err = erase_block(fs, seg, to);
    if (err == 0)
        cn_dev_set_front(fs, seg, to + 1u);
    return err;
}

/* Erase a segment's first block only; the others are erased when a program
 * first reaches them (erase_ahead). */
int cn_dev_erase_first(cairn *fs, uint32_t seg)
{
    int err;
    if (fs->read_only)
        return CAIRN_ERR_ROFS;
    if (seg >= fs->seg_count)
        return CAIRN_ERR_CORRUPT;
    cn_dev_set_front(fs, seg, 0);
    err = erase_block(fs, seg, 0);
    if (err == 0)
        cn_dev_set_front(fs, seg, 1);
    return err;
}

/* Erase block i of an anchor (ckpt.c: the blocks after the first of an anchor
 * left behind, last one first). Its front does not move (ckpt.c keeps it). */
int cn_dev_erase_block(cairn *fs, uint32_t seg, uint32_t i)
{
    if (fs->read_only)
        return CAIRN_ERR_ROFS;
    if (seg >= fs->seg_count || i >= fs->seg_pages / fs->dev->geo.pages_per_block)
        return CAIRN_ERR_CORRUPT;
    return erase_block(fs, seg, i);
}

/* Do bytes [off, off + len) of a page read erased (0xFF), and its spare
 * tag, on media that tag data pages? buf (len bytes) is the caller's. An
 * unreadable page counts as written: cairn programs only pages it knows to
 * be erased (invariant I4). */
int cn_dev_blank(cairn *fs, uint32_t page, uint32_t off, uint8_t *buf, uint32_t len,
                 int *blank)
{
    struct cairn_dev *d = fs->dev;
    uint32_t i;
    int err = cn_dev_read(fs, page, off, buf, len);
    *blank = 0;
    if (err)
        return err == CAIRN_ERR_IO ? 0 : err;
    for (i = 0; i < len; i++)
        if (buf[i] != 0xFF)
            return 0;
    if (fs->spare_tags) {
        uint8_t tag[CN_TAG_LEN];
        if (d->read_spare(d->ctx, page, tag, CN_TAG_LEN) < 0)
            return 0;
        for (i = 0; i < CN_TAG_LEN; i++)
            if (tag[i] != 0xFF)
                return 0;
    }
    *blank = 1;
    return 0;
}

int cn_dev_sync(cairn *fs)
{
    struct cairn_dev *d = fs->dev;
    if (d->sync == NULL || fs->read_only)
        return 0;
    return map_result(d->sync(d->ctx));
}
