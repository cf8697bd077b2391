/* Replacing a failing anchor.
 *
 * Mount finds the anchors as the first two segments whose blocks the driver
 * does not report bad, so a replacement can only be the first good segment
 * after them (R). When a program or erase fails in an anchor (F), the
 * checkpoints go on in the other one (G, ckpt.c) and this file makes R ready:
 * 1. R is flagged EVICT: it is handed out no more, a head writing there
 *    moves on (alloc.c), the journal continues elsewhere at its next record
 *    (journal.c), and GC empties it first (cn_settle runs a step while it
 *    holds data);
 * 2. once a checkpoint has freed it, the next checkpoint write erases R,
 *    names it an anchor and F bad in the table, and goes into G;
 * 3. only then are F's blocks marked bad (ckpt.c), so that a mount finds
 *    {G, R}. A cut between 2 and 3 leaves {F, G} found and a table that
 *    names R: the mount finishes step 3 (cn_ckpt_adopt_anchors).
 * At every point the newest valid checkpoint is in G, which is never erased
 * while it holds it (invariant I3).
 *
 * On NAND, R is kept free before any anchor fails (the standby, flagged
 * EVICT from format on): a session's first checkpoint must go into a page no
 * earlier attempt from the same newest checkpoint can have torn (NOP 1: a
 * page cut before its first byte reads erased, yet may not be programmed
 * again), which only an erase gives. That is the other anchor, erased first;
 * when that erase fails, the standby is erased and takes the checkpoint
 * (ckpt.c next_slot), where the healthy anchor's next slot was the same for
 * every attempt and one cut there failed every later mount (torture nand-4k
 * seed 244092). It costs one segment of capacity, which a full volume may
 * not have: the standby waits while the free segments are at the user
 * reserve, and a delete refused for room borrows it (both below). */
#include "cn.h"

/* Are all erase blocks of segment s good, as the driver's marks say? */
int cn_seg_good(cairn *fs, uint32_t s)
{
    struct cairn_dev *d = fs->dev;
    uint32_t bpl = fs->seg_pages / d->geo.pages_per_block, i;
    if (d->is_bad == NULL)
        return 1;
    for (i = 0; i < bpl; i++)
        if (d->is_bad(d->ctx, s * bpl + i) != 0)
            return 0;
    return 1;
}

/* Does this volume keep R free while no anchor fails (NAND: above)? */
static int keeps_standby(const cairn *fs)
{
    return fs->medium == CAIRN_MEDIUM_NAND && !fs->read_only;
}

/* Can the volume spare the standby now (NAND, no anchor failing)? Keeping
 * one costs a segment: a free one taken out of the pool, or the moves that
 * empty one of data. On a volume down to its user reserve that segment is
 * the one a delete's nodes need: after a replacement on a full 45-block
 * nand-jffs2 volume the next standby held data, GC emptied it into the last
 * free segments and every remove was refused for good (test_nospc
 * wedge-anchor-worn seed 1053 run 25, which the loan below now also gets
 * through). So the standby waits until keeping it leaves the user reserve
 * whole; meanwhile a failed erase of the other anchor falls back to the
 * current anchor's next slot, as it always did while the standby held data. */
int cn_anchor_standby_affordable(const cairn *fs)
{
    return cn_free_segs(fs) > CN_RESERVE_SEGS + cn_reserved_segs(fs);
}

/* Index (0, 1) of the failing anchor to replace, or CN_NONE. With both
 * failing, the one without the newest checkpoint, which stays where it is
 * until a checkpoint has landed in the replacement (I3); the other is
 * replaced after that, as a single failing one. Before, both failing meant
 * none: the next checkpoint found no slot (IO from every write) even with R
 * free and ready (test_nospc wedge-anchor-worn seeds 1046 run 30 and 1060
 * run 9, nand-dhara with the standby ready; session 36). */
