/* Format, mount, unmount, whole-volume calls, configuration and errors. */
#include "cn.h"

#ifndef CAIRN_NO_MALLOC
#include <stdlib.h>
#endif

typedef char cn_context_fits[(sizeof(struct cairn) <= CAIRN_CONTEXT_SIZE) ? 1 : -1];

size_t cairn_context_size(void) { return sizeof(struct cairn); }

/* ---- configuration ---- */

struct layout {
    uint32_t page_size, seg_pages, seg_count, node_size, nslots, max_open, commit_pages;
    uint32_t ckpt_pages;
    uint32_t off_segs, off_fronts, off_slots, off_cache, off_scratch, off_scratch2, off_logpage;
    uint32_t off_files, off_handles, off_bufs, off_rec, total;
};

/* Why a configuration cannot work: the first check plan() finds failing
 * (cairn_config_why gives the text). */
enum cn_why {
    W_OK,
    W_NO_DEV,
    W_PAGE,
    W_BLOCKS,
    W_DIVIDE,
    W_SEG_PAGES,
    W_VOL_PAGES,
    W_MEDIUM,
    W_NODE,
    W_SEG_NODES,
    W_CACHE,
    W_OPEN,
    W_FEW_SEGS,
    W_HEADS,
    W_UNIT,
    W_ANCHOR,
    W_NO_SIZE,
    W_FEW_BLOCKS,
    W_MEM
};

static const char *const why_text[] = {
    NULL,
    "no device, or a device without read, prog or erase",
    "page_size must be a multiple of 8 from 128 to 65536",
    "pages_per_block and block_count must not be 0",
    "block_count must be a multiple of blocks_per_lblock",
    "a segment (pages_per_block x blocks_per_lblock) must have at most 65535 pages",
    "the volume must have fewer than 2^31 pages",
    "medium must be CAIRN_MEDIUM_NOR, CAIRN_MEDIUM_NAND or CAIRN_MEDIUM_BLOCK",
    "node_size must be a multiple of page_size from 1024 to 65536",
    "a segment must hold at least 16 nodes: raise blocks_per_lblock or lower node_size",
    "cache_nodes must be 12 to 254 (0: 16)",
    "max_open must be at most 32",
    "the volume must have at least 11 segments: lower blocks_per_lblock or use more blocks",
    "data_heads must be at most 8",
    "on BLOCK media write_unit must be a multiple of page_size that divides a segment",
    "an anchor segment must hold 16 checkpoints (each carries 12 bytes a segment): "
    "raise blocks_per_lblock (0 picks it)",
    "no segment size works: the volume is too small for 11 segments that hold 16 nodes "
    "each and whose anchors hold 16 checkpoints",
    "the volume must have at least 11 erase blocks (11 segments of one block or more): use "
    "more blocks",
    "mem_size is below cairn_mem_size(cfg), mem is not aligned to 8, or mem is NULL in a "
    "CAIRN_NO_MALLOC build"};

typedef char cn_why_texts[(sizeof why_text / sizeof why_text[0] == W_MEM + 1) ? 1 : -1];

static uint32_t align8(uint32_t v) { return (v + 7u) & ~7u; }

/* The geometry's own checks, whatever the segment size. */
static enum cn_why geometry_why(const struct cairn_geometry *g)
{
    if (g->page_size < 128 || g->page_size % 8 || g->page_size > 65536)
        return W_PAGE;
    if (g->pages_per_block == 0 || g->block_count == 0)
        return W_BLOCKS;
    if ((uint64_t)g->block_count * g->pages_per_block >= CN_DIRTY_REF)
        return W_VOL_PAGES;
    if (g->medium != CAIRN_MEDIUM_NOR && g->medium != CAIRN_MEDIUM_NAND &&
        g->medium != CAIRN_MEDIUM_BLOCK)
        return W_MEDIUM;
    return W_OK;
}

/* The settings the user gives (l holds the derived values). */
static enum cn_why settings_why(const struct cairn_config *cfg, const struct layout *l)
{
    const struct cairn_geometry *g = &cfg->dev->geo;
    if (l->node_size % g->page_size || l->node_size < 1024 || l->node_size > 65536)
        return W_NODE;
    if (l->node_size / g->page_size * 16u > l->seg_pages)
        return W_SEG_NODES;
    if (l->nslots < 12 || l->nslots > 254)
        return W_CACHE;
    if (l->max_open > CN_MAX_OPEN)
        return W_OPEN;
    if (l->seg_count < CN_MIN_SEGS)
        return W_FEW_SEGS;
    if (cfg->data_heads > CN_DATA_HEADS_MAX)
        return W_HEADS;
    /* BLOCK: segments are whole preferred write units, so heads fill units in order */
    if (g->medium == CAIRN_MEDIUM_BLOCK && g->write_unit > g->page_size &&
        (g->write_unit % g->page_size || (l->seg_pages * g->page_size) % g->write_unit))
        return W_UNIT;
    /* an anchor holds at least CN_MIN_ANCHOR_SLOTS checkpoints (two copies each
     * on NAND): see cn.h */
    if (l->ckpt_pages * (g->medium == CAIRN_MEDIUM_NAND ? 2u : 1u) * CN_MIN_ANCHOR_SLOTS >
        l->seg_pages)
        return W_ANCHOR;
    return W_OK;
}

