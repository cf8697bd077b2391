/* Segment (logical block) table. The table lives in RAM (16 bytes a segment,
 * fixed at mount) and is written whole in each checkpoint; keeping it out of
 * the tree avoids the feedback loop of a tree that would have to account for
 * its own node writes (F2FS keeps its SIT apart for the same reason). It holds
 * what allocation, garbage collection and wear levelling decide on: state,
 * live pages, erase count and the age of the data. */
#include "cn.h"

static int seg_is_free(const cairn *fs, uint32_t s)
{
    const struct cn_seg *g = &fs->segs[s];
    return (g->state == CN_SEG_FREE || g->state == CN_SEG_ERASED) && g->live == 0 &&
           !g->aux && !(g->flags & (CN_SF_FAILING | CN_SF_EVICT));
}

uint32_t cn_free_segs(const cairn *fs)
{
    uint32_t s, n = 0;
    for (s = fs->seg_base; s < fs->seg_count; s++)
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

/* Lowest and highest erase count of the segments in service; returns the
 * difference (what static wear levelling watches). */
uint32_t cn_wear_spread(const cairn *fs, uint32_t *min_out, uint32_t *max_out)
{
    uint32_t s, lo = UINT32_MAX, hi = 0;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        uint32_t e = fs->segs[s].erase_count;
        if (fs->segs[s].state == CN_SEG_BAD)
            continue;
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
    }
    if (lo > hi)
        lo = hi;
    if (min_out)
        *min_out = lo;
    if (max_out)
        *max_out = hi;
    return hi - lo;
}

/* Is free segment a a better pick than b? An erased one first: it saves the
 * write an erase (cairn_gc erased it in idle time for that, picking the least
 * worn). Then hot writes take the least-worn segment, cold (GC-moved) data
 * the most-worn one, so that blocks which have seen many erases rest under
 * data that rarely changes. */
static int better(const cairn *fs, uint32_t a, uint32_t b, int worn)
{
    uint32_t ea = fs->segs[a].erase_count, eb = fs->segs[b].erase_count;
    int za = fs->segs[a].state == CN_SEG_ERASED, zb = fs->segs[b].state == CN_SEG_ERASED;
    if (za != zb)
        return za;
    return worn ? ea > eb : ea < eb;
}

static uint32_t pick_free(const cairn *fs, int worn)
{
    uint32_t s, best = CN_NONE;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (seg_is_free(fs, s) && (best == CN_NONE || better(fs, s, best, worn)))
            best = s;
    return best;
}

/* Hand out a free segment, erased, if more than `floor` are free (a mount's
 * recovery may take the last ones). A segment whose erase fails is retired
 * and the next one tried: nothing lived there, so nothing is lost. */
int cn_seg_alloc(cairn *fs, uint32_t floor, int worn, uint32_t *seg_out)
{
    for (;;) {
        uint32_t best;
        int err;
        /* a recovery may take the last segments until its first checkpoint
         * lands: a cut before gives them back. After it, a cut would start
         * the next recovery from that checkpoint with what followed it in
         * the journal: torture nor-w25q128-b16 seed 7 (--cuts 107), a
         * recovery's GC wrote a checkpoint at 2 free segments, took one
         * more for its moves and was cut; every mount after found 1 free
         * after the replay, 0 after restarting the journal: NOSPC for good */
        if (fs->recovering != CN_RECOVERY_OPEN && cn_free_segs(fs) <= floor)
            return CAIRN_ERR_NOSPC;
        best = pick_free(fs, worn);
        if (best == CN_NONE)
            return CAIRN_ERR_NOSPC;
        if (fs->segs[best].state == CN_SEG_ERASED) {
            /* erased as the table says? Every writer starts a segment at
             * its first byte, so a used one shows there (a table rolled
             * back over newer data, invariant I4) */
            uint8_t head[16];
            int blank;
            err = cn_dev_blank(fs, best * fs->seg_pages, 0, head, sizeof head, &blank);
            if (err)
                return err;
            if (blank) {
                *seg_out = best;
                return 0;
            }
            fs->segs[best].state = CN_SEG_FREE;
        }
        /* only the first erase block now: the writer erases each of the
         * others when it reaches it, so no call erases a whole segment */
        err = cn_dev_erase_first(fs, best);
        if (err == 0) {
            fs->segs[best].state =
                fs->segs[best].erased_to * fs->dev->geo.pages_per_block == fs->seg_pages
                    ? CN_SEG_ERASED
                    : CN_SEG_FREE; /* the caller gives it its state at once */
            *seg_out = best;
            return 0;
        }
        if (!(fs->segs[best].flags & CN_SF_FAILING))
            return err;
        cn_seg_retire(fs, best);
    }
}

