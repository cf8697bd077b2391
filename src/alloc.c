/* Allocation: the append heads and the reserves, accounted; making room
 * (GC, commits) is space.c's, above.
 *
 * Heads keep data of different lifetimes out of each other's erase blocks:
 * tree nodes (META), data moved by GC (COLD: it has already outlived the
 * data around it), and file data, with one data head per file being written
 * (up to cfg.data_heads) so that files written side by side never interleave
 * inside one erase block. When there are more writers than data heads, the
 * head idle the longest is shared: the writer that went quiet first is the
 * one least likely to interleave with the newcomer. */
#include "cn.h"

/* Small volumes (few, large erase blocks) cannot spare a segment per kind of
 * data: GC-moved data then shares the metadata head. */
static int squeezing(const cairn *fs)
{
    return fs->in_gc && fs->gc.squeeze && fs->gc.phase != CN_GC_IDLE;
}

static int need_segment(const cairn *fs, unsigned h, uint32_t want, int exact)
{
    const struct cn_head *hd = &fs->head[h];
    return hd->seg == CN_NONE || hd->page >= fs->seg_pages ||
           (fs->segs[hd->seg].flags & CN_SF_URGENT) ||
           (exact && fs->seg_pages - hd->page < want);
}

static uint32_t floor_of(const cairn *fs, unsigned kind);

/* The data head a writer's last try moves its victim into (gc.c
 * begin_victim), while that head's open segment has room; 0 for none. */
static unsigned moves_into_data(const cairn *fs)
{
    unsigned h = CN_H_DATA + fs->gc_into_data - 1u;
    return fs->gc_into_data && !need_segment(fs, h, 1, 0) ? h : 0u;
}

/* A squeeze fills GC's own open segment, if it has one, and goes on in the
 * metadata head: it opens no segment but the metadata head's. A writer's
 * last try on a small volume fills a data head's open segment first. */
static unsigned resolve(const cairn *fs, unsigned h)
{
    if (h != CN_H_COLD)
        return h;
    if (moves_into_data(fs))
        return moves_into_data(fs);
    return fs->seg_count < 64u || (squeezing(fs) && need_segment(fs, CN_H_COLD, 1, 0))
               ? (unsigned)CN_H_META
               : h;
}

/* Pages a squeeze's moves may take at GC's own head before they go to the
 * metadata head (0 where GC's data shares that head). */
static uint32_t squeeze_cold_room(const cairn *fs)
{
    if (fs->seg_count < 64u || need_segment(fs, CN_H_COLD, 1, 0))
        return 0;
    return fs->seg_pages - fs->head[CN_H_COLD].page;
}

/* Pages GC's open segment could give a delete's nodes when the metadata
 * head needs a segment and may take none (0 otherwise): a record that frees
 * space, outside GC and recovery, GC's data apart from the metadata head
 * (other records are refused there: the room is GC's, for the squeezes that
 * let deletes through, worn seed 60 run 22). A failing anchor's replacement,
 * reserved while free, took the segment a remove on a volume filled to NOSPC
 * counted on, and every remove after was refused with 62 pages free in GC's
 * head (test_nospc wedge-anchor seed 1029 run 14, nor-w25q128 292 sectors,
 * session 33). */
static uint32_t cold_spare(const cairn *fs)
{
    const struct cn_head *c = &fs->head[CN_H_COLD];
    if (fs->freeing != CN_FREEING_SPACE || fs->in_gc || fs->recovering ||
        fs->seg_count < 64u || cn_free_segs(fs) > floor_of(fs, CN_H_META) ||
        c->seg == CN_NONE || c->page >= fs->seg_pages ||
        (fs->segs[c->seg].flags & CN_SF_URGENT))
        return 0;
    return fs->seg_pages - c->page;
}

static int is_data_head(unsigned h) { return h >= CN_H_DATA; }

/* Would the next page at head h need a new segment (an erase)? */
int cn_head_full(const cairn *fs, unsigned h)
{
    return need_segment(fs, resolve(fs, h), 1, 0);
}

