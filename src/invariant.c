/* The state check: the invariants of docs/DESIGN.md ("Invariants") that RAM
 * alone can show, asserted at the entry of every operation (so after the
 * one before it) and at the end of a mount, in builds that define
 * CAIRN_STATE_CHECKS (the project's sanitizer builds). It reads no device
 * and changes nothing; its cost is a pass over the segment table and the
 * open files. */
#include "cn.h"

#ifdef CAIRN_STATE_CHECKS

/* I5: the anchors are the first two good segments of the table, named so. */
static void check_anchors(const cairn *fs)
{
    uint32_t s;
    CN_ASSERT(fs->anchor[0] < fs->anchor[1] && fs->anchor[1] < fs->seg_base);
    CN_ASSERT(fs->ckpt_anchor <= 1u);
    for (s = 0; s < fs->seg_base; s++) {
        int anchor = s == fs->anchor[0] || s == fs->anchor[1];
        CN_ASSERT(anchor ? fs->segs[s].state == CN_SEG_ANCHOR : fs->segs[s].state == CN_SEG_BAD);
    }
    /* I3: the anchor holding the newest checkpoint is not failing unless both are */
    CN_ASSERT(fs->anchor_new != CN_NONE || fs->anchor_evict == CN_NONE ||
              (fs->segs[fs->anchor_evict].flags & CN_SF_EVICT) || fs->standby_lent);
    /* a lent standby is still free: handing it out ends the loan (seg.c) */
    CN_ASSERT(!fs->standby_lent ||
              (fs->anchor_evict != CN_NONE && fs->segs[fs->anchor_evict].live == 0 &&
               (fs->segs[fs->anchor_evict].state == CN_SEG_FREE ||
                fs->segs[fs->anchor_evict].state == CN_SEG_ERASED)));
}

/* I6: every segment after the anchors is in a state with its counts in range;
 * a replacement anchor is the only ANCHOR past seg_base, and only while its
 * checkpoint is pending. */
static void check_segments(const cairn *fs)
{
    uint32_t s, free = 0;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        const struct cn_seg *g = &fs->segs[s];
        CN_ASSERT(g->state <= CN_SEG_BAD && g->live <= fs->seg_pages);
        CN_ASSERT(g->state != CN_SEG_ANCHOR || s == fs->anchor_new);
        CN_ASSERT(g->state != CN_SEG_BAD || g->live == 0);
        /* what is free holds nothing live (session 40: GC's moves counted
         * into a segment a checkpoint had freed, seg.c) */
        CN_ASSERT((g->state != CN_SEG_FREE && g->state != CN_SEG_ERASED) || g->live == 0);
        free += (uint32_t)((g->state == CN_SEG_FREE || g->state == CN_SEG_ERASED) &&
                           g->live == 0 && !(g->flags & (CN_SF_FAILING | CN_SF_EVICT)));
    }
    CN_ASSERT(free == cn_free_segs(fs)); /* I7: free means free and not withheld */
}

/* I13: every part-erased segment has a front of its own (device.c), and a
 * writer's segment has its first block erased (it was when handed out). */
static void check_fronts(const cairn *fs)
{
    uint32_t i, j, h;
    for (i = 0; i < CN_FRONTS; i++)
        for (j = i + 1u; j < CN_FRONTS && fs->fronts[i].seg != CN_NONE; j++)
            CN_ASSERT(fs->fronts[j].seg != fs->fronts[i].seg);
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg != CN_NONE && fs->head[h].seg < fs->seg_count &&
            fs->segs[fs->head[h].seg].state == CN_SEG_OPEN)
            CN_ASSERT(cn_dev_front(fs, fs->head[h].seg) >= 1u);
    if (fs->log.seg < fs->seg_count)
        CN_ASSERT(cn_dev_front(fs, fs->log.seg) >= 1u);
}

/* I8: heads append inside open segments; the journal writes inside its own. */
static void check_heads(const cairn *fs)
{
    uint32_t h;
    for (h = 0; h < CN_HEADS; h++) {
        const struct cn_head *hd = &fs->head[h];
        if (hd->seg == CN_NONE)
            continue;
        CN_ASSERT(hd->seg >= fs->seg_base && hd->seg < fs->seg_count);
        CN_ASSERT(hd->page <= fs->seg_pages);
    }
    if (fs->unwritten && fs->log.seg == CN_NONE)
        return; /* no journal until the first change (journal.c cn_session_begin) */
    CN_ASSERT(fs->log.seg >= fs->seg_base && fs->log.seg < fs->seg_count);
    CN_ASSERT(fs->segs[fs->log.seg].state == CN_SEG_LOG);
    CN_ASSERT(fs->log.flushed <= fs->log.off && fs->log.off <= fs->seg_pages * fs->page_size);
}

