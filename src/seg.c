/* Segment (logical block) table. The table lives in RAM (4 bytes a segment,
 * fixed at mount) and is written whole in each checkpoint; keeping it out of
 * the tree avoids the feedback loop of a tree that would have to account for
 * its own node writes (F2FS keeps its SIT apart for the same reason). It holds
 * what allocation, garbage collection and wear levelling decide on: state,
 * live pages, erase count and the age of the data.
 *
 * The checkpoint's entry is 12 bytes (erase count and the clock when the
 * segment was opened, 32 bits each: FORMAT.md); RAM keeps 4. Wear levelling
 * and allocation compare erase counts, never use their size: each is kept as
 * its distance from the least worn segment in service (fs->wear_base),
 * saturating at CN_WEAR_MAX, far above the spread static levelling allows
 * (cfg.wear_spread, at most CN_WEAR_MAX - 1). GC's cost-benefit weighs the
 * age of the data: kept as a class that grows by one at tick n when n is a
 * multiple of 2^class (a tick: seg_count / 16 segments opened), so a class
 * is about 1 + log2 of the ticks since the segment was opened; a checkpoint
 * stores the age the class stands for. The anchors' erase counts, which
 * grow much faster than the others, are kept exact (fs->anchor_erases). */
#include "cn.h"

static int seg_is_free(const cairn *fs, uint32_t s)
{
    const struct cn_seg *g = &fs->segs[s];
    return (g->state == CN_SEG_FREE || g->state == CN_SEG_ERASED) && g->live == 0 &&
           !(g->flags & (CN_SF_FAILING | CN_SF_EVICT));
}

/* ---- wear: erase counts relative to the least worn segment ---- */

/* Segment g's distance from the base becomes d, saturated. */
static void set_wear(struct cn_seg *g, uint32_t d)
{
    g->wear = (d < CN_WEAR_MAX ? d : CN_WEAR_MAX) & CN_WEAR_MAX;
}

/* Segments whose wear levelling and allocation weigh: in service, not an
 * anchor (a replacement anchor included: it is erased as anchors are) nor
 * kept for one (EVICT: a NAND standby is not erased until it becomes one,
 * and at the least wear it would hold the base down while the rest
 * saturate). */
static int wears(const cairn *fs, uint32_t s)
{
    unsigned st = fs->segs[s].state;
    return s >= fs->seg_base && st != CN_SEG_BAD && st != CN_SEG_ANCHOR &&
           !(fs->segs[s].flags & CN_SF_EVICT);
}

static int anchor_index(const cairn *fs, uint32_t s)
{
    return s == fs->anchor[0] ? 0 : s == fs->anchor[1] ? 1 : -1;
}

uint32_t cn_seg_erases(const cairn *fs, uint32_t s)
{
    int a = anchor_index(fs, s);
    return a >= 0 ? fs->anchor_erases[a] : fs->wear_base + fs->segs[s].wear;
}

/* Keep the least worn segment at wear 0: when none is left there, every
 * wear goes down by the least one and the base up. */
CN_NOINLINE static void rebase(cairn *fs)
{
    uint32_t s, low = CN_WEAR_MAX;
    for (s = fs->seg_base; s < fs->seg_count && low > 0; s++)
        if (wears(fs, s) && fs->segs[s].wear < low)
            low = fs->segs[s].wear;
    if (low == 0 || low == CN_WEAR_MAX)
        return; /* (all saturated: nothing to go by) */
    fs->wear_base += low;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (wears(fs, s))
            fs->segs[s].wear = (fs->segs[s].wear - low) & CN_WEAR_MAX;
}

/* One erase of segment s (a failed one wore the block too). Not inlined:
 * it is beside the erase, and the allocator's frame is on the deepest
 * chains. */
CN_NOINLINE static void count_erase(cairn *fs, uint32_t s)
{
    int a = anchor_index(fs, s);
    struct cn_seg *g = &fs->segs[s];
    if (a >= 0) {
        fs->anchor_erases[a]++;
        return;
    }
    set_wear(g, g->wear + 1u);
    if (g->wear == 1u && wears(fs, s))
        rebase(fs);
}