/* Pages head h can still take in the segment it has open (0: none open). */
uint32_t cn_head_left(const cairn *fs, unsigned h)
{
    h = resolve(fs, h);
    return need_segment(fs, h, 1, 0) ? 0 : fs->seg_pages - fs->head[h].page;
}

static void close_head(cairn *fs, unsigned h)
{
    struct cn_head *hd = &fs->head[h];
    if (hd->seg != CN_NONE && fs->segs[hd->seg].state == CN_SEG_OPEN)
        fs->segs[hd->seg].state = CN_SEG_FULL;
    hd->seg = CN_NONE;
}

/* A clean mount's heads go on where its checkpoint says. Before the session
 * programs anything, each head's next page must read blank: if not,
 * something was written after that checkpoint that no newer valid one
 * accounts for (newer slots lost or erased by hand, an image rolled back),
 * and the session then continues as a recovery would (invariant I4): every
 * head in a fresh segment, and no erase trusted that the table claims (one
 * such session may have been cut in the middle of it). The journal's next
 * bytes are read at mount, since what follows them is replayed. This was
 * the mount's until session 23: those reads were what a clean mount of a
 * volume in use read beyond an empty one (mount-scale, 1 GiB NAND), and a
 * session that only reads needs none of them.
 * A head at the start of an erase block past the first has nothing to
 * check: that block is erased before its first program (device.c
 * erase_ahead), and what is there now (another session's data, or never
 * erased) no state refers to; the first block was erased when the segment
 * was handed out (seg.c cn_seg_mark_erased), so it is read blank. */
int cn_heads_check(cairn *fs)
{
    uint32_t h, s, ppb = fs->dev->geo.pages_per_block;
    int blank = 1, err = 0;
    if (!fs->heads_unchecked)
        return 0;
    for (h = 0; h < CN_HEADS && !err && blank; h++) {
        const struct cn_head *hd = &fs->head[h];
        if (hd->seg != CN_NONE && hd->page < fs->seg_pages && (hd->page == 0 || hd->page % ppb != 0))
            err = cn_dev_blank(fs, hd->seg * fs->seg_pages + hd->page, 0, fs->scratch2,
                               fs->page_size, &blank);
    }
    if (err)
        return err;
    fs->heads_unchecked = 0;
    if (blank)
        return 0;
    for (h = 0; h < CN_HEADS; h++)
        close_head(fs, h);
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (fs->segs[s].state == CN_SEG_ERASED)
            fs->segs[s].state = CN_SEG_FREE;
    return 0;
}

/* Heads whose segment has no page left close it, so that GC may take it as
 * a victim before a writer needs a new segment. A head's segment stayed
 * open, out of GC's reach, until its writer came back for a page: a tail
 * page rewritten at every sync of 40-byte appends had left a data head's
 * segment 63 of 64 pages garbage, and at the user reserve that writer could
 * not open another (test_space "fallocate", 4 MiB NAND). */
void cn_close_full_heads(cairn *fs)
{
    unsigned h;
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg != CN_NONE && fs->head[h].page >= fs->seg_pages)
            close_head(fs, h);
}

/* A failing anchor's replacement that a head has open: the head moves on
 * at its next page (need_segment), but until it takes one the segment stays
 * open, out of GC's reach. Closed now, so that it can be emptied
 * (space.c cn_evict_for_anchor). */
void cn_close_heads_in(cairn *fs, uint32_t s)
{
    unsigned h;
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg == s)
            close_head(fs, h);
}

/* Free segments a writer must leave. User data stops first; the nodes of
 * user operations one segment later, so GC always has a segment to work in
 * (deletes, whose records free space, may go on as far as GC may);
 * GC (its moved data and nodes) keeps the two a mount's recovery needs; a
 * commit that frees segments may borrow one of those, because what it writes
 * there is not named by the journal and the checkpoint gives back more. */