/* The derived sizes and where each buffer lies in the memory block. */
static void place(const struct cairn_config *cfg, uint32_t bpl, struct layout *l)
{
    const struct cairn_geometry *g = &cfg->dev->geo;
    uint32_t scratch;
    l->page_size = g->page_size;
    l->seg_pages = g->pages_per_block * bpl;
    l->seg_count = g->block_count / bpl;
    /* a segment holds at least 16 nodes: the reserve is counted in segments and
     * must cover a flush of the node cache (with 4 KiB NOR sectors, group 4) */
    l->node_size = cfg->node_size;
    if (l->node_size == 0) {
        l->node_size = g->page_size;
        while (l->node_size < 1024)
            l->node_size += g->page_size;
    }
    l->nslots = cfg->cache_nodes ? cfg->cache_nodes : 16;
    l->max_open = cfg->max_open ? cfg->max_open : 4;
    l->commit_pages = cfg->commit_pages ? cfg->commit_pages : l->seg_pages / 2;
    if (cfg->commit_pages == 0 && l->commit_pages > 64)
        l->commit_pages = 64;
    if (l->commit_pages == 0)
        l->commit_pages = 1;
    l->ckpt_pages = (CN_CK_HDR + CN_CK_ENTRY * l->seg_count + g->page_size - 1) / g->page_size;
    scratch = g->page_size > CN_REC_MAX ? g->page_size : CN_REC_MAX;
    l->off_segs = 0;
    l->off_fronts = align8(l->off_segs + l->seg_count * (uint32_t)sizeof(struct cn_seg));
    l->off_slots = align8(l->off_fronts + CN_FRONTS * (uint32_t)sizeof(struct cn_front));
    l->off_cache = align8(l->off_slots + l->nslots * (uint32_t)sizeof(struct cn_slot));
    l->off_scratch = l->off_cache + l->nslots * l->node_size;
    l->off_scratch2 = align8(l->off_scratch + scratch);
    l->off_logpage = align8(l->off_scratch2 + g->page_size);
    l->off_files = align8(l->off_logpage + g->page_size);
    l->off_handles = align8(l->off_files + l->max_open * (uint32_t)sizeof(struct cn_file));
    l->off_bufs = align8(l->off_handles + l->max_open * (uint32_t)sizeof(struct cn_handle));
    l->off_rec = l->off_bufs + l->max_open * g->page_size;
    l->total = align8(l->off_rec + CN_REC_MAX);
}

/* The layout with segments of bpl erase blocks, or why that cannot work. */
static enum cn_why plan_for(const struct cairn_config *cfg, uint32_t bpl, struct layout *l)
{
    const struct cairn_geometry *g = &cfg->dev->geo;
    enum cn_why why = geometry_why(g);
    if (why != W_OK)
        return why;
    if (g->blocks_per_lblock && g->block_count % bpl)
        return W_DIVIDE;
    if ((uint64_t)g->pages_per_block * bpl > 65535)
        return W_SEG_PAGES;
    place(cfg, bpl, l);
    return settings_why(cfg, l);
}

/* How zero config picks the segment size. Both rules try the sizes from one
 * erase block up in passes, a pass asking what a segment must be (PICK_*). */
enum cn_pick {
    CN_PICK_NOW,     /* since session 34: dividing, unless a smaller size gives more */
    CN_PICK_DIVIDING /* before: dividing first, whatever it costs (mount reads those) */
};
#define PICK_DIVIDES 1u /* divides the volume: no block left past the last segment */
#define PICK_32NODES 2u /* holds 32 nodes (DESIGN.md "Segment size") */
static const uint8_t passes_dividing[4] = {PICK_DIVIDES | PICK_32NODES, PICK_DIVIDES,
                                           PICK_32NODES, 0};
static const uint8_t passes_smallest[2] = {PICK_32NODES, 0};
/* Segments a volume holds back whatever their size: two anchors and six
 * (reserve, journal, heads; bench capacity's "neither used nor free" is 6.00
 * segments on every NOR and NAND volume it fills) */
#define PICK_HELD_SEGS 8u

/* Do segments of bpl blocks work, and meet what the pass asks? */
static int pick_fits(const struct cairn_config *cfg, uint32_t bpl, uint8_t pass_needs,
                     struct layout *l)
{
    const struct cairn_geometry *g = &cfg->dev->geo;
    if ((pass_needs & PICK_DIVIDES) && g->block_count % bpl != 0)
        return 0;
    if (plan_for(cfg, bpl, l) != W_OK)
        return 0;
    return !(pass_needs & PICK_32NODES) || l->seg_pages >= 32u * (l->node_size / l->page_size);
}

/* The fewest blocks a segment that meet the first pass any size meets; 0: none. */
static uint32_t pick_by_passes(const struct cairn_config *cfg, const uint8_t *passes,
                               uint32_t npasses, struct layout *l)
{
    const struct cairn_geometry *g = &cfg->dev->geo;
    uint32_t bpl, pass;
    for (pass = 0; pass < npasses; pass++)
        for (bpl = 1; bpl <= g->block_count / CN_MIN_SEGS &&
                      (uint64_t)bpl * g->pages_per_block <= 65535;
             bpl++)
            if (pick_fits(cfg, bpl, passes[pass], l))
                return bpl;
    return 0;
}

/* The size zero config picks under `rule`; 0: none works. CN_PICK_DIVIDING:
 * the fewest erase blocks a segment that work (the checkpoint's table fits an
 * anchor 16 times, a segment holds 16 nodes, at least CN_MIN_SEGS segments),
 * dividing the volume first and holding 32 nodes next (with 16, GC on a nearly
 * full volume could not free a segment: DESIGN.md "Segment size").
 * CN_PICK_NOW takes the smallest size of 32 nodes (else any) instead, the
 * blocks past its last whole segment unused, when that leaves at least 1/32
 * of the volume more to the user, counting PICK_HELD_SEGS segments held back:
 * 361 blocks of nand-jffs2 got 16 segments of 19 blocks (0.42 of raw free
 * after format), now 180 of 2 (0.92); the models at full size and every
 * power-of-two volume keep their sizes. */
static uint32_t pick_bpl(const struct cairn_config *cfg, enum cn_pick rule, struct layout *l)
{
    uint32_t count = cfg->dev->geo.block_count, dividing, smallest;
    dividing = pick_by_passes(cfg, passes_dividing, 4, l);
    if (rule == CN_PICK_DIVIDING || dividing == 0)
        return dividing;
    smallest = pick_by_passes(cfg, passes_smallest, 2, l);
    if (smallest != 0 && smallest < dividing &&
        PICK_HELD_SEGS * (uint64_t)(dividing - smallest) >= count % smallest + count / 32u)
        return smallest;
    return dividing;
}