/* An erase of segment s made a block at a time by the caller (format's of
 * an anchor: ckpt.c erase_newest_last). */
void cn_seg_count_erase(cairn *fs, uint32_t s)
{
    if (s < fs->seg_count && !fs->read_only)
        count_erase(fs, s);
}

/* The anchors become a0 and a1 (a failing one replaced, ckpt.c): each erase
 * count goes with its segment, and a replacement's goes on exact. */
void cn_seg_set_anchors(cairn *fs, uint32_t a0, uint32_t a1)
{
    uint32_t e0 = cn_seg_erases(fs, a0), e1 = cn_seg_erases(fs, a1);
    fs->anchor[0] = a0;
    fs->anchor[1] = a1;
    fs->anchor_erases[0] = e0;
    fs->anchor_erases[1] = e1;
}

int cn_seg_erase_whole(cairn *fs, uint32_t seg)
{
    if (seg < fs->seg_count && !fs->read_only)
        count_erase(fs, seg);
    return cn_dev_erase_seg(fs, seg);
}

/* The first block of a segment erased (the rest when a writer reaches
 * them); a free segment one block long is then ERASED. */
CN_NOINLINE int cn_seg_erase_first(cairn *fs, uint32_t seg)
{
    int err;
    if (seg >= fs->seg_count || fs->read_only)
        return cn_dev_erase_first(fs, seg); /* (refused there) */
    count_erase(fs, seg);
    err = cn_dev_erase_first(fs, seg);
    if (!err && (fs->segs[seg].state == CN_SEG_FREE || fs->segs[seg].state == CN_SEG_ERASED))
        fs->segs[seg].state = cn_dev_front(fs, seg) * fs->dev->geo.pages_per_block ==
                                      fs->seg_pages
                                  ? CN_SEG_ERASED
                                  : CN_SEG_FREE; /* the caller gives it its state at once */
    return err;
}

/* ---- age: classes that grow about as log2 of the time ---- */

static uint32_t tick_len(const cairn *fs)
{
    return fs->seg_count / 16u > 0 ? fs->seg_count / 16u : 1u;
}

/* The ticks a class stands for (and back: the class of an age in ticks). */
static uint32_t class_ticks(uint32_t c) { return c == 0 ? 0 : 1u << (c - 1u); }
static unsigned ticks_class(uint32_t t)
{
    unsigned c = 0;
    while (t > 0 && c < CN_AGE_MAX) {
        c++;
        t >>= 1;
    }
    return c;
}

uint32_t cn_seg_age(const cairn *fs, uint32_t s) { return class_ticks(fs->segs[s].age); }

/* Data moved from `from` into s keeps its age. */
void cn_seg_age_at_least(cairn *fs, uint32_t s, uint32_t from)
{
    if (fs->segs[s].age < fs->segs[from].age)
        fs->segs[s].age = fs->segs[from].age & CN_AGE_MAX;
}

/* Segment s was opened by a writer: new data, and the clock moves on. */
void cn_seg_opened(cairn *fs, uint32_t s)
{
    uint32_t t, n;
    fs->segs[s].age = 0;
    if (++fs->seg_clock % tick_len(fs) != 0)
        return;
    n = fs->seg_clock / tick_len(fs);
    for (t = fs->seg_base; t < fs->seg_count; t++) {
        struct cn_seg *g = &fs->segs[t];
        if (t != s && g->age < CN_AGE_MAX && n % (1u << g->age) == 0 &&
            (g->state == CN_SEG_OPEN || g->state == CN_SEG_FULL || g->state == CN_SEG_LOG))
            g->age = (g->age + 1u) & CN_AGE_MAX;
    }
}

/* ---- the checkpoint's 12-byte entries ---- */