static uint32_t floor_of(const cairn *fs, unsigned kind)
{
    if (is_data_head(kind))
        return CN_RESERVE_SEGS;
    /* A squeeze whose victim is empty has only its commit left, and that
     * frees the victim: it may take the last segment. What it writes only
     * that commit's checkpoint names, so a cut before gives it back. At 1
     * free such a commit was refused, and every remove after with it
     * (session-30 worn hunt, seed 67 run 23: nand-jffs2, 49 blocks, two
     * segments retired by failed erases). */
    if (squeezing(fs) && fs->segs[fs->gc.victim].live == 0)
        return 0u;
    if (squeezing(fs) && fs->gc.squeeze == CN_SQUEEZE_LAST)
        return 0u;
    if (fs->borrow || squeezing(fs))
        return CN_RECOVERY_SEGS - 1u;
    return fs->in_gc || fs->freeing ? CN_GC_FLOOR : CN_META_FLOOR;
}

/* Open a new segment at head h for a writer of kind `kind` (before the
 * small-volume sharing of heads: GC's data keeps its own floor). */
static int open_segment(cairn *fs, unsigned h, unsigned kind)
{
    struct cn_head *hd = &fs->head[h];
    uint32_t s;
    int err = cn_seg_alloc(fs, floor_of(fs, kind), h == CN_H_COLD, &s);
    if (err)
        return err;
    close_head(fs, h);
    hd->seg = s;
    hd->page = 0;
    fs->segs[s].state = CN_SEG_OPEN;
    cn_seg_opened(fs, s);
    fs->segs[s].flags = h == CN_H_META ? CN_SF_NODES : 0;
    return 0;
}

/* The metadata head goes on in GC's open segment (cold_spare), which then
 * holds nodes; GC's data opens its next segment when it next moves any. */
static void meta_takes_cold(cairn *fs)
{
    struct cn_head *m = &fs->head[CN_H_META], *c = &fs->head[CN_H_COLD];
    close_head(fs, CN_H_META);
    *m = *c;
    c->seg = CN_NONE;
    c->page = 0;
    cn_seg_add_flags(&fs->segs[m->seg], CN_SF_NODES);
}

/* Up to `want` contiguous pages at head h (exactly `want` if exact: tree
 * nodes), a new segment taken within the floor of that kind of writer. */
int cn_head_pages(cairn *fs, unsigned h, uint32_t want, int exact, uint32_t *page_out,
                  uint32_t *got)
{
    struct cn_head *hd;
    uint32_t n;
    unsigned kind;
    int err;
    *page_out = 0; /* callers look at the segment of the page even on failure */
    *got = 0;
    /* done at the session's first change (journal.c cn_session_begin), before
     * any room is counted; here for the flushes that come without one (an
     * unmount's or cairn_check's of nodes a session that wrote nothing has) */
    err = cn_heads_check(fs);
    if (err)
        return err;
    kind = h;
    h = resolve(fs, h);
    hd = &fs->head[h];
    if (need_segment(fs, h, want, exact)) {
        err = open_segment(fs, h, kind);
        if (err == CAIRN_ERR_NOSPC && h == CN_H_META && cold_spare(fs) >= want) {
            meta_takes_cold(fs);
            err = 0;
        }
        if (err)
            return err;
    }
    n = fs->seg_pages - hd->page;
    if (n > want)
        n = want;
    *page_out = hd->seg * fs->seg_pages + hd->page;
    *got = n;
    hd->page += n;
    return 0;
}

/* A program into `page` failed: the head writing there moves on (the
 * device layer flagged the segment; GC empties and retires it). */
void cn_head_failed(cairn *fs, uint32_t page)
{
    unsigned h;
    for (h = 0; h < CN_HEADS; h++) {
        if (fs->head[h].seg != cn_seg_of(fs, page))
            continue;
        /* A squeeze that lost its segment to the device takes the next one
         * from below its floor, as an allocation whose erase failed does
         * (seg.c may_go_below). At its floor of 1 it stopped half-way and
         * every remove was refused (worn hunt seed 98 run 34: nand-jffs2, 40
         * blocks, a program failed in the squeeze's segment at 2 free). */
        if (squeezing(fs) && (h == CN_H_META || h == CN_H_COLD))
            fs->gc.squeeze = CN_SQUEEZE_LAST;
        close_head(fs, h);
    }
}