static uint32_t failing_anchor(const cairn *fs)
{
    int f0 = (fs->segs[fs->anchor[0]].flags & CN_SF_FAILING) != 0;
    int f1 = (fs->segs[fs->anchor[1]].flags & CN_SF_FAILING) != 0;
    if (f0 && f1)
        return fs->ckpt_anchor <= 1u ? fs->ckpt_anchor ^ 1u : CN_NONE;
    if (!f0 && !f1)
        return CN_NONE;
    return f0 ? 0u : 1u;
}

/* The segment that will replace the failing anchor: the first good one
 * after the anchors. */
static uint32_t replacement(cairn *fs)
{
    uint32_t s;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (fs->segs[s].state != CN_SEG_BAD && cn_seg_good(fs, s))
            return s;
    return CN_NONE;
}

static int is_free(const cairn *fs, uint32_t r)
{
    const struct cn_seg *g = &fs->segs[r];
    return (g->state == CN_SEG_FREE || g->state == CN_SEG_ERASED) && g->live == 0;
}

/* A delete refused for room on a volume down to GC's floor (space.c
 * cn_record_delete): a free standby is lent to the pool, where the delete's
 * nodes may take it; 1 when it was. With the standby held, segments retired
 * on a full nand-jffs2 volume left 2 free and every remove was refused for
 * good (test_nospc wedge-anchor-worn seed 1091 run 4: 37 blocks, three
 * retired; 1094 run 0). Only on a refusal: lent whenever a delete found 2
 * free, it was lent 8 times in a logger's 315 removes on a healthy 64-block
 * volume, and was not kept in 16% of its calls. It stays anchor_evict while
 * lent: until the allocator hands it out (seg.c), what a checkpoint showed
 * of it still holds, so an anchor failing meanwhile takes it at once as a
 * kept one (the worn hunt's seed 1015 run 8: both anchors failed a few
 * checkpoints after a loan, and without that claim the second failure found
 * no replacement ready: IO). It is kept again once the volume has room
 * (cn_anchor_standby_affordable); the next checkpoint records it either way. */
int cn_anchor_lend_standby(cairn *fs)
{
    uint32_t r = fs->anchor_evict;
    int failing = ((fs->segs[fs->anchor[0]].flags | fs->segs[fs->anchor[1]].flags) &
                   CN_SF_FAILING) != 0;
    if (!keeps_standby(fs) || failing || fs->anchor_new != CN_NONE || r == CN_NONE ||
        fs->standby_lent || !is_free(fs, r) || cn_free_segs(fs) > CN_GC_FLOOR)
        return 0;
    cn_seg_clear_flags(&fs->segs[r], CN_SF_EVICT);
    fs->standby_lent = 1;
    return 1;
}

/* Step 1: nothing new goes into R; what is there leaves. A lent standby
 * taken back keeps what the last checkpoint showed of it. */
static void start_evicting(cairn *fs, uint32_t r)
{
    if (!fs->standby_lent || fs->anchor_evict != r)
        fs->evict_durable_free = 0;
    cn_seg_add_flags(&fs->segs[r], CN_SF_EVICT);
    fs->anchor_evict = r;
    fs->standby_lent = 0;
}

/* A checkpoint landed: does it show R free? The commit that frees R marks it
 * free in RAM before its checkpoint is written, and that checkpoint may be
 * cut: R is erased only once a durable checkpoint no longer names anything
 * in it (torture smallest seed 11: R erased in the very checkpoint write
 * whose cut left the previous checkpoint's root node in R, mount CORRUPT). */
void cn_anchor_landed(cairn *fs)
{
    fs->evict_durable_free = fs->anchor_evict != CN_NONE && is_free(fs, fs->anchor_evict);
}

/* Step 2: R is free; erase it and name it an anchor in the table. */
static int take_replacement(cairn *fs, uint32_t f, uint32_t r)
{
    int err = cn_seg_erase_whole(fs, r);
    if (err) {
        fs->anchor_evict = CN_NONE;
        if (!(fs->segs[r].flags & CN_SF_FAILING))
            return err;
        cn_seg_retire(fs, r); /* a failing R: the next good one is tried */
        return 0;
    }
    fs->segs[r].state = CN_SEG_ANCHOR;
    fs->segs[r].flags = 0;
    fs->segs[r].live = 0;
    fs->segs[fs->anchor[f]].state = CN_SEG_BAD;
    fs->anchor_evict = CN_NONE;
    fs->anchor_new = r;
    return 0;
}

