/* Node cache: a fixed array of node-sized slots holding clean copies of tree
 * nodes and the dirty (copy-on-write) nodes not yet written. Dirty nodes are
 * referenced by their parents as CN_DIRTY_REF | slot, so a flush can write
 * them bottom-up and patch each parent before the parent itself is written. */
#include "cn.h"

#define NODE_HDR CN_NODE_HDR

uint8_t *cn_slot_data(cairn *fs, uint32_t slot)
{
    return fs->cache + (size_t)slot * fs->node_size;
}

CN_NOINLINE static int node_check(const uint8_t *node, uint32_t size)
{
    uint32_t used = cn_get16(node + CN_NODE_O_USED);
    uint8_t hdr[NODE_HDR];
    uint32_t crc;
    if (cn_get16(node + CN_NODE_O_MAGIC) != CN_NODE_MAGIC ||
        node[CN_NODE_O_VERSION] != CN_NODE_VERSION || node[CN_NODE_O_LEVEL] >= CN_MAX_HEIGHT)
        return CAIRN_ERR_CORRUPT;
    if (used > size - NODE_HDR)
        return CAIRN_ERR_CORRUPT;
    memcpy(hdr, node, NODE_HDR);
    cn_put32(hdr + CN_NODE_O_CRC, 0);
    crc = cn_crc32(0, hdr, NODE_HDR);
    crc = cn_crc32(crc, node + NODE_HDR, used);
    return cn_crc_ok(cn_get32(node + CN_NODE_O_CRC), crc) ? 0 : CAIRN_ERR_CORRUPT;
}

/* A slot to reuse (>= 0), or an error. */
/* Slots the read-ahead holds. */
static uint32_t ra_slots(const cairn *fs)
{
    return (fs->ra_pages + fs->node_pages - 1) / fs->node_pages;
}

static int find_victim(cairn *fs)
{
    uint32_t i, best = CN_NONE;
    for (i = 0; i < fs->nslots; i++) {
        struct cn_slot *s = &fs->slots[i];
        if (!s->used)
            return (int)i;
        if (!s->dirty && !s->pins && (best == CN_NONE || s->lru < fs->slots[best].lru))
            best = i;
    }
    if (best == CN_NONE)
        return CAIRN_ERR_NOSPC; /* cache too small for the tree: a config error */
    if (fs->ra_pages && best - fs->ra_slot < ra_slots(fs))
        fs->ra_pages = 0;
    return (int)best;
}

/* The first of n adjacent slots that may be taken (unused, or clean and
 * unpinned), the least recently used such run, or CN_NONE. */
static uint32_t free_run(const cairn *fs, uint32_t n)
{
    uint32_t i, j, best = CN_NONE, best_lru = 0;
    for (i = 0; i + n <= fs->nslots; i++) {
        uint32_t lru = 0;
        int ok = 1;
        for (j = i; j < i + n && ok; j++) {
            const struct cn_slot *s = &fs->slots[j];
            ok = !s->used || (!s->dirty && !s->pins);
            if (s->used && s->lru > lru)
                lru = s->lru;
        }
        if (ok && (best == CN_NONE || lru < best_lru)) {
            best = i;
            best_lru = lru;
        }
    }
    return best;
}

/* Read-ahead: a sequential reader of small pieces gets the next pages of
 * its extent in one device call, held in one slot of the node cache (which
 * is mostly idle while data streams) instead of a buffer of its own. */
const uint8_t *cn_ra_page(cairn *fs, uint32_t phys)
{
    uint32_t i;
    if (!fs->ra_pages || phys < fs->ra_phys || phys - fs->ra_phys >= fs->ra_pages)
        return NULL;
    for (i = 0; i < ra_slots(fs); i++)
        fs->slots[fs->ra_slot + i].lru = ++fs->lru_clock;
    return cn_slot_data(fs, fs->ra_slot) + (size_t)(phys - fs->ra_phys) * fs->page_size;
}

/* Read up to `pages` (at most CN_RA_SLOTS slots' worth) from phys into
 * adjacent slots; fewer when the cache has no such run free. */