void cn_seg_entry_out(const cairn *fs, uint32_t s, uint8_t *e)
{
    const struct cn_seg *g = &fs->segs[s];
    cn_put32(e + CN_CK_E_ERASES, cn_seg_erases(fs, s));
    cn_put32(e + CN_CK_E_STAMP, fs->seg_clock - class_ticks(g->age) * tick_len(fs));
    cn_put16(e + CN_CK_E_LIVE, (uint16_t)g->live);
    e[CN_CK_E_STATE] = (uint8_t)g->state;
    e[CN_CK_E_FLAGS] = (uint8_t)g->flags;
}

/* Loading a table, entry by entry: the erase counts go in relative to the
 * least seen so far (fs->wear_base), and when a lower one comes every wear
 * before it goes up by the difference (saturating, as it would have). */
void cn_seg_load_begin(cairn *fs)
{
    fs->wear_base = UINT32_MAX;
}

static void lower_base(cairn *fs, uint32_t upto, uint32_t count)
{
    uint32_t s, d = fs->wear_base - count;
    if (fs->wear_base != UINT32_MAX)
        for (s = 0; s < upto; s++)
            if (anchor_index(fs, s) < 0)
                set_wear(&fs->segs[s], fs->segs[s].wear + d);
    fs->wear_base = count;
}

/* CAIRN_ERR_CORRUPT for a state no cairn writes. Flags no cairn knows are
 * dropped. */
int cn_seg_entry_in(cairn *fs, uint32_t s, const uint8_t *e)
{
    struct cn_seg *g = &fs->segs[s];
    uint32_t count = cn_get32(e + CN_CK_E_ERASES);
    uint32_t age = (fs->seg_clock - cn_get32(e + CN_CK_E_STAMP)) / tick_len(fs);
    int a = anchor_index(fs, s);
    if (e[CN_CK_E_STATE] > CN_SEG_BAD)
        return CAIRN_ERR_CORRUPT;
    g->live = cn_get16(e + CN_CK_E_LIVE);
    g->state = e[CN_CK_E_STATE] & 7u;
    /* Free with live pages: a checkpoint before session 40 freed it in the
     * middle of a GC move (cn_seg_release_dead). Closed, so that GC can take
     * it (a FREE segment is never a victim) and it stays out of the pool. */
    if ((g->state == CN_SEG_FREE || g->state == CN_SEG_ERASED) && g->live > 0)
        g->state = CN_SEG_FULL;
    cn_seg_set_flags(g, e[CN_CK_E_FLAGS]);
    g->age = ticks_class(age) & CN_AGE_MAX;
    g->wear = 0;
    if (a >= 0)
        fs->anchor_erases[a] = count;
    else if (wears(fs, s) && count < fs->wear_base)
        lower_base(fs, s, count);
    if (a < 0 && fs->wear_base != UINT32_MAX && count > fs->wear_base)
        set_wear(g, count - fs->wear_base);
    return 0;
}

void cn_seg_load_end(cairn *fs)
{
    if (fs->wear_base == UINT32_MAX)
        fs->wear_base = 0;
    rebase(fs);
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

/* Lowest and highest erase count of the segments in service, anchors apart
 * (they are erased far more often, by design); returns the difference (what
 * static wear levelling watches). */
uint32_t cn_wear_spread(const cairn *fs, uint32_t *min_out, uint32_t *max_out)
{
    uint32_t s, lo = UINT32_MAX, hi = 0;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        uint32_t e = fs->segs[s].wear;
        if (!wears(fs, s))
            continue;
        lo = e < lo ? e : lo;
        hi = e > hi ? e : hi;
    }
    if (lo > hi)
        lo = hi;
    if (min_out)
        *min_out = fs->wear_base + lo;
    if (max_out)
        *max_out = fs->wear_base + hi;
    return hi - lo;
}

/* Is free segment a a better pick than b? An erased one first: it saves the
 * write an erase (cairn_gc erased it in idle time for that, picking the least
 * worn). Then hot writes take the least-worn segment, cold (GC-moved) data
 * the most-worn one, so that blocks which have seen many erases rest under
 * data that rarely changes. */
