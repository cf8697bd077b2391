/* The journal: records appended after the last checkpoint, replayed at mount.
 * Record layout and payloads: docs/FORMAT.md "Journal". The journal is a byte
 * stream through a chain of segments (a NEXT record names the following one).
 * - NOR: records pack back to back across page boundaries; a flush programs
 *   only the new bytes (NOR takes a page in pieces), so a synced 32-byte
 *   record costs about its own size.
 * - NAND and BLOCK ("paged"): a page is programmed once. A record never
 *   crosses a page; a flush closes the page with a PAD record, and fewer than
 *   a header's bytes left at a page end are skipped by the reader. */
#include "cn.h"

static int paged(const cairn *fs) { return fs->medium != CAIRN_MEDIUM_NOR; }
static uint32_t seg_bytes(const cairn *fs) { return fs->seg_pages * fs->page_size; }
static uint32_t limit(const cairn *fs)
{
    return seg_bytes(fs) - (paged(fs) ? fs->page_size : CN_REC_HDR + CN_RL_NEXT);
}

/* Journal pages kept for records that free space (CN_FREEING_SPACE). */
#define CN_LOG_KEEP_PAGES 2u

/* Would a record ending at byte `end` of the journal's segment go past where
 * it must stop? Down at the user reserve with no dead segment, the journal
 * may soon neither continue in a fresh segment (GC may take the free ones
 * down to the recovery's floor) nor roll over into a dead one: the last
 * pages of its segment are then kept for records that free space, and a
 * record that does not stops short and switches while it can. Before, on
 * nand-dhara (4 MiB) synced 512 B appends to a second file filled the
 * journal's segment at 2 free segments with none dead, and removing that file
 * got NOSPC, as did every remove after (test_bd "full volume"). The segment
 * counts are scans: asked only within the kept pages. */
static int past_end(const cairn *fs, uint32_t end)
{
    uint32_t lim = limit(fs), keep = CN_LOG_KEEP_PAGES * fs->page_size;
    if (end > lim)
        return 1;
    if (lim <= 4u * keep || end <= lim - keep || fs->freeing == CN_FREEING_SPACE)
        return 0; /* (a small segment keeps nothing) */
    return cn_free_segs(fs) <= CN_RESERVE_SEGS && cn_dead_segs(fs) == 0;
}
static uint32_t log_page(const cairn *fs) { return fs->log.seg * fs->seg_pages + fs->log.off / fs->page_size; }

/* NOR: program the bytes appended to the current page since the last flush. */
static int program_current(cairn *fs)
{
    uint32_t ps = fs->page_size, start = fs->log.off - fs->log.off % ps;
    uint32_t from = (fs->log.flushed > start ? fs->log.flushed : start) - start;
    uint32_t to = fs->log.off - start;
    int err;
    if (to <= from)
        return 0;
    err = cn_dev_prog(fs, log_page(fs), from, fs->log.page + from, to - from, NULL, 0);
    if (err)
        return err;
    fs->log.flushed = fs->log.off;
    return 0;
}

/* The page starting at byte `start` is complete: program what is left of it
 * and continue at the next page. */
static int complete_page(cairn *fs, uint32_t start)
{
    uint32_t ps = fs->page_size;
    if (fs->log.flushed < start + ps) {
        uint32_t from = fs->log.flushed > start ? fs->log.flushed - start : 0;
        int err = cn_dev_prog(fs, fs->log.seg * fs->seg_pages + start / ps, from,
                              fs->log.page + from, ps - from, NULL, 0);
        if (err)
            return err;
    }
    fs->log.off = start + ps;
    fs->log.flushed = fs->log.off;
    fs->log.since++;
    fs->log.last_ext = CN_NONE;
    memset(fs->log.page, 0xFF, ps);
    return 0;
}

static void put_header(uint8_t *h, uint8_t type, uint32_t len, uint32_t seq)
{
    h[CN_REC_O_TYPE] = type;
    h[CN_REC_O_FLAGS] = 0;
    cn_put16(h + CN_REC_O_LEN, (uint16_t)len);
    cn_put32(h + CN_REC_O_SEQ, seq);
    cn_put32(h + CN_REC_O_CRC, 0);
}