/* blocks_per_lblock 0 picks the segment size (pick_bpl). The same geometry
 * always gives the same answer, so format and mount agree. When no size
 * works, the reason is the one segments of one block give, unless that is a
 * size reason (anchor or volume too small for it: then W_NO_SIZE). */
static enum cn_why plan_by(const struct cairn_config *cfg, enum cn_pick rule, struct layout *l)
{
    uint32_t bpl;
    const struct cairn_geometry *g;
    enum cn_why first;
    if (cfg == NULL || cfg->dev == NULL || cfg->dev->read == NULL || cfg->dev->prog == NULL ||
        cfg->dev->erase == NULL)
        return W_NO_DEV;
    g = &cfg->dev->geo;
    if (g->blocks_per_lblock)
        return plan_for(cfg, g->blocks_per_lblock, l);
    first = plan_for(cfg, 1, l);
    /* a write unit larger than an erase block is a size reason too: segments
     * of several blocks hold whole units (random torture geometry: 128 KiB
     * erase blocks, 256 KiB units, refused with zero config) */
    if (first != W_OK && first != W_ANCHOR && first != W_SEG_NODES && first != W_FEW_SEGS &&
        (first != W_UNIT || g->write_unit % g->page_size != 0))
        return first;
    bpl = pick_bpl(cfg, rule, l);
    if (bpl)
        return plan_for(cfg, bpl, l);
    /* too few segments of one block: no blocks_per_lblock helps (the text
     * of W_FEW_SEGS would advise lowering it) */
    if (first == W_FEW_SEGS)
        return W_FEW_BLOCKS;
    return first == W_UNIT ? first : W_NO_SIZE;
}

static enum cn_why plan(const struct cairn_config *cfg, struct layout *l)
{
    return plan_by(cfg, CN_PICK_NOW, l);
}

/* Would a mount with zero config also try the layout of volumes formatted
 * before session 34 (rule CN_PICK_DIVIDING), because it differs? */
static int plan_dividing_differs(const struct cairn_config *cfg, struct layout *l)
{
    struct layout now;
    if (plan(cfg, &now) != W_OK || cfg->dev->geo.blocks_per_lblock != 0 ||
        plan_by(cfg, CN_PICK_DIVIDING, l) != W_OK)
        return 0;
    return l->seg_pages != now.seg_pages;
}

/* A zero-config mount may set up in the layout of the rule before session 34
 * (cairn_mount); that rule never picks a smaller segment than today's, so
 * its segment table and every other buffer are no larger: today's sum
 * covers both. */
uint32_t cairn_mem_size(const struct cairn_config *cfg)
{
    struct layout l;
    return plan(cfg, &l) != W_OK ? 0 : l.total;
}

static int mem_ok(const struct cairn_config *cfg, const struct layout *l)
{
    if (cfg->mem)
        return cfg->mem_size >= l->total && ((uintptr_t)cfg->mem & 7u) == 0;
#ifdef CAIRN_NO_MALLOC
    return 0;
#else
    return 1;
#endif
}

const char *cairn_config_why(const struct cairn_config *cfg)
{
    struct layout l;
    enum cn_why why = plan(cfg, &l);
    if (why == W_OK && !mem_ok(cfg, &l))
        why = W_MEM;
    return why_text[why];
}

/* Set up the context over its memory, segments picked by `rule` under zero
 * config; nothing is read from the device. */
static int setup_by(cairn *fs, const struct cairn_config *cfg, enum cn_pick rule)
{
    struct layout l;
    uint8_t *m;
    uint32_t i, h;
    if (plan_by(cfg, rule, &l) != W_OK || !mem_ok(cfg, &l))
        return CAIRN_ERR_INVAL;
    memset(fs, 0, sizeof *fs);
    fs->commit_pages = l.commit_pages;
    fs->dev = cfg->dev;
    if (cfg->mem) {
        m = (uint8_t *)cfg->mem;
    } else {
#ifdef CAIRN_NO_MALLOC
        return CAIRN_ERR_INVAL;
#else
        fs->mem_owned = malloc(l.total);
        if (fs->mem_owned == NULL)
            return CAIRN_ERR_NOSPC;
        m = (uint8_t *)fs->mem_owned;
#endif
    }
    memset(m, 0, l.total);
    fs->page_size = l.page_size;
    fs->seg_pages = l.seg_pages;
    fs->seg_count = l.seg_count;
    fs->node_size = l.node_size;
    fs->node_pages = l.node_size / l.page_size;
    fs->nslots = l.nslots;
    fs->max_open = l.max_open;
    fs->medium = (uint8_t)cfg->dev->geo.medium; /* checked: NOR, NAND or BLOCK */
    fs->spare_tags = fs->medium == CAIRN_MEDIUM_NAND && cfg->dev->geo.spare_size >= CN_TAG_LEN &&
                    cfg->dev->read_spare != NULL;
    fs->read_only = cfg->read_only;
    fs->ckpt_pages = l.ckpt_pages;
    fs->ckpt_copies = fs->medium == CAIRN_MEDIUM_NAND ? 2 : 1;
    fs->data_heads = cfg->data_heads ? cfg->data_heads : (l.seg_count < 64u ? 1 : 4);
    /* erase counts are kept up to CN_WEAR_MAX above the least worn (seg.c) */
    fs->wear_spread = cfg->wear_spread ? cfg->wear_spread : 16;
    if (fs->wear_spread > CN_WEAR_MAX - 1u)
        fs->wear_spread = CN_WEAR_MAX - 1u;
    fs->gc_step = cfg->gc_step_pages ? cfg->gc_step_pages : 16;
    fs->gc.victim = CN_NONE;
    fs->gc.tally_seg = CN_NONE;
    fs->gc_moving = CN_NONE;
    fs->ckpt_blank_from[0] = fs->ckpt_blank_from[1] = CN_NONE;
    fs->anchor_evict = fs->anchor_new = fs->anchor_old = CN_NONE;
    fs->ckpt_mark_page = CN_NONE;
    fs->stage_slot = CN_NONE;
    fs->segs = (struct cn_seg *)(void *)(m + l.off_segs);
    fs->fronts = (struct cn_front *)(void *)(m + l.off_fronts);
    for (i = 0; i < CN_FRONTS; i++)
        fs->fronts[i].seg = CN_NONE;
    fs->slots = (struct cn_slot *)(void *)(m + l.off_slots);
    fs->cache = m + l.off_cache;
    fs->scratch = m + l.off_scratch;
    fs->scratch2 = m + l.off_scratch2;
    fs->log.page = m + l.off_logpage;
    fs->recbuf = m + l.off_rec;
    fs->files = (struct cn_file *)(void *)(m + l.off_files);
    fs->handles = (struct cn_handle *)(void *)(m + l.off_handles);
    for (i = 0; i < fs->max_open; i++)
        fs->files[i].buf = m + l.off_bufs + i * l.page_size;
    memset(fs->log.page, 0xFF, l.page_size);
    fs->log.last_ext = CN_NONE;
    for (h = 0; h < CN_HEADS; h++)
        fs->head[h].seg = CN_NONE;
    return 0;
}

