/* Making room at the entry of an operation (the settle point): begin the
 * session, commit when dead segments wait, collect garbage in bounded steps
 * or, when the data would have nowhere else to go, whole victims; promise
 * pages to a file (fallocate); free orphaned objects. It sits above the
 * records and GC and calls only down: the allocator below it only accounts
 * and answers NOSPC (docs/DESIGN.md "Layers"). */
#include "cn.h"

/* A call that programs no more than this is light (cn_write_call_ends). */
#define CN_LIGHT_PAGES 8u

/* Pages not holding live data, in every segment the file system may use. */
static uint64_t reclaimable_pages(const cairn *fs)
{
    uint64_t n = 0;
    uint32_t s;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (fs->segs[s].state != CN_SEG_BAD)
            n += fs->seg_pages - fs->segs[s].live;
    return n;
}

/* Before a writer's collection gives up: the commit that victims emptied
 * for space wait for (gc.c commit_due), so that they are free together.
 * Without it a write came out short with an emptied victim waiting, and the
 * next write, whose settle committed first, got all its bytes in
 * (test_space_torture, age nand: the final fill did not end). Then the
 * collection goes on counting the nodes each victim's commit really
 * rewrites (CN_GC_LAST, gc.c assumed_nodes) where the bound of height + 4
 * refused it, still keeping a delete's room. Before, 62 small files removed
 * from 512 KiB of nor-w25q128 left 15 dirty nodes (60 pages, which every
 * victim's count carries), 4 free segments and 1,100 pages of garbage in
 * segments 21-47 of 64 live; GC refused every victim and a new file took
 * 24,576 bytes, 106,496 now (122,880 after the same removes in another
 * order; tar on the FUSE mount, DESIGN.md "Session 41"). Writing the dirty
 * nodes here too (a commit) took it to 122,880, but let one call of
 * test_space's bounded NAND run move 154 pages instead of 109: not kept.
 * A full volume (`full`) gets only the commit of its dead segments. What
 * the last try empties gets a commit of its own before the call gives up
 * (cn_space_for_user): without it a create after the same removes was
 * refused with a victim emptied and waiting. */
static int last_try(cairn *fs, int full, int *why)
{
    *why = CN_GC_LAST;
    if (cn_dead_segs(fs) > 0)
        return cn_commit(fs);
    return full ? CAIRN_ERR_NOSPC : 0;
}

/* Room for user data: free segments beyond the reserve (and beyond what
 * reservations hold), collecting garbage when there are not enough. The
 * volume is full when what could be reclaimed is no more than the reserve;
 * below that every collected victim gains pages, so the loop ends. */
int cn_space_for_user(cairn *fs, int last)
{
    uint32_t rounds = 0, tries = last ? 0u : 2u;
    int why = CN_GC_SPACE;
    while (cn_free_segs(fs) <= CN_RESERVE_SEGS + cn_reserved_segs(fs)) {
        int err, full;
        cn_close_full_heads(fs);
        full = reclaimable_pages(fs) <=
                   (uint64_t)(CN_RESERVE_SEGS + 2u + cn_reserved_segs(fs)) * fs->seg_pages ||
               ++rounds > 2 * fs->seg_count;
        err = full ? CAIRN_ERR_NOSPC : cn_gc_collect(fs, why);
        if (err == CAIRN_ERR_NOSPC && tries < 2u) {
            /* the last try, then the commit of what it emptied */
            tries++;
            if (tries == 1u)
                err = last_try(fs, full, &why);
            else if (cn_dead_segs(fs) > 0u)
                err = cn_commit(fs);
        }
        if (err == CAIRN_ERR_NOSPC)
            fs->call_flags |= CN_CALL_FULL; /* (alloc.c cn_meta_spare_for_data) */
        if (err)
            return err;
    }
    return 0;
}

/* Room for an operation that writes records and tree nodes but no file data
 * (a create, an attribute). Free segments down at the user reserve refuse
 * new data segments, not such operations: their records go in the journal
 * and their nodes in the metadata head, which keep floors of their own
 * (alloc.c floor_of). So they go on while the metadata head's open segment
 * takes the tree's next flush and no segment is taken below the reserve,
 * and a new file's data goes where the data heads still have room. Before,
 * a create was refused once free segments were down at the reserve: 4 KiB
 * files on 1 MiB of nor-m25p16 stopped with most of a data segment unused
 * (0.44 of raw, a big file 0.50; test_nospc "small"). */
int cn_space_for_records(cairn *fs)
{
    int err = cn_space_for_user(fs, 1);
    if (err == CAIRN_ERR_NOSPC && cn_meta_head_room(fs) &&
        cn_free_segs(fs) >= CN_RESERVE_SEGS + cn_reserved_segs(fs))
        return 0; /* not below the reserve: a remove must still find room */
    return err;
}

/* Commits and collection a record may need, done at the top of an operation
 * (deletes on a full volume depend on it), never from GC itself. `why`:
 * CN_GC_DELETE for a delete's own records (gc.c gains). */