/* Copy bytes into the stream at off, completing pages as they fill. */
static int stream_write(cairn *fs, const uint8_t *src, uint32_t len)
{
    while (len > 0) {
        uint32_t in = fs->log.off % fs->page_size, n = fs->page_size - in;
        if (n > len)
            n = len;
        memcpy(fs->log.page + in, src, n);
        fs->log.off += n;
        src += n;
        len -= n;
        if (fs->log.off % fs->page_size == 0) {
            int err = complete_page(fs, fs->log.off - fs->page_size);
            if (err)
                return err;
        }
    }
    return 0;
}

static int write_record(cairn *fs, uint8_t type, const uint8_t *payload, uint32_t len)
{
    uint8_t h[CN_REC_HDR];
    uint32_t crc;
    int err;
    put_header(h, type, len, fs->log.seq);
    crc = cn_crc32(cn_crc32(0, h, CN_REC_HDR), payload, len);
    cn_put32(h + CN_REC_O_CRC, crc);
    fs->log.seq++;
    err = stream_write(fs, h, CN_REC_HDR);
    if (!err)
        err = stream_write(fs, payload, len);
    return err;
}

/* Paged media: close the current page. A PAD record (no payload) tells the
 * reader to go on at the next page; with fewer bytes left than a header the
 * reader skips them without one. */
static int pad_page(cairn *fs)
{
    uint32_t in = fs->log.off % fs->page_size;
    if (in == 0)
        return 0;
    if (fs->page_size - in >= CN_REC_HDR) {
        uint8_t h[CN_REC_HDR];
        put_header(h, CN_R_PAD, 0, fs->log.seq++);
        cn_put32(h + CN_REC_O_CRC, cn_crc32(0, h, CN_REC_HDR));
        memcpy(fs->log.page + in, h, CN_REC_HDR);
    }
    return complete_page(fs, fs->log.off - in);
}

/* Continue the journal in a fresh segment, linked by a NEXT record. */
static int switch_segment(cairn *fs)
{
    uint32_t s;
    uint8_t p[CN_RL_NEXT];
    int err = cn_seg_alloc(fs, CN_RECOVERY_SEGS, 0, &s);
    if (err)
        return err;
    fs->segs[s].state = CN_SEG_LOG;
    cn_seg_opened(fs, s);
    if (paged(fs) && fs->page_size - fs->log.off % fs->page_size < CN_REC_HDR + CN_RL_NEXT) {
        err = pad_page(fs);
        if (err)
            return err;
    }
    cn_put32(p, s);
    err = write_record(fs, CN_R_NEXT, p, CN_RL_NEXT);
    if (!err && !paged(fs))
        err = program_current(fs);
    else if (!err && fs->log.off % fs->page_size != 0) /* no PAD: the reader follows NEXT */
        err = complete_page(fs, fs->log.off - fs->log.off % fs->page_size);
    if (err)
        return err;
    fs->log.seg = s;
    fs->log.off = 0;
    fs->log.flushed = 0;
    fs->log.last_ext = CN_NONE;
    memset(fs->log.page, 0xFF, fs->page_size);
    return 0;
}

/* A program into the journal failed and flagged its segment worn. The
 * journal moves to a fresh segment behind a checkpoint of everything applied
 * so far: the records of the failed page are in the tree, so nothing
 * acknowledged is lost; GC empties the worn segment and retires it. */
static int log_worn(const cairn *fs, uint32_t seg)
{
    return (fs->segs[seg].flags & CN_SF_FAILING) || (fs->segs[fs->log.seg].flags & CN_SF_FAILING);
}

/* Start the journal afresh at the start of a new segment (the caller writes
 * the checkpoint that makes the old journal unnecessary). */