/* The anchors are the first two good segments: mount finds them with a bad
 * block query or two, and factory-bad blocks at the start cost nothing more.
 * Anywhere on the device: a failing anchor's replacement may be any later
 * segment, and a search among the first 16 (until session 38) lost the
 * anchors of a worn-out NAND volume that had replaced them 14 times; no
 * mount found them again, read-only included (test_eol). */
static int find_anchors(cairn *fs)
{
    uint32_t s, n = 0;
    for (s = 0; s < fs->seg_count && n < 2; s++)
        if (cn_seg_good(fs, s))
            fs->anchor[n++] = s;
    if (n < 2)
        return CAIRN_ERR_IO;
    fs->seg_base = fs->anchor[1] + 1;
    return 0;
}

/* Format makes the anchors ready first (ckpt.c: what it erases): one whose
 * erase fails is marked bad and the next good segment takes its place, so a
 * new volume never starts with an anchor that cannot be written. That holds
 * too for an anchor whose block failed to erase before, in the clearing of
 * the old zero-config layout (clear_block_of flags its segment failing): the
 * format's checkpoint then failed with IO, and so did every format after it
 * (test_anchor "format cut" with a failing operation). */
static int erase_anchors(cairn *fs)
{
    uint32_t tries, a;
    for (tries = 0; tries < 8; tries++) {
        int err = find_anchors(fs), retry = 0;
        if (!err)
            err = cn_ckpt_format_erase(fs);
        for (a = 0; a < 2; a++)
            if (fs->segs[fs->anchor[a]].flags & CN_SF_FAILING) {
                cn_seg_retire(fs, fs->anchor[a]); /* marks its blocks bad */
                err = 0;
                retry = 1;
            }
        if (!retry)
            return err;
    }
    return CAIRN_ERR_IO;
}

static void teardown(cairn *fs)
{
#ifndef CAIRN_NO_MALLOC
    free(fs->mem_owned);
#endif
    fs->mem_owned = NULL;
    fs->mounted = 0;
}

/* ---- format ---- */

/* Segments after the anchors that are not bad (format). */
static uint32_t good_data_segs(const cairn *fs)
{
    uint32_t s, n = 0;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        n += fs->segs[s].state != CN_SEG_BAD;
    return n;
}

/* The tree of a volume never written: empty, but for the root directory's
 * inode. Format leaves it unwritten (a checkpoint root of CN_NONE), and the
 * mount builds it in the cache; the session's first change writes it, with
 * a journal, before its first record (journal.c cn_session_begin). So a
 * format erases no block for a root node or a journal: on 1 MiB of
 * nor-m25p16 that was 2 of its 4 erases, 1.2 of its 2.4 s. */
static int unwritten_tree(cairn *fs)
{
    static const uint8_t root_val[CN_INODE_LEN] = {CAIRN_TYPE_DIR, 0, 0, 0, 1, 0, 0, 0,
                                                   0, 0, 0, 0, 0, 0, 0, 0};
    int err = cn_tree_init_empty(fs);
    if (!err)
        err = cn_tree_put(fs, cn_key(CN_ROOT_ID, CN_K_INODE, 0), root_val, CN_INODE_LEN);
    fs->unwritten = 1;
    return err;
}

/* Are the count erase blocks from `first` good, as the driver's marks say? */
static int blocks_good(cairn *fs, uint32_t first, uint32_t count)
{
    struct cairn_dev *d = fs->dev;
    uint32_t i;
    for (i = 0; i < count && d->is_bad != NULL; i++)
        if (d->is_bad(d->ctx, first + i) != 0)
            return 0;
    return 1;
}

/* Erase the block holding `page` (of today's layout), unless the page's first
 * bytes read blank: 1 erased, 2 failed to (the block is left flagged, its
 * segment retired when it is used, and what it held is still there), 0
 * blank, or an error that ends the format. */
static int clear_block_of(cairn *fs, uint32_t page)
{
    uint32_t ppb = fs->dev->geo.pages_per_block, bps = fs->seg_pages / ppb;
    uint32_t block = page / ppb, seg = block / bps;
    uint8_t head[16];
    int blank, err;
    if (seg >= fs->seg_count)
        return 0;
    err = cn_dev_blank(fs, page, 0, head, sizeof head, &blank);
    if (err || blank)
        return err;
    err = cn_dev_erase_block(fs, seg, block % bps);
    return !err ? 1 : (fs->segs[seg].flags & CN_SF_FAILING) ? 2 : err;
}

/* The newest valid checkpoint of the layout the rule before session 34
 * gives, as pages [first, last] (CN_NONE if none or unknown): fs is set up
 * in that layout for the search, and left torn down. */