static int record_space(cairn *fs, int why)
{
    int err = 0;
    if (fs->read_only)
        return CAIRN_ERR_ROFS;
    if (!fs->in_gc && !fs->recovering && cn_free_segs(fs) <= CN_RESERVE_SEGS) {
        if (cn_dead_segs(fs) > 0)
            err = cn_commit(fs);
        else if (!cn_meta_room(fs, 0))
            err = cn_gc_collect(fs, why);
    }
    return err == CAIRN_ERR_NOSPC ? 0 : err;
}

/* Writes the tree's dirty nodes for an unmount or a check. A delete's or
 * an extent's nodes were admitted at GC's floor (alloc.c floor_of: such a
 * record may take the metadata head's last segment above it); once the
 * record is done the head's own floor is back, and with free segments down
 * there the nodes have nowhere to go until the next operation's settle
 * collects. Collect as that settle would, then write them; where GC refuses
 * every victim (its moves would need the very pages the dirty nodes take),
 * write them at the floor they were admitted at. Before, an unmount with
 * every file closed got NOSPC for good on a full volume until files were
 * removed (test_full seed 41063: nor-w25q128, 389 sectors, 3 free segments,
 * 8 dirty nodes, the metadata head 3 pages short; DESIGN.md "Session 41"). */
int cn_flush_nodes(cairn *fs)
{
    int err = cn_cache_flush(fs);
    if (err == CAIRN_ERR_NOSPC && !fs->in_gc && !fs->recovering) {
        err = record_space(fs, CN_GC_SPACE);
        if (!err)
            err = cn_cache_flush(fs);
        if (err == CAIRN_ERR_NOSPC && !fs->freeing) {
            fs->freeing = CN_FREEING_NODES;
            err = cn_cache_flush(fs);
            fs->freeing = 0;
        }
    }
    return err;
}

/* A failing anchor's replacement still holds data: empty it now, not in
 * steps, because the healthy anchor has only its spare slots left (anchor.c).
 * A head that has it open is closed first: open, it was no victim. On a
 * full volume whose metadata head sat in it with 16 pages left, R stayed
 * 96 pages live while the healthy anchor spent all its 48 slots, and when
 * that one failed too every write returned IO (test_nospc wedge-anchor-worn
 * seed 1012 run 1: nor-w25q128, 387 sectors; session 37). */
int cn_evict_for_anchor(cairn *fs)
{
    uint32_t rounds;
    int err = 0;
    if (cn_anchor_evicting(fs))
        cn_close_heads_in(fs, fs->anchor_evict);
    for (rounds = 0; rounds < 4u && !err && cn_anchor_evicting(fs); rounds++)
        err = cn_gc_collect(fs, CN_GC_SPACE);
    return err == CAIRN_ERR_NOSPC ? 0 : err;
}

/* Free segments down at the user reserve, but a victim is being emptied in
 * bounded steps and the call's pages fit in the data heads as they are: the
 * hard path can wait. The steps then go at the pace that empties the victim
 * before the heads fill (gc.c), and a write that does need a segment meanwhile
 * gets NOSPC from the allocator and collects from its own frame (file.c).
 * Before, the moves of a step that opened the cold head's next segment
 * brought the count to the reserve and the same call emptied a whole victim:
 * one erase and 91 pages in one 256 B write (fill-write, 2 MiB nor-m25p16).
 * Only exactly at the reserve: below it the user's share is already spent. */
static int steps_keep_up(const cairn *fs, uint32_t pages)
{
    return fs->gc.phase != CN_GC_IDLE &&
           cn_free_segs(fs) == CN_RESERVE_SEGS + cn_reserved_segs(fs) &&
           cn_data_room(fs) >= (pages > 0 ? pages : 1);
}

/* At the top of an operation that may write `pages` of file data: begin the
 * session, make room for records, and collect garbage: one bounded step
 * (cfg.gc_step_pages moved pages) while free segments run low, a whole
 * victim only when the data would otherwise have nowhere to go. Errors of
 * space are left for the allocation to report, so a write that fits in what
 * is left still happens. */
static int settle(cairn *fs, uint32_t pages, int why)
{
    int err = cn_session_begin(fs);
    cn_gc_note_write(fs); /* idle collection may gain again (gc.c idle_futile) */
    if (!err)
        err = record_space(fs, why);
    if (!err && !fs->in_gc && !fs->recovering)
        err = cn_evict_for_anchor(fs);
    if (!err && pages > 0 && !fs->in_gc) {
        uint32_t soft = CN_RESERVE_SEGS + 1u + cn_reserved_segs(fs), moved;
        /* One budget per call, however many pieces the call writes in. Only
         * while free segments run low: a victim an idle cairn_gc call began
         * waits for the next idle call while there is room. Continued by
         * every write, the victim's node phase (up to a segment of nodes)
         * fell in the first append after one idle call: 6 erase blocks and
         * 171 reads, 319 ms against 0.84 ms (4 MiB nor-w25q128, 1,000
         * files, bench first-write). */
        if (cn_free_segs(fs) <= soft && fs->call_moved < fs->gc_step) {
            err = cn_gc_step(fs, fs->gc_step - fs->call_moved, pages, &moved);
            fs->call_moved += moved;
            /* No victim fits a bounded step (it may use less than the hard
             * path). With garbage that pays the hard path still runs: before,
             * a write found no segment at 39% full (torture nor-w25q128-b4,
             * seed 31). Without (a nearly full volume), the hard path would
             * move much for little and leave GC no room: test_space's 95%
             * ageing wedged. */
            if (err == CAIRN_ERR_NOSPC && cn_gc_cheap_victim(fs))
                err = 0;
        }
        if (!err && cn_free_segs(fs) <= CN_RESERVE_SEGS + cn_reserved_segs(fs) &&
            !steps_keep_up(fs, pages))
            err = cn_space_for_user(fs, 0);
    }
    return err == CAIRN_ERR_NOSPC ? 0 : err;
}