int cn_ra_fill(cairn *fs, uint32_t phys, uint32_t pages)
{
    uint32_t slot = fs->ra_slot, n = (pages + fs->node_pages - 1) / fs->node_pages, i;
    uint32_t had = fs->ra_pages ? ra_slots(fs) : 0;
    int err;
    if (n > CN_RA_SLOTS)
        n = CN_RA_SLOTS;
    fs->ra_pages = 0;
    if (had < n) /* else the window moves on in the slots it had: no node is evicted */
        while (n > 0 && (cn_cache_evictable(fs) <= fs->height + 4u + n ||
                         (slot = free_run(fs, n)) == CN_NONE))
            n--; /* the tree needs the slots more */
    if (n == 0)
        return CAIRN_ERR_NOSPC;
    if (pages > n * fs->node_pages)
        pages = n * fs->node_pages;
    for (i = 0; i < n; i++)
        fs->slots[slot + i].used = 0;
    err = cn_dev_read(fs, phys, 0, cn_slot_data(fs, slot), pages * fs->page_size);
    if (err)
        return err;
    for (i = 0; i < n; i++) {
        struct cn_slot *s = &fs->slots[slot + i];
        s->used = 1;
        s->dirty = 0;
        s->pins = 0;
        s->addr = CN_NONE; /* never found as a node */
        s->lru = ++fs->lru_clock;
    }
    fs->ra_slot = slot;
    fs->ra_phys = phys;
    fs->ra_pages = pages;
    return 0;
}

/* Lend a slot for data (file.c's stage): pinned and naming no node until it
 * is taken back, so no node goes there and no lookup finds it. Only while
 * the rest of the cache holds a put at the greatest height (2 x CN_MAX_HEIGHT
 * + 1 slots, tree.c) and a path more is evictable now; else NOSPC. */
int cn_cache_lend(cairn *fs)
{
    int got;
    struct cn_slot *s;
    if (fs->nslots < 2u * CN_MAX_HEIGHT + 3u || cn_cache_evictable(fs) <= fs->height + 4u)
        return CAIRN_ERR_NOSPC;
    got = find_victim(fs);
    if (got < 0)
        return got;
    s = &fs->slots[got];
    s->used = 1;
    s->dirty = 0;
    s->pins = 1;
    s->sane = 1;
    s->addr = CN_NONE; /* never found as a node */
    s->lru = ++fs->lru_clock;
    return got;
}

void cn_cache_take_back(cairn *fs, uint32_t slot)
{
    CN_ASSERT(slot < fs->nslots && fs->slots[slot].pins == 1 && !fs->slots[slot].dirty);
    fs->slots[slot].used = 0;
    fs->slots[slot].pins = 0;
}

uint32_t cn_cache_evictable(const cairn *fs)
{
    uint32_t i, n = 0;
    for (i = 0; i < fs->nslots; i++)
        if (!fs->slots[i].used || (!fs->slots[i].dirty && !fs->slots[i].pins))
            n++;
    return n;
}

int cn_cache_get(cairn *fs, uint32_t ref)
{
    uint32_t i, slot;
    int err;
    if (ref & CN_DIRTY_REF) {
        slot = ref & ~CN_DIRTY_REF;
        if (slot >= fs->nslots || !fs->slots[slot].used || !fs->slots[slot].dirty)
            return CAIRN_ERR_CORRUPT;
        fs->slots[slot].lru = ++fs->lru_clock;
        return (int)slot;
    }
    for (i = 0; i < fs->nslots; i++) {
        if (fs->slots[i].used && !fs->slots[i].dirty && fs->slots[i].addr == ref) {
            fs->slots[i].lru = ++fs->lru_clock;
            return (int)i;
        }
    }
    /* a node never crosses a segment and never sits in an anchor */
    if (ref >= fs->seg_count * fs->seg_pages ||
        ref % fs->seg_pages + fs->node_pages > fs->seg_pages ||
        cn_seg_of(fs, ref) < fs->seg_base)
        return CAIRN_ERR_CORRUPT;
    err = find_victim(fs);
    if (err < 0)
        return err;
    slot = (uint32_t)err;
    fs->slots[slot].used = 0;
    err = cn_dev_read(fs, ref, 0, cn_slot_data(fs, slot), fs->node_size);
    if (!err)
        err = node_check(cn_slot_data(fs, slot), fs->node_size);
    if (err)
        return err;
    fs->slots[slot].used = 1;
    fs->slots[slot].dirty = 0;
    fs->slots[slot].pins = 0;
    fs->slots[slot].addr = ref;
    fs->slots[slot].sane = 0;
    fs->slots[slot].level = cn_slot_data(fs, slot)[CN_NODE_O_LEVEL];
    fs->slots[slot].lru = ++fs->lru_clock;
    return (int)slot;
}

int cn_cache_new(cairn *fs)
{
    int got = find_victim(fs);
    uint32_t slot = (uint32_t)got;
    if (got < 0)
        return got;
    fs->slots[slot].used = 1;
    fs->slots[slot].dirty = 1;
    fs->slots[slot].sane = 1;
    fs->slots[slot].pins = 0;
    fs->slots[slot].addr = CN_NONE;
    fs->slots[slot].lru = ++fs->lru_clock;
    fs->dirty_nodes++;
    return got;
}