static void dividing_newest(cairn *fs, const struct cairn_config *cfg, uint32_t *first,
                            uint32_t *last)
{
    *first = *last = CN_NONE;
    if (setup_by(fs, cfg, CN_PICK_DIVIDING) != 0)
        return;
    if (find_anchors(fs) != 0 || cn_ckpt_newest(fs, first, last) != 0)
        *first = *last = CN_NONE;
    teardown(fs);
}

/* The turn in which clear_dividing_anchors erases a block of an old anchor:
 * 0 in the anchor without the newest checkpoint; in the one holding it (in
 * blocks [lo, hi]) 1 for the blocks past it, 2 for those before it, 3 for
 * its own (as ckpt.c erase_newest_last: a cut leaves that checkpoint or
 * none). */
static uint32_t clear_turn(uint32_t block, int in_newest, uint32_t lo, uint32_t hi)
{
    if (!in_newest)
        return 0;
    return block > hi ? 1u : block < lo ? 2u : 3u;
}

/* One turn of clear_dividing_anchors in the old layout's segment s: each
 * checkpoint copy's place of that turn whose first bytes are not blank has
 * its block erased. */
static int clear_places(cairn *fs, const struct layout *old, uint32_t s, uint32_t turn,
                        uint32_t lo, uint32_t hi)
{
    uint32_t ppb = fs->dev->geo.pages_per_block, p, done_block = CN_NONE, span;
    int in_newest = lo != CN_NONE && lo / (old->seg_pages / ppb) == s, err = 0;
    /* the pages the slots' copies take, copy after copy (FORMAT.md) */
    span = old->seg_pages / (old->ckpt_pages * fs->ckpt_copies) * old->ckpt_pages *
           fs->ckpt_copies;
    for (p = 0; p < span && err >= 0; p += old->ckpt_pages) {
        uint32_t page = s * old->seg_pages + p;
        if (page / ppb == done_block || clear_turn(page / ppb, in_newest, lo, hi) != turn)
            continue; /* erased already, or not in this turn */
        err = clear_block_of(fs, page);
        if (err == 1)
            done_block = page / ppb;
        if (err == 2)
            return 2;
    }
    return err < 0 ? err : 0;
}

/* A zero-config format where the rule before session 34 picks other
 * segments: a mount that finds no checkpoint of today's layout tries that
 * layout (cairn_mount), so an earlier volume's checkpoints there must go
 * first, or a format cut before its own checkpoint lands would give the
 * earlier volume back, in the state its surviving checkpoints name (I14).
 * Each checkpoint copy's place in that layout's two anchors is read (a few
 * bytes), and a block holding one that is not blank is erased: nothing on a
 * fresh device, at most both anchors on a reformat. The newest checkpoint
 * there, pages [first, last], goes last (clear_turn). A block that fails to
 * erase keeps what it held, and erasing on could leave an older checkpoint
 * of it the newest there (test_anchor "format cut", a failing operation):
 * the clearing stops, and the format goes on. */
static int clear_dividing_anchors(cairn *fs, const struct cairn_config *cfg, uint32_t first,
                                  uint32_t last)
{
    struct layout old;
    uint32_t ppb = fs->dev->geo.pages_per_block, bpl, s, n, turn;
    uint32_t lo = first == CN_NONE ? CN_NONE : first / ppb, hi = last / ppb;
    int err = 0;
    if (!plan_dividing_differs(cfg, &old))
        return 0;
    bpl = old.seg_pages / ppb;
    for (turn = 0; turn < 4u && !err; turn++)
        for (s = 0, n = 0; s < old.seg_count && n < 2u && !err; s++)
            if (blocks_good(fs, s * bpl, bpl)) {
                n++;
                err = clear_places(fs, &old, s, turn, lo, hi);
            }
    return err == 2 ? 0 : err;
}

/* A new volume's segment table: the anchors, the segments before them and
 * factory-bad ones left out, every other one free. Nothing else is erased
 * now: a segment is erased when it is first handed out (cn_seg_alloc erases
 * every free one not known erased), or ahead of need by cairn_gc in idle
 * time; so a format costs what littlefs's does, and a block that fails to
 * erase is retired when it is first used. */
static int format_table(cairn *fs)
{
    uint32_t s;
    for (s = 0; s < fs->seg_count; s++)
        fs->segs[s].state = s < fs->seg_base ? CN_SEG_BAD : CN_SEG_FREE;
    fs->segs[fs->anchor[0]].state = CN_SEG_ANCHOR;
    fs->segs[fs->anchor[1]].state = CN_SEG_ANCHOR;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (!cn_seg_good(fs, s))
            fs->segs[s].state = CN_SEG_BAD;
    if (good_data_segs(fs) + 2u < CN_MIN_SEGS)
        return CAIRN_ERR_NOSPC; /* bad blocks left less than the smallest volume */
    fs->next_id = 2;
    fs->root = CN_NONE; /* unwritten_tree, at mount */
    fs->height = 1;
    fs->log.seg = CN_NONE;
    return 0;
}

/* The anchors made ready, the table, the first checkpoint. A program of
 * that checkpoint that fails (a block worn out) retires its anchor and
 * starts again with the next good segment, as a failed erase does
 * (erase_anchors): format returned IO there, on NOR anchors of several
 * blocks (test_anchor "format cut", an operation failing). */
static int format_volume(cairn *fs)
{
    uint32_t tries, a;
    int err = CAIRN_ERR_IO;
    for (tries = 0; tries < 4u; tries++) {
        int retry = 0;
        err = erase_anchors(fs);
        if (!err)
            err = format_table(fs);
        if (!err)
            err = cn_ckpt_format(fs);
        for (a = 0; a < 2 && err == CAIRN_ERR_IO; a++)
            if (fs->segs[fs->anchor[a]].flags & CN_SF_FAILING) {
                cn_seg_retire(fs, fs->anchor[a]); /* marks its blocks bad */
                retry = 1;
            }
        if (!retry)
            return err;
    }
    return err;
}