static int better(const cairn *fs, uint32_t a, uint32_t b, int worn)
{
    uint32_t ea = fs->segs[a].wear, eb = fs->segs[b].wear;
    int za = fs->segs[a].state == CN_SEG_ERASED, zb = fs->segs[b].state == CN_SEG_ERASED;
    if (za != zb)
        return za;
    return worn ? ea > eb : ea < eb;
}

CN_NOINLINE static uint32_t pick_free(const cairn *fs, int worn)
{
    uint32_t s, best = CN_NONE;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (seg_is_free(fs, s) && (best == CN_NONE || better(fs, s, best, worn)))
            best = s;
    return best;
}

/* The caller of cn_seg_alloc was entitled to one segment, and one whose
 * erase failed took it: may the next come from one below its floor? A
 * squeeze at 2 free whose segment failed to erase was left with 1 and
 * stopped half-way, and every remove after was refused (test_nospc
 * wedge-worn, seed 13 run 7: nand-dhara, 43 blocks). Only writers the
 * reserve is kept for: user data gets NOSPC as before, so GC rebuilds the
 * reserve before user data has a segment again. Not at CN_RECOVERY_SEGS:
 * the journal and GC's recorded moves leave a recovery its segments, since
 * a replay names what they wrote; a squeeze or a borrowing commit (below
 * them) writes what only the next checkpoint names, and nodes (above) stay
 * above them. Not GC's cold head, whose last segment is the metadata head's
 * (cn_seg_alloc), nor a recovery's open phase, which may take every one. */
static int may_go_below(const cairn *fs, uint32_t floor, int worn)
{
    if (worn || fs->recovering == CN_RECOVERY_OPEN || floor == 0 || floor >= CN_RESERVE_SEGS)
        return 0;
    return floor != CN_RECOVERY_SEGS;
}

/* Hand out a free segment, erased, if more than `floor` are free (a mount's
 * recovery may take the last ones). A segment whose erase fails is retired
 * and the next one tried (see may_go_below): nothing lived there, so
 * nothing is lost. */
