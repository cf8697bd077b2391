/* Segment (logical block) table and the append heads. The table lives in RAM
 * (8 bytes a segment, fixed at mount) and is written whole in each checkpoint;
 * keeping it out of the tree avoids the feedback loop of a tree that would
 * have to account for its own node writes (F2FS keeps its SIT apart for the
 * same reason). */
#include "cn.h"

static int seg_is_free(const cairn *fs, uint32_t s)
{
    const struct cn_seg *g = &fs->segs[s];
    return (g->state == CN_SEG_FREE || g->state == CN_SEG_ERASED) && g->live == 0 &&
           !g->aux;
}

uint32_t cn_free_segs(const cairn *fs)
{
    uint32_t s, n = 0;
    for (s = 2; s < fs->seg_count; s++)
        n += (uint32_t)seg_is_free(fs, s);
    return n;
}

void cn_live_add(cairn *fs, uint32_t page, int32_t delta)
{
    uint32_t s = cn_seg_of(fs, page);
    int32_t v;
    if (s >= fs->seg_count)
        return;
    v = (int32_t)fs->segs[s].live + delta;
    if (v < 0)
        v = 0; /* only a corrupted image gets here; cairn_check reports it */
    if (v > (int32_t)fs->seg_pages)
        v = (int32_t)fs->seg_pages;
    fs->segs[s].live = (uint16_t)v;
}

/* Least-worn free segment, erased before it is handed out. */
int cn_seg_alloc(cairn *fs, int privileged, uint32_t *seg_out)
{
    uint32_t s, best = CN_NONE;
    int err;
    if (!privileged && cn_free_segs(fs) <= CN_RESERVE_SEGS)
        return CAIRN_ERR_NOSPC;
    if (!fs->recovering && cn_free_segs(fs) <= CN_RECOVERY_SEGS)
        return CAIRN_ERR_NOSPC;
    for (s = 2; s < fs->seg_count; s++) {
        if (!seg_is_free(fs, s))
            continue;
        if (best == CN_NONE || fs->segs[s].erase_count < fs->segs[best].erase_count ||
            (fs->segs[s].erase_count == fs->segs[best].erase_count &&
             fs->segs[s].state == CN_SEG_ERASED && fs->segs[best].state != CN_SEG_ERASED))
            best = s;
    }
    if (best == CN_NONE)
        return CAIRN_ERR_NOSPC;
    if (fs->segs[best].state != CN_SEG_ERASED) {
        err = cn_dev_erase_seg(fs, best);
        if (err)
            return err;
        fs->segs[best].state = CN_SEG_ERASED;
    }
    *seg_out = best;
    return 0;
}

/* Pages not holding live data, in every segment the file system may use. */
static uint64_t reclaimable_pages(const cairn *fs)
{
    uint64_t n = 0;
    uint32_t s;
    for (s = 2; s < fs->seg_count; s++)
        if (fs->segs[s].state != CN_SEG_BAD)
            n += fs->seg_pages - fs->segs[s].live;
    return n;
}

/* Room for user data: free segments beyond the reserve, collecting garbage
 * when there are not enough. The volume is full when what could be reclaimed
 * is no more than the reserve; below that every GC round gains pages, so the
 * loop ends. */
int cn_space_for_user(cairn *fs)
{
    uint32_t rounds = 0;
    while (cn_free_segs(fs) <= CN_RESERVE_SEGS) {
        int err;
        if (reclaimable_pages(fs) <= (uint64_t)(CN_RESERVE_SEGS + 2u) * fs->seg_pages ||
            ++rounds > 2 * fs->seg_count)
            return CAIRN_ERR_NOSPC;
        err = cn_gc_one(fs);
        if (err)
            return err;
    }
    return 0;
}

/* Can the tree's next flush be written, with what the next record may add?
 * A flush must never fail half-way through applying a record, so this is
 * asked before the record is appended. */
int cn_meta_room(cairn *fs)
{
    const struct cn_head *m = &fs->head[CN_H_META];
    uint32_t need = (fs->dirty_nodes + 2u * fs->height + 4u) * fs->node_pages, have = 0;
    if (m->seg != CN_NONE && m->page < fs->seg_pages)
        have = fs->seg_pages - m->page;
    if (cn_free_segs(fs) > CN_RECOVERY_SEGS)
        have += (cn_free_segs(fs) - CN_RECOVERY_SEGS) * fs->seg_pages;
    return have >= need || fs->recovering;
}

static int need_segment(const cairn *fs, unsigned h, uint32_t want)
{
    const struct cn_head *hd = &fs->head[h];
    return hd->seg == CN_NONE || hd->page >= fs->seg_pages ||
           (h != CN_H_DATA && fs->seg_pages - hd->page < want);
}

/* Up to `want` contiguous pages at head h (exactly `want` for tree nodes and GC).
 * The data head is the users' and never takes the reserve. */
int cn_head_pages(cairn *fs, unsigned h, uint32_t want, uint32_t *page_out, uint32_t *got)
{
    struct cn_head *hd = &fs->head[h];
    uint32_t n;
    if (need_segment(fs, h, want)) {
        uint32_t s;
        int err = cn_seg_alloc(fs, h != CN_H_DATA, &s);
        if (err)
            return err;
        if (hd->seg != CN_NONE && fs->segs[hd->seg].state == CN_SEG_OPEN)
            fs->segs[hd->seg].state = CN_SEG_FULL;
        hd->seg = s;
        hd->page = 0;
        fs->segs[s].state = CN_SEG_OPEN;
    }
    n = fs->seg_pages - hd->page;
    if (n > want)
        n = want;
    *page_out = hd->seg * fs->seg_pages + hd->page;
    *got = n;
    hd->page += n;
    return 0;
}

/* Pages for user data (garbage was collected, if needed, by cn_settle). */
int cn_data_pages(cairn *fs, uint32_t want, uint32_t *page_out, uint32_t *got)
{
    int err = cn_begin_write(fs);
    return err ? err : cn_head_pages(fs, CN_H_DATA, want, page_out, got);
}

/* Would `pages` of user data need a new segment? */
int cn_data_head_short(const cairn *fs, uint32_t pages)
{
    const struct cn_head *hd = &fs->head[CN_H_DATA];
    return hd->seg == CN_NONE || fs->seg_pages - hd->page < pages;
}

/* Segments the next checkpoint will free. */
uint32_t cn_dead_segs(const cairn *fs)
{
    uint32_t s, n = 0;
    for (s = 2; s < fs->seg_count; s++) {
        const struct cn_seg *g = &fs->segs[s];
        n += (uint32_t)((g->state == CN_SEG_FULL || g->state == CN_SEG_LOG) &&
                        g->live == 0 && s != fs->log.seg);
    }
    return n;
}

/* At a checkpoint: closed segments without live pages, and journal segments
 * the checkpoint no longer needs, become free (erased on reuse). */
void cn_seg_release_dead(cairn *fs)
{
    uint32_t s;
    for (s = 2; s < fs->seg_count; s++) {
        struct cn_seg *g = &fs->segs[s];
        if (g->state == CN_SEG_LOG && s != fs->log.seg)
            g->state = g->live ? CN_SEG_FULL : CN_SEG_FREE; /* data pages stay */
        else if (g->state == CN_SEG_FULL && g->live == 0)
            g->state = CN_SEG_FREE;
    }
}