int cairn_format(cairn *fs, const struct cairn_config *cfg)
{
    uint32_t first = CN_NONE, last = CN_NONE;
    int err;
    struct cairn_config c;
    struct layout old;
    if (fs == NULL || cfg == NULL)
        return CAIRN_ERR_INVAL;
    c = *cfg;
    c.read_only = 0;
    if (plan_dividing_differs(&c, &old))
        dividing_newest(fs, &c, &first, &last);
    err = setup_by(fs, &c, CN_PICK_NOW);
    if (err)
        return err;
    err = clear_dividing_anchors(fs, &c, first, last);
    if (!err)
        err = format_volume(fs);
    teardown(fs);
    return err;
}

/* ---- mount ---- */

static int pin_record(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len, void *arg)
{
    uint32_t s = CN_NONE;
    (void)arg;
    if ((type == CN_R_EXTENT && len == CN_RL_EXTENT) || (type == CN_R_RING && len == CN_RL_RING))
        s = cn_seg_of(fs, cn_get32(p + 8)); /* a ring record without pages: CN_NONE */
    else if (type == CN_R_MOVE && len == CN_RL_MOVE)
        s = cn_seg_of(fs, cn_get32(p + 12));
    else if (type == CN_R_NEXT && len == CN_RL_NEXT)
        s = cn_get32(p);
    /* the pin: a segment the journal names is not free while it replays
     * (no checkpoint comes before the replay's end, so nothing frees it) */
    if (s >= fs->seg_base && s < fs->seg_count) {
        struct cn_seg *g = &fs->segs[s];
        if (g->state == CN_SEG_FREE || g->state == CN_SEG_ERASED)
            g->state = type == CN_R_NEXT ? CN_SEG_LOG : CN_SEG_FULL;
    }
    return 0;
}

static int replay_record(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len, void *arg)
{
    (void)arg;
    return cn_apply(fs, type, p, len);
}

/* A volume format left unwritten: no tree root and no journal, nothing
 * else named (cairn_format). */
static int unwritten_sane(const cairn *fs)
{
    uint32_t h;
    if (fs->root != CN_NONE || fs->log.seg != CN_NONE)
        return fs->root != CN_NONE && fs->log.seg != CN_NONE;
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg != CN_NONE)
            return 0;
    return fs->height == 1 && fs->next_id == 2;
}

static int state_sane(cairn *fs)
{
    uint32_t s, h;
    int unwritten = fs->root == CN_NONE;
    if (!unwritten_sane(fs))
        return CAIRN_ERR_CORRUPT;
    if (fs->height < 1 || fs->height > CN_MAX_HEIGHT || fs->next_id < 2 ||
        fs->next_id > CN_ID_MAX + 1 ||
        (!unwritten && (fs->log.seg < fs->seg_base || fs->log.seg >= fs->seg_count ||
                        (fs->root & CN_DIRTY_REF))) ||
        fs->log.off > fs->seg_pages * fs->page_size)
        return CAIRN_ERR_CORRUPT;
    for (h = 0; h < CN_HEADS; h++)
        if (fs->head[h].seg != CN_NONE &&
            (fs->head[h].seg < fs->seg_base || fs->head[h].seg >= fs->seg_count ||
             fs->head[h].page > fs->seg_pages))
            return CAIRN_ERR_CORRUPT;
    for (s = 0; s < fs->seg_count; s++) {
        int anchor = s == fs->anchor[0] || s == fs->anchor[1];
        if (fs->segs[s].state > CN_SEG_BAD || fs->segs[s].live > fs->seg_pages ||
            anchor != (fs->segs[s].state == CN_SEG_ANCHOR) ||
            (s < fs->seg_base && !anchor && fs->segs[s].state != CN_SEG_BAD))
            return CAIRN_ERR_CORRUPT;
    }
    /* heads beyond this mount's data_heads are closed */
    for (h = CN_H_DATA + fs->data_heads; h < CN_HEADS; h++) {
        if (fs->head[h].seg != CN_NONE && fs->segs[fs->head[h].seg].state == CN_SEG_OPEN)
            fs->segs[fs->head[h].seg].state = CN_SEG_FULL;
        fs->head[h].seg = CN_NONE;
    }
    return 0;
}

/* A clean checkpoint says where the journal goes on. Are those bytes erased?
 * If not, something was written after this checkpoint that no newer valid
 * checkpoint accounts for (newer slots lost or erased): replay the journal
 * instead and continue in fresh segments (invariant I4). The heads' next
 * pages are read at the session's first change (alloc.c cn_heads_check). */
static int clean_ends_blank(cairn *fs, int *blank)
{
    uint32_t ps = fs->page_size;
    *blank = 1;
    if (fs->log.seg == CN_NONE || fs->log.off >= fs->seg_pages * ps)
        return 0;
    return cn_dev_blank(fs, fs->log.seg * fs->seg_pages + fs->log.off / ps, fs->log.off % ps,
                        fs->scratch2, ps - fs->log.off % ps, blank);
}

/* A recovery may take the last free segments: what it writes counts only
 * once its checkpoint is durable, so a cut before gives them back. But every
 * cut abandons the heads' partly written segments, and many cuts in a row
 * leave garbage and free segments down at GC's floor, where the next session
 * could not collect at all (torture: removes refused at 42% full). So before
 * its checkpoint, recovery collects until GC has room of its own again. */
static int recovery_room(cairn *fs)
{
    uint32_t rounds;
    for (rounds = 0; rounds < 8u && cn_free_segs(fs) <= CN_META_FLOOR; rounds++) {
        int err = cn_gc_collect(fs, CN_GC_SPACE);
        if (err)
            return err == CAIRN_ERR_NOSPC ? 0 : err;
    }
    return 0;
}

/* After a cut: replay the journal, then continue in fresh segments (pages
 * past the last durable record may be torn) and checkpoint the result. */