int cn_log_restart(cairn *fs, uint32_t floor)
{
    uint32_t s;
    int err = cn_seg_alloc(fs, floor, 0, &s);
    if (err)
        return err;
    fs->segs[s].state = CN_SEG_LOG;
    cn_seg_opened(fs, s);
    fs->log.seg = s;
    fs->log.off = 0;
    fs->log.flushed = 0;
    fs->log.since = 0;
    fs->log.last_ext = CN_NONE;
    memset(fs->log.page, 0xFF, fs->page_size);
    return 0;
}

/* The session's first change: every state-changing entry point calls this
 * first (ckpt.c cn_begin_write marks the session). A volume format left
 * unwritten (fs.c unwritten_tree: the tree only in the cache, no journal)
 * gets its tree written and a journal segment, and a checkpoint without
 * CLEAN names both before any record goes there: the session's mark. A cut
 * before it lands leaves format's checkpoint, which names none of it, so
 * the next mount finds the volume unwritten again. A failure half-way
 * breaks the mount (a remount starts over). */
int cn_session_begin(cairn *fs)
{
    int err = cn_heads_check(fs);
    if (err)
        return err;
    if (!fs->session_pending || !fs->unwritten)
        return cn_begin_write(fs);
    fs->session_pending = 0;
    fs->ckpt_mark_page = CN_NONE; /* the checkpoint below marks the session */
    err = cn_cache_flush(fs);
    if (!err)
        err = cn_log_restart(fs, CN_RECOVERY_SEGS);
    if (!err)
        err = cn_ckpt_write(fs, 0);
    if (err)
        fs->broken = 1;
    else
        fs->unwritten = 0;
    return err;
}

CN_NOINLINE static int move_log(cairn *fs)
{
    int err = cn_cache_flush(fs);
    if (!err) /* the checkpoint right after gives the worn segment back */
        err = cn_log_restart(fs, CN_RECOVERY_SEGS - 1u);
    if (err)
        return err;
    cn_seg_release_dead(fs);
    return cn_ckpt_write(fs, 0);
}

/* Does the journal's segment die with the next checkpoint, as cn_dead_segs
 * counts a segment: nothing live (no tagged data page), not failing
 * (retired, not freed), not an anchor's replacement? */
static uint32_t log_seg_dies(const cairn *fs)
{
    const struct cn_seg *g = &fs->segs[fs->log.seg];
    return g->live == 0 && !(g->flags & (CN_SF_FAILING | CN_SF_EVICT)) ? 1u : 0u;
}

/* The journal's segment is full and the free segments are down at the
 * recovery's two, the journal's floor: a switch would take one of them. The
 * journal continues in a fresh segment behind a checkpoint instead (as after
 * a worn segment), which frees the old one: its records are in the tree. So
 * the free count is what it was. Before, every record was refused from then
 * on, GC's moves included: test_space "age nor" (95% full) refused 71 removes
 * and kept 9 files it could not remove, once the record room check's flush
 * changed the operation stream. Only when a segment dies with that checkpoint
 * (the old one holds no tagged data page, or another is dead): a checkpoint
 * must leave the recovery its two segments (DESIGN.md "Space"). */
static int roll_over(cairn *fs)
{
    if (fs->recovering || cn_dead_segs(fs) + log_seg_dies(fs) == 0)
        return CAIRN_ERR_NOSPC;
    return move_log(fs);
}

/* GC's records roll the journal over in place (a checkpoint frees the old
 * segment) where they can, rather than take a free segment a victim's moves
 * or nodes were counted on (gc.c victim_fits). */
static int gc_rolls_in_place(const cairn *fs)
{
    return fs->in_gc && !fs->recovering && log_seg_dies(fs);
}

/* Would `records` records of `len` payload bytes each, appended now by GC,
 * take the journal into a fresh segment, one of the free ones? (Counted as
 * if its kept pages were kept, a record a page on paged media where no more
 * fit, the current page as used.) Not where GC rolls it over in place. On
 * 61 blocks of nand-jffs2, at 3 free segments, the journal (a tagged data
 * page in its segment) switched in the middle of a victim's moves and took
 * the segment the moves needed: GC stopped half-way with the metadata head
 * full, and every remove after got NOSPC for good (the session-29 wedge
 * hunt, seed 7). */