/* A writer's segment: its first block was erased when the segment was
 * handed out, before the checkpoint that names it was written, so it counts
 * as erased even with nothing written yet (a clean mount reads its next
 * bytes blank before use: fs.c clean_ends_blank). */
static void erased_up_to(cairn *fs, uint32_t seg, uint32_t page)
{
    uint32_t ppb = fs->dev->geo.pages_per_block, blocks = (page + ppb - 1) / ppb;
    if (seg < fs->seg_count)
        fs->segs[seg].erased_to = (uint16_t)(blocks > 0 ? blocks : 1);
}

/* After a mount has read the table: what may be programmed without an erase.
 * Segments were erased whole, or are written no more, except the journal's
 * and the heads' segments, which go on after their write positions: the
 * blocks past the one holding a position may never have been erased (a
 * segment handed out lazily in an earlier session), so the first program
 * into each erases it. The block holding the position was erased before the
 * pages in front of it were written. */
void cn_seg_mark_erased(cairn *fs)
{
    uint32_t s, h, bpl = fs->seg_pages / fs->dev->geo.pages_per_block;
    for (s = 0; s < fs->seg_count; s++)
        if (s != fs->anchor[0] && s != fs->anchor[1]) /* the anchors: cn_ckpt_load */
            fs->segs[s].erased_to = (uint16_t)bpl;
    erased_up_to(fs, fs->log.seg, (fs->log.off + fs->page_size - 1) / fs->page_size);
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg != CN_NONE)
            erased_up_to(fs, fs->head[h].seg, fs->head[h].page);
}

/* Idle time (cairn_gc): erase one free segment that is not erased yet, the
 * least worn (the one hot writes take next), so that a later write finds it
 * ready. Returns 1 when one was erased, 0 when none is left to erase. A
 * segment whose erase fails is retired and the next one tried. An erase cut
 * by power costs nothing: a mount after a cut trusts no erase (fs.c). */
static int writing_into(const cairn *fs, uint32_t seg)
{
    uint32_t h;
    if (seg == fs->log.seg)
        return 1;
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg == seg)
            return 1;
    return 0;
}

/* The blocks ahead of a writer in a lazily erased segment come first: they
 * are the next ones a write would erase. */
static uint32_t lazy_writer_seg(const cairn *fs)
{
    uint32_t s, bpl = fs->seg_pages / fs->dev->geo.pages_per_block;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (fs->segs[s].erased_to < bpl && writing_into(fs, s) &&
            (fs->segs[s].state == CN_SEG_OPEN || fs->segs[s].state == CN_SEG_LOG))
            return s;
    return CN_NONE;
}

/* Erase the least worn free segment not erased yet (the one hot writes take
 * next). 1 when one was erased, 0 when none is left to erase. A segment
 * whose erase fails is retired and the next one tried. */
static int erase_free_seg(cairn *fs)
{
    for (;;) {
        uint32_t s, best = CN_NONE;
        int err;
        for (s = fs->seg_base; s < fs->seg_count; s++)
            if (seg_is_free(fs, s) && fs->segs[s].state == CN_SEG_FREE &&
                (best == CN_NONE || fs->segs[s].erase_count < fs->segs[best].erase_count))
                best = s;
        if (best == CN_NONE)
            return 0;
        err = cn_dev_erase_seg(fs, best);
        if (err == 0) {
            fs->segs[best].state = CN_SEG_ERASED;
            return 1;
        }
        if (!(fs->segs[best].flags & CN_SF_FAILING))
            return err;
        cn_seg_retire(fs, best);
    }
}

int cn_seg_pre_erase(cairn *fs)
{
    uint32_t w = lazy_writer_seg(fs);
    if (w != CN_NONE) {
        int err = cn_dev_erase_next(fs, w);
        return err ? err : 1; /* a failed erase: FAILING, the writer moves on */
    }
    return erase_free_seg(fs);
}