static int recover(cairn *fs)
{
    uint32_t s, h, end_seg, end_off, n;
    int err;
    fs->recovering = CN_RECOVERY_OPEN;
    cn_anchor_resume(fs); /* on the checkpoint's state: what is durable */
    err = cn_log_scan(fs, pin_record, NULL, &end_seg, &end_off, &n);
    if (err)
        return err;
    for (s = fs->seg_base; s < fs->seg_count; s++)
        if (fs->segs[s].state == CN_SEG_ERASED)
            fs->segs[s].state = CN_SEG_FREE; /* an erase may have been cut */
    for (h = 0; h < CN_HEADS; h++) {
        if (fs->head[h].seg != CN_NONE && fs->segs[fs->head[h].seg].state == CN_SEG_OPEN)
            fs->segs[fs->head[h].seg].state = CN_SEG_FULL;
        fs->head[h].seg = CN_NONE;
    }
    /* A read-only replay keeps every node its records change in the cache
     * (nothing may be written), so a long journal of changes spread over
     * the tree can outgrow it: NOSPC, a cache too small, not a volume
     * broken. It said CORRUPT before: `cairn fsck` (32 slots) refused a
     * sound volume SIGKILLed in the middle of tar on 1 MiB of nor-m25p16,
     * 431 records of creates after the checkpoint (DESIGN.md "Mount",
     * read-only). */
    err = cn_log_scan(fs, replay_record, NULL, &end_seg, &end_off, &n);
    if (err)
        return err == CAIRN_ERR_IO || (err == CAIRN_ERR_NOSPC && fs->read_only)
                   ? err
                   : CAIRN_ERR_CORRUPT;
    fs->log.seq += n;
    /* (a lookup pins up to height nodes: tree.c leave_room) */
    if (fs->read_only)
        return cn_cache_evictable(fs) < fs->height ? CAIRN_ERR_NOSPC : 0;
    cn_ckpt_first_of_session(fs, 1);
    err = cn_log_restart(fs, CN_RECOVERY_SEGS);
    if (!err)
        err = recovery_room(fs);
    if (!err && cn_anchor_pending(fs))
        /* a failing anchor's replacement is emptied before this checkpoint,
         * which then frees it: one slot fewer per session (anchor.c) */
        err = cn_evict_for_anchor(fs);
    if (!err)
        err = cn_commit(fs);
    /* Fewer free than the next recovery needs: the old journal kept a data
     * page, or a squeeze took the last segment for a victim. Its checkpoint
     * has freed the old journal and closed nothing, so the metadata head's
     * room and the old journal as a victim are GC's now (a squeeze there is
     * unrecorded: a cut gives back what it wrote). Ending at 1 free, every
     * mount after took the last segment for its journal and freed the old
     * one, and no remove could find room (torture --geo random --aged 30,
     * seed 334045). */
    if (!err && cn_free_segs(fs) < CN_RECOVERY_SEGS)
        err = recovery_room(fs);
    /* Out of segments after a checkpoint of its own landed: the volume is
     * recovered up to it, and what the recovery did after it (GC's moves)
     * is in the journal, for the session to commit, as after any write. */
    if (err == CAIRN_ERR_NOSPC && fs->recovering == CN_RECOVERY_DURABLE)
        err = 0;
    fs->recovering = 0;
    return err;
}

/* A failing anchor's replacement is made at mount, not at the first write:
 * a device in a brown-out loop may never get that far, and every session
 * that is cut spends slots of the healthy anchor, the only one left. Running
 * out of room is the next write's to report; the mount stands. Not when a
 * step left the session broken (the first session of a volume never written
 * could not write its tree, journal and checkpoint): every call would answer
 * IO, reads too, so the mount fails instead (NOSPC becomes ROFS there, and a
 * read-only mount reads the volume). Before session 39 such a mount
 * returned 0 (fuzz_image, an unwritten volume whose anchor was failing). */
static int replace_anchor_now(cairn *fs)
{
    int err = cn_session_begin(fs);
    cn_anchor_resume(fs);
    if (!err)
        err = cn_evict_for_anchor(fs);
    if (!err && cn_anchor_pending(fs))
        err = cn_commit(fs); /* frees the replacement; the next checkpoint names it */
    if (!err && cn_anchor_pending(fs))
        err = cn_commit(fs);
    if (err && fs->broken)
        return err;
    return err == CAIRN_ERR_NOSPC ? 0 : err;
}

/* Mount with the segments `rule` picks under zero config. *found: a
 * checkpoint of that layout was loaded (else a CAIRN_ERR_CORRUPT may only mean
 * the volume was laid out otherwise; nothing was written). */
static int mount_by(cairn *fs, const struct cairn_config *cfg, enum cn_pick rule, int *found)
{
    int err, clean;
    *found = 0;
    err = setup_by(fs, cfg, rule);
    if (err)
        return err;
    clean = find_anchors(fs);
    if (!clean)
        clean = cn_ckpt_load(fs);
    *found = clean >= 0;
    err = clean < 0 ? clean : state_sane(fs);
    if (!err && fs->root == CN_NONE)
        /* format's checkpoint, clean: anything else naming no tree is not
         * a state cairn writes */
        err = clean == 1 ? unwritten_tree(fs) : CAIRN_ERR_CORRUPT;
    if (!err)
        cn_seg_mark_erased(fs);
    if (!err && clean == 1 && !fs->read_only) {
        int blank;
        err = clean_ends_blank(fs, &blank);
        clean = blank;
    }
    if (!err) {
        fs->log.flushed = fs->log.off;
        if (clean) {
            fs->session_pending = !fs->read_only;
            fs->heads_unchecked = !fs->read_only;
            cn_anchor_resume(fs); /* a NAND standby, or a failing anchor's R */
            cn_ckpt_first_of_session(fs, 0);
        } else {
            err = recover(fs);
        }
        fs->recovering = 0;
    }
    if (!err) {
        fs->mounted = 1;
        if (!fs->read_only)
            err = cn_finish_orphans(fs, CN_NONE);
        if (!err && !fs->read_only && cn_anchor_pending(fs))
            err = replace_anchor_now(fs);
        if (!err)
            cn_state_check(fs);
    }
    /* No checkpoint could be written while this mount wrote (a recovery's
     * or a replacement's: both anchors failing, or one and the other
     * full), or worn-out segments left a recovery no room: no change can be
     * made durable, and no remove can make room without one. The newest
     * checkpoint and the journal after it still read. Say so, as a writable
     * mount of a write-protected disk does (EROFS), rather than IO or
     * NOSPC: a read-only mount then reads every file (DESIGN.md "Anchors",
     * test_eol). */
    if (*found && !fs->read_only &&
        (err == CAIRN_ERR_NOSPC || (err == CAIRN_ERR_IO && cn_ckpt_unwritable(fs))))
        err = CAIRN_ERR_ROFS;
    if (err)
        teardown(fs);
    return err;
}

