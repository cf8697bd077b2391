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
 * seed 244092). It costs one segment of capacity. */
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

/* Index (0, 1) of the failing anchor, or CN_NONE (none, or both). */
static uint32_t failing_anchor(const cairn *fs)
{
    int f0 = (fs->segs[fs->anchor[0]].flags & CN_SF_FAILING) != 0;
    int f1 = (fs->segs[fs->anchor[1]].flags & CN_SF_FAILING) != 0;
    if (f0 == f1)
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

/* Step 1: nothing new goes into R; what is there leaves. */
static void start_evicting(cairn *fs, uint32_t r)
{
    cn_seg_add_flags(&fs->segs[r], CN_SF_EVICT);
    fs->anchor_evict = r;
    fs->evict_durable_free = 0;
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
        start_evicting(fs, r);
        /* what a mount found is durable: the checkpoint and the journal */
        fs->evict_durable_free = (uint8_t)(is_free(fs, r) && (failing || flagged));
    }
}

/* Is an anchor failing and its replacement not made yet? (mount) */
int cn_anchor_pending(const cairn *fs)
{
    return failing_anchor(fs) != CN_NONE;
}

/* Does the replacement of a failing anchor still hold data GC should move
 * now? (cn_settle) A standby that holds data (a volume that had none, or the
 * next one after a replacement) is emptied by GC as an ordinary victim. */
int cn_anchor_evicting(const cairn *fs)
{
    return fs->anchor_evict != CN_NONE && failing_anchor(fs) != CN_NONE &&
           fs->segs[fs->anchor_evict].state == CN_SEG_FULL &&
           fs->segs[fs->anchor_evict].live > 0;
}