/* 0: file `id` is not open; 1: open; 2: open and holding a reservation. */
static int file_open(const cairn *fs, uint32_t id)
{
    uint32_t i;
    for (i = 0; i < fs->max_open; i++)
        if (fs->files[i].id == id && fs->files[i].refs > 0)
            return fs->files[i].reserved ? 2 : 1;
    return 0;
}

/* The data head of file `id`: its own, else an unowned one, else the one
 * idle longest that no reservation holds. */
static unsigned data_head_of(cairn *fs, uint32_t id)
{
    uint32_t i, pick = CN_NONE;
    for (i = 0; i < fs->data_heads; i++)
        if (fs->head_owner[i] == id)
            pick = i;
    for (i = 0; pick == CN_NONE && i < fs->data_heads; i++)
        if (fs->head_owner[i] == 0 || !file_open(fs, fs->head_owner[i]))
            pick = i;
    if (pick == CN_NONE) {
        for (i = 0; i < fs->data_heads; i++)
            if (file_open(fs, fs->head_owner[i]) < 2 &&
                (pick == CN_NONE || fs->head_used[i] < fs->head_used[pick]))
                pick = i;
        if (pick == CN_NONE)
            pick = 0; /* every head is held by a reservation: share the first */
    }
    fs->head_owner[pick] = id;
    fs->head_used[pick] = ++fs->lru_clock;
    return CN_H_DATA + pick;
}

/* A file that was promised pages (cn_reserve) takes its data head now, so
 * that no other writer is handed it. */
void cn_data_head_claim(cairn *fs, uint32_t id)
{
    (void)data_head_of(fs, id);
}

/* Is page `phys` outside the segment file `id`'s own data head fills? */
int cn_off_own_head(const cairn *fs, uint32_t id, uint32_t phys)
{
    uint32_t i;
    for (i = 0; i < fs->data_heads; i++)
        if (fs->head_owner[i] == id)
            return fs->head[CN_H_DATA + i].seg != cn_seg_of(fs, phys);
    return 0;
}

/* A closed file gives its head back (the head's segment stays open for the
 * next writer) and its unused reservation. */
void cn_heads_forget_file(cairn *fs, struct cn_file *f)
{
    uint32_t i;
    for (i = 0; i < fs->data_heads; i++)
        if (fs->head_owner[i] == f->id)
            fs->head_owner[i] = 0;
    fs->reserved -= f->reserved < fs->reserved ? f->reserved : fs->reserved;
    f->reserved = 0;
}

/* Does the metadata head's open segment take the tree's next flush with
 * what a record may add (dirty nodes + 2 x height + 4), without opening a
 * segment? */
int cn_meta_head_room(const cairn *fs)
{
    const struct cn_head *m = &fs->head[CN_H_META];
    return !need_segment(fs, CN_H_META, 1, 0) &&
           fs->seg_pages - m->page >= (fs->dirty_nodes + 2u * fs->height + 4u) * fs->node_pages;
}

/* Pages any writer can still place without a new segment: the least room
 * left among the data heads (and the metadata head, which takes short-lived
 * data when files have heads of their own). 0 when a head has no segment or
 * must leave its segment (failing, evicted), or when the metadata head cannot
 * take the tree's next flush with what a record may add (the call's nodes
 * would open a segment). cn_settle defers the hard path of GC while a write
 * fits here (space.c). */
uint32_t cn_data_room(const cairn *fs)
{
    uint32_t i, room = fs->seg_pages;
    if (!cn_meta_head_room(fs))
        return 0;
    for (i = 0; i <= fs->data_heads; i++) {
        unsigned h = i < fs->data_heads ? (unsigned)(CN_H_DATA + i) : (unsigned)CN_H_META;
        const struct cn_head *hd = &fs->head[h];
        if (i == fs->data_heads && fs->data_heads < 2)
            break; /* one data head: short-lived data goes with the rest */
        if (need_segment(fs, h, 1, 0))
            return 0;
        if (fs->seg_pages - hd->page < room)
            room = fs->seg_pages - hd->page;
    }
    return room;
}

/* Segments that reservations may still claim beyond what their heads hold:
 * other files' reservations, while a reserved file settles for its own call
 * (own_reserved). */