/* Turn a clean cached node into a dirty private copy: its flash copy is
 * garbage from now on (reusable only after the next checkpoint). */
void cn_cache_cow(cairn *fs, uint32_t slot)
{
    struct cn_slot *s = &fs->slots[slot];
    if (s->dirty)
        return;
    cn_live_add(fs, s->addr, -(int32_t)fs->node_pages);
    s->addr = CN_NONE;
    s->dirty = 1;
    fs->dirty_nodes++;
}

void cn_cache_drop(cairn *fs, uint32_t slot)
{
    struct cn_slot *s = &fs->slots[slot];
    if (s->dirty)
        fs->dirty_nodes--;
    else
        cn_live_add(fs, s->addr, -(int32_t)fs->node_pages);
    s->used = 0;
    s->dirty = 0;
    s->pins = 0;
}

static void patch_parent(cairn *fs, uint32_t child, uint32_t level, uint32_t addr)
{
    uint32_t ref = CN_DIRTY_REF | child, i, j;
    if (fs->root == ref) {
        fs->root = addr;
        return;
    }
    for (i = 0; i < fs->nslots; i++) {
        uint8_t *n;
        uint32_t count;
        if (!fs->slots[i].used || !fs->slots[i].dirty || fs->slots[i].level != level + 1)
            continue;
        n = cn_slot_data(fs, i);
        count = cn_get16(n + CN_NODE_O_COUNT);
        for (j = 0; j < count; j++) {
            uint8_t *e = n + NODE_HDR + j * CN_NODE_IENT;
            if (cn_get32(e + 8) == ref) {
                cn_put32(e + 8, addr);
                return;
            }
        }
    }
}

CN_NOINLINE static int write_node(cairn *fs, uint32_t slot)
{
    uint8_t *n = cn_slot_data(fs, slot);
    uint32_t page, got, used = cn_get16(n + CN_NODE_O_USED), crc, tries = 0;
    int err;
    cn_put32(n + CN_NODE_O_SEQ, fs->ckpt_seq + 1); /* the checkpoint that will name it */
    cn_put32(n + CN_NODE_O_CRC, 0);
    crc = cn_crc32(0, n, NODE_HDR);
    crc = cn_crc32(crc, n + NODE_HDR, used);
    cn_put32(n + CN_NODE_O_CRC, crc);
    /* bytes past `used` are stale; clear them so images compress and read clean */
    memset(n + NODE_HDR + used, 0xFF, fs->node_size - NODE_HDR - used);
    do { /* a failed program retires the segment: write the node elsewhere */
        err = cn_head_pages(fs, CN_H_META, fs->node_pages, 1, &page, &got);
        if (!err)
            err = cn_dev_prog(fs, page, 0, n, fs->node_size, NULL, 0);
        if (err && (fs->segs[cn_seg_of(fs, page)].flags & CN_SF_FAILING))
            cn_head_failed(fs, page);
        else if (err)
            return err;
    } while (err && ++tries < 4);
    if (err)
        return err;
    cn_live_add(fs, page, (int32_t)fs->node_pages);
    fs->slots[slot].addr = page;
    fs->slots[slot].dirty = 0;
    fs->dirty_nodes--;
    patch_parent(fs, slot, fs->slots[slot].level, page);
    return 0;
}

/* Write every dirty node, leaves first, so each parent is written after its
 * children's new addresses were patched into it. */
int cn_cache_flush(cairn *fs)
{
    uint32_t level, i;
    for (level = 0; level < CN_MAX_HEIGHT; level++) {
        for (i = 0; i < fs->nslots; i++) {
            if (fs->slots[i].used && fs->slots[i].dirty && fs->slots[i].level == level) {
                int err = write_node(fs, i);
                if (err)
                    return err;
            }
        }
    }
    return 0;
}

/* Write dirty leaves, least recently used first, until `want` slots are
 * evictable: their parents stay dirty, patched. */
int cn_cache_flush_leaves(cairn *fs, uint32_t want)
{
    while (cn_cache_evictable(fs) < want) {
        uint32_t i, lru = CN_NONE;
        int err;
        for (i = 0; i < fs->nslots; i++)
            if (fs->slots[i].used && fs->slots[i].dirty && fs->slots[i].level == 0 &&
                !fs->slots[i].pins && (lru == CN_NONE || fs->slots[i].lru < fs->slots[lru].lru))
                lru = i;
        if (lru == CN_NONE)
            return 0;
        err = write_node(fs, lru);
        if (err)
            return err;
    }
    return 0;
}