int cn_settle(cairn *fs, uint32_t pages) { return settle(fs, pages, CN_GC_SPACE); }

/* At the top of a remove, or of a rename over a file: its records free
 * space, and on a full volume their nodes may find room only by a victim
 * the bound on a commit's nodes refuses (gc.c gains). Creates and writes do
 * not get that victim: on 1 MiB of nor-w25q128 filled with one-page files,
 * taking it for them filled the volume 52 files further and then refused
 * 1,069 removes of 2,433 (test_nospc "thin"). */
int cn_settle_delete(cairn *fs) { return settle(fs, 0, CN_GC_DELETE); }

/* A delete's record (a remove, a rename over a file, a shrink, an orphan's
 * trim), after cn_settle_delete. Refused for room with the free segments at
 * GC's floor, it tries once more with the NAND standby lent to the pool
 * (anchor.c cn_anchor_lend_standby): a refused record changed nothing. */
int cn_record_delete(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len)
{
    int err = cn_record_freeing(fs, type, p, len);
    if (err == CAIRN_ERR_NOSPC && cn_anchor_lend_standby(fs))
        err = cn_record_freeing(fs, type, p, len);
    return err;
}

/* The end of a write call that erased nothing: it takes one erase block
 * of the anchor a checkpoint switch left behind a step further (ckpt.c
 * cn_ckpt_erase_step), else, if it programmed at most CN_LIGHT_PAGES, erases
 * a segment a writer will open soon (seg.c cn_seg_erase_soon), so that the
 * call which opens it, and may program much besides (a commit's node flush),
 * need not erase too. Not in a session's first call, which wrote the
 * session's mark (the first write after a mount stays close to a normal
 * one). A failed erase is not the call's failure: its data is written; a
 * failing segment or anchor is retired (seg.c, anchor.c), and anything else
 * meets the next writer again. */
void cn_write_call_ends(cairn *fs)
{
    if (fs->read_only || fs->broken || fs->in_gc || fs->recovering ||
        (fs->call_flags & CN_CALL_FIRST) || fs->call_erases > 0)
        return;
    if (cn_ckpt_erase_step(fs, 0) == 0 && fs->call_pages <= CN_LIGHT_PAGES)
        (void)cn_seg_erase_soon(fs);
}

/* Promise `pages` more pages to file f (cairn_fallocate). */
int cn_reserve(cairn *fs, struct cn_file *f, uint32_t pages)
{
    uint64_t need = (uint64_t)fs->reserved + pages;
    int err;
    if (pages == 0)
        return 0;
    if (need > (uint64_t)fs->seg_pages * fs->seg_count)
        return CAIRN_ERR_NOSPC;
    fs->reserved += pages;
    err = cn_space_for_user(fs, 1);
    if (err) {
        fs->reserved -= pages;
        return err;
    }
    f->reserved += pages;
    cn_data_head_claim(fs, f->id);
    return 0;
}

/* The id of the first orphan, or CAIRN_ERR_NOENT when there is none. Out of
 * line: the lookup's locals are gone before cn_finish_orphans settles. */
CN_NOINLINE static int next_orphan(cairn *fs)
{
    struct cn_hit h;
    int err;
    h.key = cn_key(0, CN_K_ORPHAN, 0);
    h.val = NULL;
    h.cap = 0;
    err = cn_tree_seek(fs, &h, 0);
    if (err)
        return err;
    if (cn_key_id(h.key) != 0 || cn_key_kind(h.key) != CN_K_ORPHAN)
        return CAIRN_ERR_NOENT;
    return (int)cn_key_sub(h.key);
}

/* Free the space of orphaned objects, at most `budget` trim records. The
 * operation that made them has happened: when a trim finds no room now the
 * orphan stays queued (the next remove, truncate or mount goes on with it),
 * and that is not an error of the operation nor of a mount. */
int cn_finish_orphans(cairn *fs, uint32_t budget)
{
    while (budget-- > 0) {
        uint8_t p[CN_RL_TRIM];
        int err = next_orphan(fs);
        if (err == CAIRN_ERR_NOENT)
            return 0;
        if (err < 0)
            return err;
        cn_put32(p, (uint32_t)err);
        err = cn_settle_delete(fs);
        if (!err)
            err = cn_record_delete(fs, CN_R_TRIM, p, CN_RL_TRIM);
        if (err)
            return err == CAIRN_ERR_NOSPC ? 0 : err;
    }
    return 0;
}