/* Before a checkpoint is written (ckpt.c): move the replacement of a failing
 * anchor on by one step; that checkpoint makes the step durable. */
int cn_anchor_tend(cairn *fs)
{
    uint32_t f = failing_anchor(fs), r;
    const struct cn_seg *g;
    if ((f == CN_NONE && !keeps_standby(fs)) || fs->anchor_new != CN_NONE)
        return 0;
    r = replacement(fs);
    if (r == CN_NONE)
        return 0; /* no good segment left: the volume lives on one anchor */
    g = &fs->segs[r];
    if (f == CN_NONE && !(g->flags & CN_SF_EVICT) && !cn_anchor_standby_affordable(fs)) {
        if (!fs->standby_lent)
            fs->anchor_evict = CN_NONE; /* the standby waits for room (above) */
        return 0;
    }
    if (!(g->flags & CN_SF_EVICT) || fs->anchor_evict != r)
        start_evicting(fs, r); /* (the flag is in the table: again after a mount) */
    if (f != CN_NONE && is_free(fs, r) && fs->evict_durable_free && fs->ckpt_anchor != f)
        return take_replacement(fs, f, r);
    return 0;
}

/* Step 1 again, at mount: anchor_evict lives in RAM, the EVICT flag in the
 * table. Without this a mount would not empty R before its checkpoints, and
 * each session of a brown-out loop would spend the healthy anchor's spare
 * slots on checkpoints that bring the replacement no closer (torture:
 * smallest, seed 11: mount IO for ever once they ran out). Called on the
 * state the checkpoint holds, before a recovery replays the journal: R free
 * there is durable (every checkpoint written while an anchor is failing
 * flags R EVICT, so nothing after it went into R), and a recovery's own
 * checkpoints may then take R (step 2) instead of using up the healthy
 * anchor's last slots. */
void cn_anchor_resume(cairn *fs)
{
    uint32_t r;
    int failing = failing_anchor(fs) != CN_NONE, flagged;
    if ((!failing && !keeps_standby(fs)) || fs->anchor_new != CN_NONE)
        return;
    r = replacement(fs);
    if (r != CN_NONE) {
        /* a standby the checkpoint does not flag may have taken data since */
        flagged = (fs->segs[r].flags & CN_SF_EVICT) != 0;
        if (!failing && !flagged && !cn_anchor_standby_affordable(fs))
            return; /* it waits for room (cn_anchor_standby_affordable) */
        start_evicting(fs, r);
        /* what a mount found is durable: the checkpoint and the journal */
        fs->evict_durable_free = (uint8_t)(is_free(fs, r) && (failing || flagged));
    }
}

/* Is one anchor failing and its replacement not made yet? (mount, which
 * makes it now.) Not with both failing: where the replacement is not ready
 * the mount's checkpoint would fail and the mount with it, where the volume
 * has always mounted to be read; the first write's checkpoint makes it. */
int cn_anchor_pending(const cairn *fs)
{
    int f0 = (fs->segs[fs->anchor[0]].flags & CN_SF_FAILING) != 0;
    int f1 = (fs->segs[fs->anchor[1]].flags & CN_SF_FAILING) != 0;
    return f0 != f1;
}

/* Does the replacement of a failing anchor still hold data GC should move
 * now? (cn_settle) A standby that holds data (a volume that had none, or the
 * next one after a replacement) is emptied by GC as an ordinary victim. One
 * a head still has open counts (space.c closes the head first). */
int cn_anchor_evicting(const cairn *fs)
{
    return fs->anchor_evict != CN_NONE && failing_anchor(fs) != CN_NONE &&
           (fs->segs[fs->anchor_evict].state == CN_SEG_FULL ||
            fs->segs[fs->anchor_evict].state == CN_SEG_OPEN) &&
           fs->segs[fs->anchor_evict].live > 0;
}