/* I9: the node cache holds at most its slots, dirty ones counted. */
static void check_cache(const cairn *fs)
{
    uint32_t i, dirty = 0;
    for (i = 0; i < fs->nslots; i++) {
        const struct cn_slot *sl = &fs->slots[i];
        CN_ASSERT(!sl->dirty || sl->used);
        dirty += sl->dirty;
    }
    CN_ASSERT(dirty == fs->dirty_nodes);
    CN_ASSERT(fs->height >= 1u && fs->height <= CN_MAX_HEIGHT);
}

/* I10: handles name open files; a file's buffered bytes lie within it. */
static void check_files(const cairn *fs)
{
    uint32_t i, refs[CN_MAX_OPEN] = {0};
    for (i = 0; i < fs->max_open; i++) {
        const struct cn_handle *hd = &fs->handles[i];
        if (hd->kind == CN_HND_FILE) {
            CN_ASSERT(hd->file < fs->max_open && fs->files[hd->file].id != 0);
            refs[hd->file]++;
        }
    }
    for (i = 0; i < fs->max_open; i++) {
        const struct cn_file *f = &fs->files[i];
        if (f->id == 0 || f->id == CN_NONE)
            continue;
        CN_ASSERT(f->size >= 0 && f->rec_size >= 0);
        /* (an empty range is dlo = page size, dhi = 0) */
        CN_ASSERT(f->dlo <= fs->page_size && f->dhi <= fs->page_size);
        CN_ASSERT(!f->buf_dirty || f->dlo <= f->dhi);
        CN_ASSERT(f->refs >= refs[i]);
    }
    /* the stage: a lent slot, pages of a file open for writing, within its size
     * and at most a slot of them, never the page in its buffer */
    if (fs->stage_slot != CN_NONE) {
        const struct cn_file *f = &fs->files[fs->stage_file];
        CN_ASSERT(fs->stage_slot < fs->nslots && fs->slots[fs->stage_slot].pins == 1 &&
                  !fs->slots[fs->stage_slot].dirty);
        CN_ASSERT(fs->stage_file < fs->max_open && f->id != 0 && f->id != CN_NONE);
        CN_ASSERT(fs->stage_pages >= 1u && fs->stage_pages <= fs->node_pages);
        CN_ASSERT(fs->stage_dlo <= fs->page_size);
        CN_ASSERT((uint64_t)(fs->stage_fpage + fs->stage_pages) * fs->page_size <=
                  (uint64_t)(uint32_t)f->size);
        CN_ASSERT(f->buf_page == CN_NONE || f->buf_page < fs->stage_fpage ||
                  f->buf_page >= fs->stage_fpage + fs->stage_pages);
    }
}

void cn_state_check(const cairn *fs)
{
    if (!fs->mounted || fs->broken)
        return;
    check_anchors(fs);
    check_segments(fs);
    check_fronts(fs);
    check_cache(fs);
    check_files(fs);
    if (!fs->read_only)
        check_heads(fs);
}

#else

void cn_state_check(const cairn *fs) { (void)fs; }

#endif

/* The guard at the entry of every operation: a mounted, working file system
 * (and a writable one for a change), the state check, and the per-call
 * counters started afresh. Below every object, so that all of them may call
 * it. */
int cn_fs_ready(cairn *fs, int write)
{
    if (fs == NULL || !fs->mounted)
        return CAIRN_ERR_INVAL;
    if (fs->broken)
        return CAIRN_ERR_IO;
    cn_state_check(fs);
    if (write && fs->read_only)
        return CAIRN_ERR_ROFS;
    if (write) {
        fs->call_erases = 0;
        fs->call_moved = 0;
        fs->call_hard = 0;
        fs->call_pages = 0;
        fs->call_flags = fs->session_pending ? CN_CALL_FIRST : 0u;
    }
    return 0;
}