int cn_seg_alloc(cairn *fs, uint32_t floor, int worn, uint32_t *seg_out)
{
    uint32_t failed = 0; /* segments this call retired: their erase failed */
    *seg_out = CN_NONE;
    for (;;) {
        uint32_t best;
        int err;
        /* a recovery may take the last segments until its first checkpoint
         * lands: a cut before gives them back. After it, a cut would start
         * the next recovery from that checkpoint with what followed it in
         * the journal: torture nor-w25q128-b16 seed 7 (--cuts 107), a
         * recovery's GC wrote a checkpoint at 2 free segments, took one
         * more for its moves and was cut; every mount after found 1 free
         * after the replay, 0 after restarting the journal: NOSPC for good.
         * GC's cold head (`worn`: apart from the metadata head, on volumes
         * of 64 segments or more) leaves the last one to the metadata head,
         * where the victim's nodes and that checkpoint's flush go: a segment
         * whose erase failed had taken one, the victim's moves the last, and
         * every mount after found dead segments waiting for a checkpoint
         * whose three dirty nodes had nowhere to go: NOSPC for good (torture
         * --overwrite 60, nor-w25q128-b4 seed 72001). Where cold data shares
         * the metadata head, a squeeze into the last segment takes both. */
        uint32_t least = fs->recovering != CN_RECOVERY_OPEN ? floor : worn ? 1u : 0u;
        if (failed && may_go_below(fs, floor, worn))
            least--;
        if (cn_free_segs(fs) <= least)
            return CAIRN_ERR_NOSPC;
        best = pick_free(fs, worn);
        if (best == CN_NONE)
            return CAIRN_ERR_NOSPC;
        if (best == fs->anchor_evict) { /* the standby, lent (anchor.c): */
            fs->anchor_evict = CN_NONE; /* no longer kept, nor durably free */
            fs->evict_durable_free = 0;
            fs->standby_lent = 0;
        }
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
        err = cn_seg_erase_first(fs, best);
        if (err == 0) {
            *seg_out = best;
            return 0;
        }
        if (!(fs->segs[best].flags & CN_SF_FAILING))
            return err;
        cn_seg_retire(fs, best);
        failed++;
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
        cn_dev_set_front(fs, seg, blocks > 0 ? blocks : 1);
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
    uint32_t h;
    /* every other segment has no front (the anchors': cn_ckpt_load) */
    erased_up_to(fs, fs->log.seg, (fs->log.off + fs->page_size - 1) / fs->page_size);
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg != CN_NONE)
            erased_up_to(fs, fs->head[h].seg, fs->head[h].page);
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

/* Idle time (cairn_gc) erases ahead. The blocks ahead of a writer in a
 * lazily erased segment come first: they are the next ones a write would
 * erase (the lowest such segment, when several writers have some). */
static uint32_t lazy_writer_seg(const cairn *fs)
{
    uint32_t i, s, page, best = CN_NONE, bpl = fs->seg_pages / fs->dev->geo.pages_per_block;
    for (i = 0; i <= CN_HEADS; i++) {
        s = writer_at(fs, i, &page);
        if (s < fs->seg_count && s >= fs->seg_base && s < best && cn_dev_front(fs, s) < bpl &&
            (fs->segs[s].state == CN_SEG_OPEN || fs->segs[s].state == CN_SEG_LOG))
            best = s;
    }
    return best;
}

/* Erase the least worn free segment not erased yet (the one hot writes take
 * next), so that a later write finds it ready. 1 when one was erased, 0 when
 * none is left to erase. A segment whose erase fails is retired and the next
 * one tried. An erase cut by power costs nothing: a mount after a cut trusts
 * no erase (fs.c). */
static int erase_free_seg(cairn *fs)
{
    for (;;) {
        uint32_t s, best = CN_NONE;
        int err;
        for (s = fs->seg_base; s < fs->seg_count; s++)
            if (seg_is_free(fs, s) && fs->segs[s].state == CN_SEG_FREE &&
                (best == CN_NONE || fs->segs[s].wear < fs->segs[best].wear))
                best = s;
        if (best == CN_NONE)
            return 0;
        err = cn_seg_erase_whole(fs, best);
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
    rebase(fs); /* it may have been the least worn */
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
 * failing ones are retired. Not the segment GC's moves are in: until their
 * record counts them its pages are live uncounted. On volumes under 64
 * segments GC moves into the metadata head, and when a move filled its
 * segment and the record's append rolled the journal (journal.c move_log),
 * the flush of nodes closed that segment and this freed it with the move's
 * pages in it: FREE with 32 live pages after the record, which cairn_check
 * reports and GC never collects (tests/tool/fsx.py seed 42 on 512 KiB of
 * nor-w25q128, session 40). */
void cn_seg_release_dead(cairn *fs)
{
    uint32_t s;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        struct cn_seg *g = &fs->segs[s];
        if (g->state == CN_SEG_LOG && s != fs->log.seg)
            g->state = g->live ? CN_SEG_FULL : CN_SEG_FREE; /* data pages stay */
        else if (g->state == CN_SEG_FULL && g->live == 0 && s != fs->gc_moving)
            g->state = CN_SEG_FREE;
        /* A victim freed in the middle of GC's walk (its data died) ends the
         * walk at GC's next step (gc.c): handed out and filled again before
         * that step, it would read FULL once more and the walk would go on
         * past keys that now point into it (test_nospc "mount":
         * CAIRN_ERR_CORRUPT from a write, 26 live pages left behind the
         * cursor, once idle-begun victims waited for the next idle call) */
        if (g->state == CN_SEG_FREE && s == fs->gc.victim)
            fs->gc.freed = 1;
        if (g->state == CN_SEG_FREE) {
            if (g->flags & CN_SF_FAILING)
                cn_seg_retire(fs, s);
            /* an anchor's replacement stays reserved */
            cn_seg_set_flags(g, g->flags & CN_SF_EVICT);
        }
    }
}