/* Writer i (a head, or the journal for i == CN_HEADS): its segment and the
 * page it programs next inside it; CN_NONE when it has no segment. */
static uint32_t writer_at(const cairn *fs, uint32_t i, uint32_t *page)
{
    if (i == CN_HEADS) {
        *page = (fs->log.off + fs->page_size - 1) / fs->page_size;
        return fs->log.seg;
    }
    *page = fs->head[i].page;
    return fs->head[i].seg;
}

/* Where a segment is one erase block: erase a free segment for each writer
 * within a quarter segment of its end, if not that many are erased. 1 when
 * one was erased, 0 when none is due. The erase happens anyway; done here,
 * at the end of a light call, it is not added to the call that opens the
 * segment (before: one erase and 24 pages in one 256 B write, a commit's
 * node flush that opened the metadata head's next segment, fill-write 1 MiB
 * nor-m25p16). Segments of several blocks are left alone: erasing a free
 * one whole would be more than a block in one call, a small write there
 * already erases at most one block, and erasing ahead of a writer inside
 * its segment moved the hard path's worst call from 8 to 9 segments' worth
 * of erased blocks (test_space bounded nor, scale 20). */
int cn_seg_erase_soon(cairn *fs)
{
    uint32_t i, s, page, near = 0, erased = 0;
    uint32_t soon = fs->seg_pages / 4u > 16u ? fs->seg_pages / 4u : 16u;
    if (fs->seg_pages != fs->dev->geo.pages_per_block)
        return 0;
    for (i = 0; i <= CN_HEADS; i++) {
        s = writer_at(fs, i, &page);
        near += s != CN_NONE && s < fs->seg_count && page + soon >= fs->seg_pages;
    }
    if (near == 0)
        return 0;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        erased += seg_is_free(fs, s) && fs->segs[s].state == CN_SEG_ERASED;
    return erased < near ? erase_free_seg(fs) : 0;
}

/* Take a segment out of service for good (its erase or a program failed and
 * it holds no live data any more). The driver marks its blocks bad. */
void cn_seg_retire(cairn *fs, uint32_t seg)
{
    struct cairn_dev *d = fs->dev;
    uint32_t bpl = fs->seg_pages / d->geo.pages_per_block, i;
    fs->segs[seg].state = CN_SEG_BAD;
    fs->segs[seg].flags = 0;
    fs->segs[seg].live = 0;
    if (d->mark_bad != NULL && !fs->read_only)
        for (i = 0; i < bpl; i++)
            (void)d->mark_bad(d->ctx, seg * bpl + i); /* best effort: the table says BAD */
}

/* Segments the next checkpoint will free. */
/* Segments the next checkpoint makes free: dead ones, but not a failing one
 * (it is retired) nor a failing anchor's replacement (kept). A commit that
 * borrowed a segment counting a failing one as freed left a checkpoint with
 * one free segment, and the recovery after the next cut had none for its
 * journal: mount NOSPC for good (torture nor-w25q128-b4, seed 103). */
uint32_t cn_dead_segs(const cairn *fs)
{
    uint32_t s, n = 0;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        const struct cn_seg *g = &fs->segs[s];
        n += (uint32_t)((g->state == CN_SEG_FULL || g->state == CN_SEG_LOG) &&
                        g->live == 0 && s != fs->log.seg &&
                        !(g->flags & (CN_SF_FAILING | CN_SF_EVICT)));
    }
    return n;
}

/* At a checkpoint: closed segments without live pages, and journal segments
 * the checkpoint no longer needs, become free (erased on reuse); emptied
 * failing ones are retired. */
void cn_seg_release_dead(cairn *fs)
{
    uint32_t s;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        struct cn_seg *g = &fs->segs[s];
        if (g->state == CN_SEG_LOG && s != fs->log.seg)
            g->state = g->live ? CN_SEG_FULL : CN_SEG_FREE; /* data pages stay */
        else if (g->state == CN_SEG_FULL && g->live == 0)
            g->state = CN_SEG_FREE;
        if (g->state == CN_SEG_FREE) {
            if (g->flags & CN_SF_FAILING)
                cn_seg_retire(fs, s);
            g->flags &= CN_SF_EVICT; /* an anchor's replacement stays reserved */
        }
    }
}