uint32_t cn_reserved_segs(const cairn *fs)
{
    CN_ASSERT(fs->own_reserved <= fs->reserved);
    return (fs->reserved - fs->own_reserved + fs->seg_pages - 1) / fs->seg_pages;
}

/* A reserved file pays for the file pages it takes for the first time
 * (from resv_top on), not for pages it writes again: a tail page rewritten
 * at every sync, an overwrite. Those leave as much garbage as they take,
 * which GC gives back. Before, every rewrite spent the promise: 40-byte
 * appends, each synced, got NOSPC after 572,040 of 786,432 reserved bytes
 * on a full 4 MiB NAND volume (test_space "fallocate"). */
void cn_pay_reserved(cairn *fs, struct cn_file *f, uint32_t fpage, uint32_t got)
{
    uint32_t end = fpage + got, n, left = f->reserved - CN_RESV_MARGIN(fs);
    CN_ASSERT(f->reserved >= CN_RESV_MARGIN(fs));
    if (end <= f->resv_top)
        return;
    n = end - (fpage > f->resv_top ? fpage : f->resv_top);
    n = n < left ? n : left;
    f->reserved -= n;
    fs->reserved -= n;
    f->resv_top = end;
}

static uint32_t delete_pages(const cairn *fs);

/* Pages of the metadata head's open segment that user data may take in a
 * call whose collection found no room (CN_CALL_FULL, space.c
 * cn_space_for_user), when the data heads need a segment and the free
 * segments are down at the user reserve: what is left beyond the tree's
 * next flush with what a record may add (cn_meta_head_room) and a delete's
 * nodes (delete_pages). No segment is taken for it, so every floor of the
 * reserve stays as it was; what it costs is room the next nodes would have
 * had, which then come from the segment users' nodes may take
 * (CN_META_FLOOR), as a create's do at the reserve (space.c
 * cn_space_for_records). Only on volumes under 64 segments, where that head
 * takes GC's moved data anyway; on larger ones it holds nodes and
 * short-lived pages apart from file data, and the reserve is a few percent
 * of the volume. Only once collection failed: these pages are the last
 * room, not a way around collecting (taken first, they would put off the
 * collection until the next node flush took a segment). Not below the
 * reserve: a metadata segment opened there is the nodes' step of it. Before,
 * a volume filled to NOSPC took no page more with most of that segment
 * unused: one big file held 0.50 of 1 MiB of nor-m25p16, now 0.55 (DESIGN.md
 * "Session 43"). */
uint32_t cn_meta_spare_for_data(const cairn *fs)
{
    const struct cn_head *m = &fs->head[CN_H_META];
    uint32_t keep, left;
    if (fs->seg_count >= 64u || !(fs->call_flags & CN_CALL_FULL) || fs->in_gc ||
        fs->recovering || need_segment(fs, CN_H_META, 1, 0) ||
        cn_free_segs(fs) < CN_RESERVE_SEGS + cn_reserved_segs(fs))
        return 0;
    keep = (fs->dirty_nodes + 2u * fs->height + 4u) * fs->node_pages + delete_pages(fs);
    left = fs->seg_pages - m->page;
    return left > keep ? left - keep : 0;
}

/* Pages for user data (garbage was collected, if needed, by cn_settle).
 * Short-lived pages (a partial tail page, which the next write copies again;
 * pages rewritten below the file's end, like an index at its head) go with
 * the tree nodes, so a file's own head holds one unbroken run of its stream
 * per segment and no extra segment is kept open for them. With one data head
 * (volumes under 64 segments, where the nodes share GC's cold head) they stay
 * in it, except a promised ring's: its synced tails in its head left each
 * slot page alone in a segment of dead tails, GC moved the slots among cold
 * data where they died a lap later, and on nand-dhara in 512 KiB segments
 * 1-byte synced appends to a 31-page ring got NOSPC after 2 laps (7 pages:
 * 14) with every segment 233-247 of 256 pages live; with its tails among the
 * nodes, 60 laps (test_ring "full volume"). A promised plain file's tails
 * stay in its head: among the cold data they cost test_space's 40-byte
 * synced promise on 4 MiB NAND 71,712 of its 786,432 bytes. */