/* Is there a layout of the rule before to fall back to? Not inlined: its
 * layouts stay off the stack of the mount's deepest calls (minimal build:
 * 960 -> 1,024 B with them in cairn_mount's frame). */
CN_NOINLINE static int mount_may_fall_back(const struct cairn_config *cfg)
{
    struct layout before;
    return plan_dividing_differs(cfg, &before);
}

/* A volume formatted with zero config before session 34 may have segments of
 * the rule before (CN_PICK_DIVIDING): its checkpoints record them, and none
 * verifies in the layout of today's rule. Only then is the other layout
 * tried, so a volume of today's is never read as anything else. */
int cairn_mount(cairn *fs, const struct cairn_config *cfg)
{
    int found, err;
    if (fs == NULL)
        return CAIRN_ERR_INVAL;
    err = mount_by(fs, cfg, CN_PICK_NOW, &found);
    if (err == CAIRN_ERR_CORRUPT && !found && mount_may_fall_back(cfg))
        err = mount_by(fs, cfg, CN_PICK_DIVIDING, &found);
    return err;
}

int cairn_unmount(cairn *fs)
{
    int err = cn_fs_ready(fs, 0);
    if (err == CAIRN_ERR_IO && fs->mounted) {
        teardown(fs); /* broken: nothing more reaches the device, memory is freed */
        return err;
    }
    if (err)
        return err;
    if (!fs->read_only)
        err = cairn_sync(fs);
    if (!err && !fs->read_only &&
        (!fs->session_pending || (fs->dirty_nodes > 0 && !fs->unwritten))) {
        err = cn_flush_nodes(fs);
        if (!err) {
            cn_seg_release_dead(fs);
            err = cn_ckpt_write(fs, 1);
        }
    }
    if (err == CAIRN_ERR_NOSPC)
        return err; /* still mounted, nothing lost: free space and unmount again */
    teardown(fs);
    return err;
}

int cairn_sync(cairn *fs)
{
    uint32_t i;
    int err = cn_fs_ready(fs, 0);
    if (err || fs->read_only)
        return err;
    for (i = 0; i < fs->max_open && !err; i++)
        if (fs->files[i].id != 0 && fs->files[i].id != CN_NONE)
            err = cn_sync_file(fs, &fs->files[i]);
    if (!err)
        err = cn_log_flush(fs);
    if (!err)
        err = cn_dev_sync(fs);
    return err;
}

int cairn_fs_stat(cairn *fs, struct cairn_fsinfo *info)
{
    uint64_t live = 0, seg_bytes;
    uint32_t s, usable = 0;
    uint64_t sum = 0;
    int err = cn_fs_ready(fs, 0);
    if (err)
        return err;
    if (info == NULL)
        return CAIRN_ERR_INVAL;
    memset(info, 0, sizeof *info);
    seg_bytes = (uint64_t)fs->seg_pages * fs->page_size;
    for (s = fs->seg_base; s < fs->seg_count; s++) {
        if (fs->segs[s].state == CN_SEG_BAD) {
            info->bad_blocks++;
            continue;
        }
        live += fs->segs[s].live;
        if (fs->segs[s].flags & CN_SF_EVICT)
            continue; /* kept for an anchor (anchor.c): not the user's */
        usable++;
        sum += cn_seg_erases(fs, s);
    }
    info->bad_blocks += fs->seg_base - 2; /* factory-bad before the anchors */
    cn_wear_spread(fs, &info->erase_min, &info->erase_max);
    info->erase_mean = usable ? (uint32_t)(sum / usable) : 0;
    info->total_bytes = (uint64_t)usable * seg_bytes;
    info->used_bytes = live * fs->page_size;
    info->free_bytes = cn_free_promise(fs); /* what one new file surely takes (alloc.c) */
    info->block_size = (uint32_t)seg_bytes;
    info->page_size = fs->page_size;
    info->name_max = CAIRN_NAME_MAX;
    return 0;
}

/* ---- errors ---- */

static const char *const err_names[] = {
    "CAIRN_OK", "CAIRN_ERR_IO", "CAIRN_ERR_CORRUPT", "CAIRN_ERR_NOENT", "CAIRN_ERR_EXIST",
    "CAIRN_ERR_NOTDIR", "CAIRN_ERR_ISDIR", "CAIRN_ERR_NOTEMPTY", "CAIRN_ERR_NAMETOOLONG",
    "CAIRN_ERR_BADF", "CAIRN_ERR_NOSPC", "CAIRN_ERR_INVAL", "CAIRN_ERR_ROFS",
    "CAIRN_ERR_MFILE", "CAIRN_ERR_NOATTR", "CAIRN_ERR_FBIG"};
static const char *const err_texts[] = {
    "no error", "the device failed", "on-flash data failed a check",
    "no such file or directory", "already exists", "a path component is not a directory",
    "is a directory", "directory not empty", "name too long", "bad handle or access mode",
    "no space left", "invalid argument", "read-only file system",
    "too many open files or directories", "no such attribute", "file too large"};

const char *cairn_errname(int err)
{
    if (err > 0 || -err >= (int)(sizeof err_names / sizeof err_names[0]))
        return "CAIRN_ERR_UNKNOWN";
    return err_names[-err];
}

const char *cairn_strerror(int err)
{
    if (err > 0 || -err >= (int)(sizeof err_texts / sizeof err_texts[0]))
        return "unknown error";
    return err_texts[-err];
}