int cn_log_would_switch(const cairn *fs, uint32_t records, uint32_t len)
{
    uint32_t lim = limit(fs), keep = CN_LOG_KEEP_PAGES * fs->page_size, rec = CN_REC_HDR + len;
    uint64_t end = fs->log.off;
    if (paged(fs)) {
        uint32_t per = fs->page_size / rec > 0 ? fs->page_size / rec : 1u;
        end += (uint64_t)((records + per - 1u) / per + 1u) * fs->page_size;
    } else {
        end += (uint64_t)records * rec;
    }
    if (lim > 4u * keep)
        lim -= keep;
    return end > lim && (fs->recovering || !log_seg_dies(fs));
}

static int append_once(cairn *fs, uint8_t type, const uint8_t *payload, uint32_t len)
{
    uint32_t size = CN_REC_HDR + len;
    int err;
    if (size > CN_REC_MAX)
        return CAIRN_ERR_INVAL;
    if (paged(fs) && fs->page_size - fs->log.off % fs->page_size < size) {
        err = pad_page(fs);
        if (err)
            return err;
    }
    if (past_end(fs, fs->log.off + size) || (fs->segs[fs->log.seg].flags & CN_SF_EVICT)) {
        int room = !past_end(fs, fs->log.off + size);
        err = gc_rolls_in_place(fs) ? move_log(fs) : switch_segment(fs);
        if (err == CAIRN_ERR_NOSPC)
            err = roll_over(fs);
        /* A segment kept for an anchor (EVICT) that the journal holds is
         * left when a segment can be had; until then the journal goes on in
         * it. After a failing anchor's replacement the next NAND standby is
         * the first good segment after the anchors, which held the journal,
         * and at the recovery's two free segments every record was refused
         * for good (test_nospc wedge-anchor-worn seed 1040 run 20, nand-jffs2
         * 36 blocks; session 33). Neither a failed switch nor a refused roll
         * changed the journal. */
        if (err == CAIRN_ERR_NOSPC && room && !(fs->segs[fs->log.seg].flags & CN_SF_FAILING))
            err = 0;
        if (err)
            return err;
    }
    fs->log.last_ext = type == CN_R_EXTENT ? fs->log.off : CN_NONE;
    return write_record(fs, type, payload, len);
}

int cn_log_append(cairn *fs, uint8_t type, const uint8_t *payload, uint32_t len)
{
    uint32_t seg = fs->log.seg;
    int err = append_once(fs, type, payload, len);
    if (err == CAIRN_ERR_IO && log_worn(fs, seg)) {
        err = move_log(fs);
        if (!err)
            err = append_once(fs, type, payload, len);
    }
    return err;
}

/* Grow the newest record in place when it is an extent the new pages
 * continue, so a file written page by page costs one record per run. */
int cn_log_extend_extent(cairn *fs, uint32_t id, uint32_t fpage, uint32_t phys,
                         uint32_t count, int32_t size)
{
    uint32_t at = fs->log.last_ext, ps = fs->page_size, in;
    uint8_t *r, h[CN_REC_HDR];
    uint32_t rcount, crc;
    if (at == CN_NONE || at < fs->log.flushed || at / ps != fs->log.off / ps ||
        fs->log.off != at + CN_REC_HDR + CN_RL_EXTENT)
        return 0;
    in = at % ps;
    r = fs->log.page + in;
    rcount = cn_get32(r + CN_REC_HDR + 12);
    if (cn_get32(r + CN_REC_HDR) != id || cn_get32(r + CN_REC_HDR + 4) + rcount != fpage ||
        cn_get32(r + CN_REC_HDR + 8) + rcount != phys ||
        cn_seg_of(fs, cn_get32(r + CN_REC_HDR + 8)) != cn_seg_of(fs, phys + count - 1))
        return 0;
    cn_put32(r + CN_REC_HDR + 12, rcount + count);
    cn_put32(r + CN_REC_HDR + 16, (uint32_t)size);
    memcpy(h, r, CN_REC_HDR);
    cn_put32(h + CN_REC_O_CRC, 0);
    crc = cn_crc32(cn_crc32(0, h, CN_REC_HDR), r + CN_REC_HDR, CN_RL_EXTENT);
    cn_put32(r + CN_REC_O_CRC, crc);
    return 1;
}