int cn_data_pages(cairn *fs, struct cn_file *f, int short_lived, uint32_t fpage,
                  uint32_t want, uint32_t *page_out, uint32_t *got)
{
    unsigned h;
    int err;
    CN_ASSERT(!fs->session_pending); /* the caller settled (cn_settle) or flushed first */
    h = short_lived && (fs->data_heads > 1 || (f->reserved > 0 && cn_is_ring(f)))
            ? (unsigned)CN_H_META
            : data_head_of(fs, f->id);
    if (f->reserved == 0 && need_segment(fs, h, want, 0) &&
        cn_free_segs(fs) <= CN_RESERVE_SEGS + cn_reserved_segs(fs)) {
        uint32_t spare = cn_meta_spare_for_data(fs);
        if (spare == 0)
            return CAIRN_ERR_NOSPC; /* the free segments are promised to others */
        h = CN_H_META; /* the last room (cn_meta_spare_for_data) */
        want = want < spare ? want : spare;
    }
    /* a reserved file may take the segments held back for it */
    err = cn_head_pages(fs, h, want, 0, page_out, got);
    if (!err && f->reserved > 0)
        cn_pay_reserved(fs, f, fpage, *got);
    return err;
}

/* What emptying a victim with `live` pages writes besides its moves, at
 * most: the node writes of its commit (height + 4 nodes, as cn_gc_fits
 * counts them), a MOVE record per page moved (each may be a run of its own),
 * and a leaf for every 8 of them. The leaves are what small files cost: their
 * runs lie in as many leaves as the files are far apart in the tree, and a
 * victim of 178 one-page files on 2 MiB of nor-m25p16 wrote 124 pages besides
 * its moves (test_nospc "thin garbage"): 30 nodes, where the commit alone
 * had been counted (7), and free_bytes promised 17 pages more than a file
 * could take. */
static uint32_t victim_cost(const cairn *fs, uint32_t live)
{
    uint32_t records = (live * (CN_REC_HDR + CN_RL_MOVE) + fs->page_size - 1u) / fs->page_size;
    return (fs->height + 4u + (live + 7u) / 8u) * fs->node_pages + records;
}

/* Pages one new file can surely be given (cairn_fs_stat's free_bytes):
 * free segments and the room left in segments, less what the reserves, the
 * heads and the reservations hold back. Garbage in a closed segment counts
 * only when collecting it pays: the hard path gives up after 4 victims that
 * free no segment between them, so a victim must gain a quarter of a
 * segment beyond what emptying it writes (victim_cost); thinner garbage may
 * never come back and is not promised. Nor is any garbage once GC itself is
 * down to its last segments (metadata filled the user's share): it may not
 * be able to start a victim. */
uint64_t cn_free_promise(const cairn *fs)
{
    uint32_t s;
    uint64_t n = 0, held;
    int gc_works = cn_free_segs(fs) > CN_META_FLOOR;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        const struct cn_seg *g = &fs->segs[s];
        uint32_t gain = fs->seg_pages - g->live, cost = victim_cost(fs, g->live);
        if (g->state == CN_SEG_BAD || (g->flags & CN_SF_EVICT))
            continue; /* (emptied for an anchor, or kept free for one: anchor.c) */
        if (g->state == CN_SEG_FULL) {
            if (!gc_works || (g->flags & CN_SF_STUCK) || gain < fs->seg_pages / 4u + cost)
                continue;
            gain -= cost;
        }
        n += gain;
    }
    held = (uint64_t)(CN_RESERVE_SEGS + CN_H_DATA + fs->data_heads + 1u) * fs->seg_pages +
           fs->reserved;
    return n > held ? (n - held) * fs->page_size : 0;
}

/* Node pages kept for a delete: what a record that frees space may write
 * (the general bound of cn_meta_room). Records that free nothing, and GC's
 * victims where its moves go to the metadata head, leave them there, so a
 * remove works on a volume filled to NOSPC (cairn.h). Before, synced appends
 * on small NAND volumes left the metadata head less than a remove's nodes at
 * GC's floor, by their own nodes or by GC's moves, and every remove got
 * NOSPC for good (test_nospc "wedge": 13 of its 24 volumes; DESIGN.md "A
 * delete's room"). */