/* Tagged media: write one file page as the journal's next page, its spare
 * tag being the record. Only when no record is pending in the current page
 * (else 1: the caller takes the ordinary path), so one program does it. */
int cn_log_data_page(cairn *fs, uint32_t id, uint32_t fpage, int32_t size,
                     const uint8_t *data, uint32_t *phys)
{
    uint8_t tag[CN_TAG_LEN];
    int err;
    if (!fs->spare_tags || fs->log.off % fs->page_size != 0 ||
        (fs->segs[fs->log.seg].flags & CN_SF_EVICT) ||
        fs->log.flushed != fs->log.off || past_end(fs, fs->log.off + fs->page_size))
        return 1;
    *phys = log_page(fs);
    cn_make_tag(tag, CN_TAG_LOG, id, fpage, fs->log.seq, size, data, fs->page_size);
    err = cn_dev_prog(fs, *phys, 0, data, fs->page_size, tag, CN_TAG_LEN);
    if (err == CAIRN_ERR_IO && log_worn(fs, fs->log.seg))
        return move_log(fs) ? err : 1; /* the page goes the ordinary way */
    if (err)
        return err;
    fs->log.seq++;
    fs->log.off += fs->page_size;
    fs->log.flushed = fs->log.off;
    fs->log.since++;
    fs->log.last_ext = CN_NONE;
    return 0;
}

/* Make every appended record durable. */
int cn_log_flush(cairn *fs)
{
    int err;
    uint32_t seg = fs->log.seg;
    if (fs->log.flushed >= fs->log.off)
        return 0;
    err = paged(fs) ? pad_page(fs) : program_current(fs);
    fs->log.last_ext = CN_NONE;
    if (err == CAIRN_ERR_IO && log_worn(fs, seg))
        err = move_log(fs); /* the checkpoint makes the records durable */
    return err;
}

/* ---- reading ---- */

struct reader {
    uint32_t page; /* page held in fs->scratch2, CN_NONE if none */
};

static int read_bytes(cairn *fs, struct reader *rd, uint32_t seg, uint32_t off,
                      uint8_t *out, uint32_t len)
{
    uint32_t ps = fs->page_size;
    while (len > 0) {
        uint32_t page = seg * fs->seg_pages + off / ps, in = off % ps;
        uint32_t n = ps - in < len ? ps - in : len;
        if (rd->page != page) {
            int err = cn_dev_read(fs, page, 0, fs->scratch2, ps);
            if (err)
                return err;
            rd->page = page;
        }
        memcpy(out, fs->scratch2 + in, n);
        out += n;
        off += n;
        len -= n;
    }
    return 0;
}

static int all_ff(const uint8_t *p, uint32_t n)
{
    while (n--)
        if (*p++ != 0xFF)
            return 0;
    return 1;
}

/* Walk the valid records from the checkpoint's position (fs->log.seg/off/seq)
 * and hand each to fn; stops at the first record that is erased, torn, out of
 * sequence or malformed. Reports where the journal ends. */
int cn_log_scan(cairn *fs, cn_rec_fn fn, void *arg, uint32_t *end_seg,
                uint32_t *end_off, uint32_t *records)
{
    struct reader rd = {CN_NONE};
    uint32_t seg = fs->log.seg, off = fs->log.off, seq = fs->log.seq, n = 0;
    uint32_t hops = 0;
    uint8_t *rec = fs->scratch;
    int err = 0;
    for (;;) {
        uint32_t len, crc;
        uint8_t type;
        if (paged(fs) && fs->page_size - off % fs->page_size < CN_REC_HDR)
            off += fs->page_size - off % fs->page_size;
        if (off + CN_REC_HDR > seg_bytes(fs))
            break;
        if (fs->spare_tags && off % fs->page_size == 0) {
            /* a file page written as a journal entry? its tag says so */
            uint8_t tag[CN_TAG_LEN], p[CN_RL_EXTENT];
            uint32_t page = seg * fs->seg_pages + off / fs->page_size;
            if (fs->dev->read_spare(fs->dev->ctx, page, tag, CN_TAG_LEN) < 0) {
                err = CAIRN_ERR_IO;
                break;
            }
            if (cn_tag_ok(tag) && tag[CN_TAG_O_KIND] == CN_TAG_LOG &&
                cn_get32(tag + CN_TAG_O_SEQ) == seq) {
                cn_put32(p, cn_get32(tag + CN_TAG_O_ID));
                cn_put32(p + 4, cn_get32(tag + CN_TAG_O_FPAGE));
                cn_put32(p + 8, page);
                cn_put32(p + 12, 1);
                cn_put32(p + 16, cn_get32(tag + CN_TAG_O_SIZE));
                seq++;
                n++;
                off += fs->page_size;
                if (fn) {
                    err = fn(fs, CN_R_EXTENT, p, CN_RL_EXTENT, arg);
                    if (err)
                        break;
                }
                continue;
            }
        }
        err = read_bytes(fs, &rd, seg, off, rec, CN_REC_HDR);
        if (err)
            break;
        if (all_ff(rec, CN_REC_HDR))
            break;
        len = cn_get16(rec + CN_REC_O_LEN);
        type = rec[CN_REC_O_TYPE];
        if (CN_REC_HDR + len > CN_REC_MAX || off + CN_REC_HDR + len > seg_bytes(fs) ||
            cn_get32(rec + CN_REC_O_SEQ) != seq ||
            (paged(fs) && off % fs->page_size + CN_REC_HDR + len > fs->page_size))
            break;
        if (type == CN_R_PAD) {
            if (!paged(fs) || len != 0)
                break;
            {
                uint8_t h[CN_REC_HDR];
                memcpy(h, rec, CN_REC_HDR);
                cn_put32(h + CN_REC_O_CRC, 0);
                if (!cn_crc_ok(cn_get32(rec + CN_REC_O_CRC), cn_crc32(0, h, CN_REC_HDR)))
                    break;
            }
            seq++;
            n++;
            off += fs->page_size - off % fs->page_size;
            continue;
        }
        err = read_bytes(fs, &rd, seg, off + CN_REC_HDR, rec + CN_REC_HDR, len);
        if (err)
            break;
        {
            uint8_t h[CN_REC_HDR];
            memcpy(h, rec, CN_REC_HDR);
            cn_put32(h + CN_REC_O_CRC, 0);
            crc = cn_crc32(cn_crc32(0, h, CN_REC_HDR), rec + CN_REC_HDR, len);
        }
        if (!cn_crc_ok(cn_get32(rec + CN_REC_O_CRC), crc))
            break;
        seq++;
        n++;
        if (type == CN_R_NEXT) {
            uint32_t next = len == CN_RL_NEXT ? cn_get32(rec + CN_REC_HDR) : CN_NONE;
            if (next < fs->seg_base || next >= fs->seg_count || next == seg ||
                ++hops > fs->seg_count)
                break;
            if (fn) {
                err = fn(fs, type, rec + CN_REC_HDR, len, arg);
                if (err)
                    break;
            }
            seg = next;
            off = 0;
            continue;
        }
        off += CN_REC_HDR + len;
        if (fn) {
            err = fn(fs, type, rec + CN_REC_HDR, len, arg);
            if (err)
                break;
        }
    }
    if (end_seg)
        *end_seg = seg;
    if (end_off)
        *end_off = off;
    if (records)
        *records = n;
    return err;
}