static uint32_t delete_pages(const cairn *fs) { return (2u * fs->height + 4u) * fs->node_pages; }

/* Is `spare` (room left beyond a call's own need) short of a delete's
 * nodes when it matters: not for a delete's own records, not in a recovery,
 * not while a commit can free a dead segment instead (a scan: asked last). */
static int short_for_delete(const cairn *fs, uint32_t spare)
{
    return spare < delete_pages(fs) && fs->freeing != CN_FREEING_SPACE && !fs->recovering &&
           cn_dead_segs(fs) == 0;
}

/* Can GC empty a victim with `live` pages in what it may use: its moves and
 * the node writes of the records and the commit, and `log_segs` segments its
 * records take for the journal (gc.c victim_fits), above its floor? A victim
 * that does not fit is not started, so GC never stops half-way with the
 * reserve used up. `nodes`: what the commit writes beyond the dirty nodes
 * (0: the bound of height + 4; gc.c assumed_nodes). */
int cn_gc_fits(cairn *fs, uint32_t live, uint32_t log_segs, uint32_t nodes, int at_once)
{
    uint32_t free = cn_free_segs(fs), have = 0, h, in_data = 0;
    uint32_t need;
    if (moves_into_data(fs)) { /* (they take no room GC keeps) */
        in_data = fs->seg_pages - fs->head[moves_into_data(fs)].page;
        in_data = in_data < live ? in_data : live;
    }
    need = live - in_data + (fs->dirty_nodes + (nodes ? nodes : fs->height + 4u)) * fs->node_pages +
           log_segs * fs->seg_pages;
    for (h = CN_H_META; h <= CN_H_COLD; h++) {
        const struct cn_head *hd = &fs->head[resolve(fs, h)];
        if (resolve(fs, h) == h && hd->seg != CN_NONE && hd->page < fs->seg_pages)
            have += fs->seg_pages - hd->page;
    }
    /* a victim emptied in steps between users' calls counts only on the
     * segments users may not take (below CN_META_FLOOR); one emptied at once
     * on everything above GC's floor */
    if (!at_once && free > CN_META_FLOOR)
        free = CN_META_FLOOR;
    if (fs->recovering && free > 1u) /* a cut gives it back (fs.c, recovery_room); */
        have += (free - 1u) * fs->seg_pages; /* one stays for the recovery's commit */
    else if (free > CN_GC_FLOOR)
        have += (free - CN_GC_FLOOR) * fs->seg_pages;
    /* where its moves go to the metadata head, they leave a delete's nodes
     * there too (with a cold head of their own they do not take them; in a
     * data head, what does not fit there goes to the metadata head) */
    return have >= need &&
           (resolve(fs, CN_H_COLD) == CN_H_COLD || !short_for_delete(fs, have - need));
}

/* 1 + the data head whose open segment a writer's last try may move a
 * victim into, on a volume whose GC shares the metadata head (under 64
 * segments): the one with the most room that no reservation holds (its
 * pages are promised to that file); 0 for none. */
uint8_t cn_data_head_for_moves(const cairn *fs)
{
    uint32_t i, best = 0, room = 0;
    if (fs->seg_count >= 64u)
        return 0;
    for (i = 0; i < fs->data_heads; i++) {
        const struct cn_head *hd = &fs->head[CN_H_DATA + i];
        if (need_segment(fs, CN_H_DATA + i, 1, 0) ||
            (fs->segs[hd->seg].flags & (CN_SF_FAILING | CN_SF_EVICT)) ||
            (fs->head_owner[i] != 0 && file_open(fs, fs->head_owner[i]) == 2))
            continue;
        if (fs->seg_pages - hd->page > room) {
            room = fs->seg_pages - hd->page;
            best = i + 1u;
        }
    }
    return (uint8_t)best;
}

/* GC down at its floor with garbage all round: metadata took the room GC
 * keeps for itself, and no victim fits above the floor, so deletes were
 * refused for good at 60% full (torture nor-w25q128-b4, seeds 8, 17: free
 * segments at GC's floor, a victim with one live page). A victim is emptied
 * anyway when its moves and node writes fit GC's open segment, the metadata
 * head and one segment below the floor, taken by that head: its
 * commit frees the victim, so the free count is no lower than before and
 * the head keeps the rest of the segment for the next one; a cut before the
 * commit gives the segment back. `keep`: it must leave a delete's nodes in
 * the head too (not for a victim stuck half-way, gc.c cn_gc_collect).
 * `nodes`: what its commit writes beyond the dirty nodes, where GC counted
 * it (gc.c rewrite_nodes; 0: the bound of height + 4). */
int cn_gc_squeeze_fits(cairn *fs, uint32_t live, uint32_t nodes, int keep)
{
    const struct cn_head *m = &fs->head[CN_H_META];
    uint32_t cold = squeeze_cold_room(fs);
    /* what goes to the metadata head: the moves GC's open segment cannot
     * take (seed 60 run 22 of the worn hunt: 55 pages of a victim stuck
     * half-way and 44 of nodes did not fit one 96-page segment, while GC's
     * own segment had 96 pages free: every remove refused), and the nodes */
    uint32_t need = (live > cold ? live - cold : 0u) +
                    (fs->dirty_nodes + (nodes ? nodes : fs->height + 4u)) * fs->node_pages;
    uint32_t room = 0, have;
    if (m->seg != CN_NONE && m->page < fs->seg_pages &&
        !(fs->segs[m->seg].flags & (CN_SF_FAILING | CN_SF_EVICT)))
        room = fs->seg_pages - m->page;
    /* What fits the head as it is takes no segment, so it needs none free:
     * a recovery that squeezed a victim into the last segment left the rest
     * of it unused at 0 free, and ended with 1 (the old journal kept a
     * tagged data page); every mount after took the last one for its
     * journal, and every remove was refused for good (torture --geo random
     * --aged 30 seed 334045: NAND, 50 blocks, an anchor retired). */
    if (room >= need)
        return !keep || !short_for_delete(fs, room - need);
    have = fs->seg_pages + room;
    /* A recovery may take the last segment (a cut gives back all it wrote)
     * and any victim that gains: it must not leave fewer free segments than
     * the next recovery needs (a journal segment and one for nodes). Outside
     * recovery, any victim whose moves and node writes fit one segment: its
     * moves are recorded only by the commit that frees it, so a cut gives the
     * segment back (limited to a quarter live before, a 95%-full NOR volume
     * wedged with a 45%-live victim and good garbage: DESIGN.md, GC steps).
     * At 1 free too, taking the last (CN_SQUEEZE_LAST): the commit frees the
     * victim, so the count is back where it was, and the rest of the head
     * takes the next victim, which gains a segment. Needing 2, the volume of
     * seed 334045 above, at 1 free with the heads closed, refused every
     * remove after idle GC and remounts. */
    if (fs->recovering ? cn_free_segs(fs) < 1u || need >= fs->seg_pages
                       : cn_free_segs(fs) < 1u || need > fs->seg_pages)
        return 0;
    return have >= need && (!keep || !short_for_delete(fs, have - need));
}

/* Can the tree's next flush be written, with what the next record may add?
 * A flush must never fail half-way through applying a record, so this is
 * asked before the record is appended. A record that frees no space leaves
 * a delete's room (short_for_delete); GC's own records had theirs counted
 * when it began the victim (cn_gc_fits). */
int cn_meta_room(cairn *fs, uint32_t extra)
{
    const struct cn_head *m = &fs->head[CN_H_META];
    uint32_t need = (fs->dirty_nodes + (extra ? extra : 2u * fs->height + 4u)) * fs->node_pages;
    uint32_t have = 0;
    uint32_t free = cn_free_segs(fs), floor = floor_of(fs, CN_H_META);
    if (m->seg != CN_NONE && m->page < fs->seg_pages)
        have = fs->seg_pages - m->page;
    if (free > floor)
        have += (free - floor) * fs->seg_pages;
    else if (cold_spare(fs) > have)
        have = cold_spare(fs); /* (the metadata head's rest is closed unused) */
    return fs->recovering || (have >= need && (fs->in_gc || !short_for_delete(fs, have - need)));
}
