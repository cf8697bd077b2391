/* The index: one copy-on-write B+tree keyed by 64-bit keys (see cn_key).
 * Node layout: docs/FORMAT.md "Tree nodes". Internal entry 0 covers every
 * key below entry 1 (its own key is not compared); a child ref in RAM may be
 * CN_DIRTY_REF|slot, on flash it is always a page.
 *
 * No recursion: a path records the slot and index at each level, pinned in
 * the cache while an operation runs. Modifying a node first makes its whole
 * path dirty (copy-on-write), so the flush can write bottom-up. Underfull
 * nodes are not merged; an empty node is removed from its parent. */
#include "cn.h"

#define HDR CN_NODE_HDR
#define IENT CN_NODE_IENT
#define LEAF_HDR CN_NODE_LEAF_HDR

#define NO_SLOT 0xFFu
struct path {
    uint8_t slot[CN_MAX_HEIGHT];  /* cache slot per level, NO_SLOT once dropped */
    uint8_t n;                    /* levels pinned */
    uint16_t idx[CN_MAX_HEIGHT];  /* child index (internal) or entry index (leaf) */
    uint16_t off;                 /* leaf: byte offset of entry idx */
    uint8_t pick;                 /* descend_from: child to take (in the padding) */
};
#define WALK_FRESH 0xFFFFu /* idx of a level not yet visited by a walk */

static uint32_t n_count(const uint8_t *n) { return cn_get16(n + CN_NODE_O_COUNT); }
static uint32_t n_used(const uint8_t *n) { return cn_get16(n + CN_NODE_O_USED); }
static void n_set(uint8_t *n, uint32_t count, uint32_t used)
{
    cn_put16(n + CN_NODE_O_COUNT, (uint16_t)count);
    cn_put16(n + CN_NODE_O_USED, (uint16_t)used);
}
static uint32_t cap(const cairn *fs) { return fs->node_size - HDR; }
static uint32_t ent_size(const uint8_t *e) { return LEAF_HDR + cn_get16(e + 8); }
static uint8_t *ient(uint8_t *n, uint32_t i) { return n + HDR + i * IENT; }
/* Byte offset of leaf entry idx (entries are walked: they vary in size). */
static uint32_t entry_off(const uint8_t *n, uint32_t idx)
{
    uint32_t i, o = 0;
    for (i = 0; i < idx; i++)
        o += ent_size(n + HDR + o);
    return o;
}

static void node_init(cairn *fs, uint32_t slot, uint32_t level)
{
    uint8_t *n = cn_slot_data(fs, slot);
    memset(n, 0, HDR);
    cn_put16(n + CN_NODE_O_MAGIC, CN_NODE_MAGIC);
    n[CN_NODE_O_VERSION] = CN_NODE_VERSION;
    n[CN_NODE_O_LEVEL] = (uint8_t)level;
    fs->slots[slot].level = (uint8_t)level;
}

static void unpin(cairn *fs, struct path *p)
{
    uint32_t i;
    for (i = 0; i < p->n && i < CN_MAX_HEIGHT; i++) /* see release_below */
        if (p->slot[i] != NO_SLOT && fs->slots[p->slot[i]].pins)
            fs->slots[p->slot[i]].pins--;
    p->n = 0;
}

/* Structural check of a node loaded from flash: counts, lengths, key order. */
CN_NOINLINE static int node_sane(const cairn *fs, const uint8_t *n, uint32_t want_level)
{
    uint32_t count = n_count(n), used = n_used(n), i, off = 0;
    uint64_t prev = 0;
    if (n[CN_NODE_O_LEVEL] != want_level)
        return CAIRN_ERR_CORRUPT;
    if (want_level > 0) {
        if (count == 0 || used != count * IENT || used > cap(fs))
            return CAIRN_ERR_CORRUPT;
        for (i = 1; i < count; i++)
            if (cn_get64(n + HDR + i * IENT) <= cn_get64(n + HDR + (i - 1) * IENT) && i > 1)
                return CAIRN_ERR_CORRUPT;
        for (i = 0; i < count; i++) /* a node on flash names pages, never cache slots */
            if (cn_get32(n + HDR + i * IENT + 8) & CN_DIRTY_REF)
                return CAIRN_ERR_CORRUPT;
        return 0;
    }
    for (i = 0; i < count; i++) {
        uint64_t k;
        if (off + LEAF_HDR > used || off + ent_size(n + HDR + off) > used)
            return CAIRN_ERR_CORRUPT;
        k = cn_get64(n + HDR + off);
        if (i > 0 && k <= prev)
            return CAIRN_ERR_CORRUPT;
        prev = k;
        off += ent_size(n + HDR + off);
    }
    return off == used ? 0 : CAIRN_ERR_CORRUPT;
}

/* Check the node cn_cache_get returned (slot >= 0, or an error) for level lv
 * of the path, and pin it there. A leaf of its own, called after the read:
 * the lookup chain is descend_from > cn_cache_get > cn_dev_read. */
CN_NOINLINE static int pin(cairn *fs, struct path *p, uint32_t lv, int got)
{
    uint32_t slot = (uint32_t)got;
    int err;
    if (got < 0)
        return got;
    if (!fs->slots[slot].sane) { /* checked once per load, not per visit */
        err = node_sane(fs, cn_slot_data(fs, slot), fs->height - 1 - lv);
        if (err)
            return err;
        fs->slots[slot].sane = 1;
    } else if (fs->slots[slot].level != fs->height - 1 - lv) {
        return CAIRN_ERR_CORRUPT;
    }
    fs->slots[slot].pins++;
    p->slot[lv] = (uint8_t)slot;
    p->n = (uint8_t)(lv + 1);
    return 0;
}

/* Load ref for level `lv` of the path and pin it. */
static int load(cairn *fs, struct path *p, uint32_t lv, uint32_t ref)
{
    return pin(fs, p, lv, cn_cache_get(fs, ref));
}

static uint32_t internal_find(const uint8_t *n, uint64_t key)
{
    uint32_t lo = 1, hi = n_count(n); /* first entry with key > search */
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cn_get64(n + HDR + mid * IENT) <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

static void leaf_find(const uint8_t *n, uint64_t key, uint32_t *pos, uint32_t *off)
{
    uint32_t i = 0, o = 0, count = n_count(n);
    while (i < count && cn_get64(n + HDR + o) < key) {
        o += ent_size(n + HDR + o);
        i++;
    }
    *pos = i;
    *off = o;
}

/* One level of a descent, on the node just pinned at level p->n - 1: set its
 * idx (and off in a leaf) and return the child to load next (0 in a leaf).
 * Out of line, so descend_from keeps only a few registers across the read. */
CN_NOINLINE static uint32_t step_down(cairn *fs, struct path *p, uint64_t key)
{
    uint32_t lv = p->n - 1u, i;
    uint8_t *n = cn_slot_data(fs, p->slot[lv]);
    if (lv + 1 < fs->height) {
        i = p->pick == 0 ? internal_find(n, key) : p->pick == 1 ? 0 : n_count(n) - 1;
        p->idx[lv] = (uint16_t)i;
        return cn_get32(ient(n, i) + 8);
    }
    if (p->pick == 0) {
        uint32_t pos, off;
        leaf_find(n, key, &pos, &off);
        p->idx[lv] = (uint16_t)pos;
        p->off = (uint16_t)off;
    } else if (p->pick == 1 || n_count(n) == 0) {
        p->idx[lv] = 0;
        p->off = 0;
    } else { /* the last entry */
        p->idx[lv] = (uint16_t)(n_count(n) - 1);
        p->off = (uint16_t)entry_off(n, n_count(n) - 1);
    }
    return 0;
}

/* Descend from level p->n (whose parent's slot and idx are set when p->n > 0)
 * to the leaf, taking child p->pick at each level: 0 = by key, 1 = first,
 * 2 = last. On an error the whole path is unpinned. */
static int descend_from(cairn *fs, struct path *p, uint64_t key)
{
    uint32_t ref = fs->root;
    if (p->n > 0)
        ref = cn_get32(ient(cn_slot_data(fs, p->slot[p->n - 1]), p->idx[p->n - 1]) + 8);
    while (p->n < fs->height) {
        int err = pin(fs, p, p->n, cn_cache_get(fs, ref));
        if (err) {
            unpin(fs, p);
            return err;
        }
        ref = step_down(fs, p, key);
    }
    return 0;
}

/* Pin the path from the root to the leaf where key belongs (nothing stays
 * pinned on an error). A macro, not a call: it sits on every lookup's chain. */
#define descend(fs, p, key) ((p)->n = 0, (p)->pick = 0, descend_from((fs), (p), (key)))

/* The loops over p->slot stop at CN_MAX_HEIGHT as well as at p->n: p->n
 * never exceeds it, but without that bound gcc -O3 -flto reads the loop as
 * able to run past slot[] and warns (maybe-uninitialized) in callers. */
static void release_below(cairn *fs, struct path *p, uint32_t lv)
{
    uint32_t i;
    for (i = lv; i < p->n && i < CN_MAX_HEIGHT; i++)
        if (fs->slots[p->slot[i]].pins)
            fs->slots[p->slot[i]].pins--;
    p->n = (uint8_t)lv;
}

/* Move the path towards the next (dir 1) or previous (dir -1) leaf: returns
 * the level to descend from (p->pick is set for it), or 0 when there is no
 * such leaf. The caller descends, so this frame is off the read chain. */
static uint32_t step_leaf(cairn *fs, struct path *p, int dir)
{
    uint32_t lv = fs->height - 1;
    while (lv > 0) {
        uint8_t *n = cn_slot_data(fs, p->slot[lv - 1]);
        if (dir > 0 ? (uint32_t)p->idx[lv - 1] + 1u < n_count(n) : p->idx[lv - 1] > 0) {
            p->idx[lv - 1] = dir > 0 ? p->idx[lv - 1] + 1 : p->idx[lv - 1] - 1;
            release_below(fs, p, lv);
            p->pick = dir > 0 ? 1 : 2;
            return lv;
        }
        lv--;
    }
    return 0;
}

/* The leaf entry the path points at when its key is `key`, else NULL. */
static uint8_t *leaf_at(cairn *fs, const struct path *p, uint64_t key)
{
    uint32_t leaf = p->n - 1u;
    uint8_t *n = cn_slot_data(fs, p->slot[leaf]);
    if (p->idx[leaf] < n_count(n) && cn_get64(n + HDR + p->off) == key)
        return n + HDR + p->off;
    return NULL;
}

static void copy_out(const uint8_t *e, uint64_t *found, void *val, uint32_t vcap, uint32_t *vlen)
{
    uint32_t len = cn_get16(e + 8);
    if (found)
        *found = cn_get64(e);
    if (vlen)
        *vlen = len;
    if (val)
        memcpy(val, e + 10, len < vcap ? len : vcap);
}

int cn_tree_get(cairn *fs, uint64_t key, void *val, uint32_t vcap, uint32_t *vlen)
{
    struct path p;
    const uint8_t *e;
    int err = descend(fs, &p, key);
    if (err)
        return err;
    e = leaf_at(fs, &p, key);
    if (e)
        copy_out(e, NULL, val, vcap, vlen);
    else
        err = CAIRN_ERR_NOENT;
    unpin(fs, &p);
    return err;
}

/* cn_tree_seek on the leaf it descended to: move to the entry before (le)
 * when key is not there. Returns the direction of the leaf to go on in
 * (-1, 1), or 0 when the entry is in this leaf (or there is none). */
CN_NOINLINE static int seek_in_leaf(cairn *fs, struct path *p, uint64_t key, int le)
{
    uint32_t leaf = p->n - 1u;
    uint8_t *n = cn_slot_data(fs, p->slot[leaf]);
    if (le && !leaf_at(fs, p, key)) {
        if (p->idx[leaf] == 0)
            return -1;
        p->idx[leaf]--; /* the entry before idx */
        p->off = (uint16_t)entry_off(n, p->idx[leaf]);
    } else if (!le && p->idx[leaf] >= n_count(n)) {
        return 1;
    }
    return 0;
}

/* The entry the path points at into h; CAIRN_ERR_NOENT past the leaf's end. */
CN_NOINLINE static int hit_out(cairn *fs, const struct path *p, struct cn_hit *h)
{
    uint32_t leaf = p->n - 1u;
    uint8_t *n = cn_slot_data(fs, p->slot[leaf]);
    if (p->idx[leaf] >= n_count(n))
        return CAIRN_ERR_NOENT;
    copy_out(n + HDR + p->off, &h->key, h->val, h->cap, &h->len);
    return 0;
}

int cn_tree_seek(cairn *fs, struct cn_hit *h, int le)
{
    struct path p;
    uint64_t key = h->key;
    int err = descend(fs, &p, key), dir;
    if (err)
        return err;
    dir = seek_in_leaf(fs, &p, key, le);
    if (dir != 0)
        err = step_leaf(fs, &p, dir) ? descend_from(fs, &p, 0) : CAIRN_ERR_NOENT;
    if (err == 0)
        err = hit_out(fs, &p, h);
    unpin(fs, &p);
    /* A neighbour leaf holding keys outside its parent's range would answer
     * with a key on the wrong side; the callers' loops advance by the key
     * they get, so that would never end. */
    if (err == 0 && (le ? h->key > key : h->key < key))
        return CAIRN_ERR_CORRUPT;
    return err;
}

/* First key of the leaf after the one on path p, or UINT64_MAX at the end:
 * the separator of the next child at the lowest level that has one. */
static uint64_t next_leaf_key(cairn *fs, const struct path *p)
{
    uint32_t lv = p->n - 1;
    while (lv-- > 0) {
        uint8_t *n = cn_slot_data(fs, p->slot[lv]);
        if ((uint32_t)p->idx[lv] + 1 < n_count(n))
            return cn_get64(ient(n, (uint32_t)p->idx[lv] + 1));
    }
    return UINT64_MAX;
}

/* Scan the leaf holding `key`, from key on, for an entry `match` accepts:
 * one descent serves a whole leaf (GC looks for the extents in its victim
 * this way). Returns 0 with the entry in *found, val, *vlen, or 1 with
 * *found = the first key of the following leaf (UINT64_MAX: none). */
int cn_tree_scan_leaf(cairn *fs, uint64_t key, cn_match_fn match, void *arg,
                      uint64_t *found, void *val, uint32_t vcap, uint32_t *vlen)
{
    struct path p;
    uint8_t *n;
    uint32_t i, off;
    int err = descend(fs, &p, key), hit = 0;
    if (err)
        return err;
    n = cn_slot_data(fs, p.slot[p.n - 1]);
    for (i = p.idx[p.n - 1], off = p.off; i < n_count(n) && !hit; i++) {
        const uint8_t *e = n + HDR + off;
        if (match(cn_get64(e), e + 10, cn_get16(e + 8), arg)) {
            copy_out(e, found, val, vcap, vlen);
            hit = 1;
        }
        off += ent_size(e);
    }
    if (!hit)
        *found = next_leaf_key(fs, &p);
    unpin(fs, &p);
    return hit ? 0 : 1;
}

/* Copy-on-write the path top-down so every node on it is a dirty slot that
 * its parent references. */
CN_NOINLINE static void make_dirty(cairn *fs, struct path *p, uint32_t levels)
{
    uint32_t lv;
    for (lv = 0; lv < levels; lv++) {
        uint32_t slot = p->slot[lv];
        if (fs->slots[slot].dirty)
            continue;
        cn_cache_cow(fs, slot);
        if (lv == 0)
            fs->root = CN_DIRTY_REF | slot;
        else
            cn_put32(ient(cn_slot_data(fs, p->slot[lv - 1]), p->idx[lv - 1]) + 8,
                     CN_DIRTY_REF | slot);
    }
}

/* After a change: a lookup pins up to height nodes, so it finds its slots
 * only if that many are evictable. A put's path and splits (up to 2 x
 * height + 1 slots) could leave fewer on a small cache: a lookup then found
 * every slot dirty or pinned (256-byte nodes at height 4, 14 of 16 dirty:
 * NOSPC from the cache, branch wip/small-nodes). The next change's room
 * check would flush anyway; this flushes before the lookups in between. */
static int leave_room(cairn *fs, int err)
{
    if (err || fs->read_only || cn_cache_evictable(fs) > fs->height)
        return err;
    return cn_cache_flush(fs);
}

/* Before a change descends: a slot for each node of the path it may load,
 * and a few for splits (a put counts those once its path is known:
 * slots_for_put). */
static int ensure_room(cairn *fs)
{
    if (cn_cache_evictable(fs) >= fs->height + 3)
        return 0;
    if (fs->read_only)
        return CAIRN_ERR_NOSPC;
    return cn_cache_flush(fs);
}

/* Entry c of the leaf as it would be with the new entry inserted at pos. */
static uint32_t comb_size(const uint8_t *n, uint32_t c, uint32_t pos, uint32_t need,
                          uint32_t *old_off)
{
    uint32_t sz;
    if (c == pos)
        return need;
    sz = ent_size(n + HDR + *old_off);
    *old_off += sz;
    return sz;
}

static void put_entry(uint8_t *dst, uint64_t key, const struct cn_val *v)
{
    cn_put64(dst, key);
    cn_put16(dst + 8, (uint16_t)(v->alen + v->blen));
    if (v->alen)
        memcpy(dst + 10, v->a, v->alen);
    if (v->blen)
        memcpy(dst + 10 + v->alen, v->b, v->blen);
}

CN_NOINLINE static void leaf_insert_at(uint8_t *n, uint32_t off, uint64_t key, const struct cn_val *v)
{
    uint32_t used = n_used(n), need = LEAF_HDR + v->alen + v->blen;
    memmove(n + HDR + off + need, n + HDR + off, used - off);
    put_entry(n + HDR + off, key, v);
    n_set(n, n_count(n) + 1, used + need);
}

/* Bytes the left half of a split keeps when the new entry goes at the end of
 * the tree's last node: sequential inserts land there (a new file's keys
 * are the greatest in the tree, and its extents follow), and halving that
 * node left every node behind it half empty for good (nodes are not merged):
 * 1-page files on 1 MiB of NOR spent ~120 B of tree a file.
 * A tenth stays free, so that a run of inserts into the gap just below the
 * new entry (keys descending) goes to the right half instead of splitting
 * the full left one again and again (the rightmost-leaf fill factor of
 * PostgreSQL's B-tree; docs/DESIGN.md "Node fill"). */
static uint32_t end_split_left(const cairn *fs) { return cap(fs) - cap(fs) / 10u; }

/* Is the node the path holds at level lv the last of its level (the path
 * took the last child at every level above)? Only there are inserts at the
 * end a run: a name's key is its hash, and one that lands last in a node in
 * the middle says nothing of the next (SQLite's quick balance and
 * PostgreSQL's fill factor likewise treat only the rightmost page so). */
static int rightmost(cairn *fs, const struct path *p, uint32_t lv)
{
    uint32_t i;
    for (i = 0; i < lv; i++)
        if (p->slot[i] == NO_SLOT ||
            (uint32_t)p->idx[i] + 1u != n_count(cn_slot_data(fs, p->slot[i])))
            return 0;
    return 1;
}

/* Split a full leaf while inserting; returns the new right node's slot and
 * its first key. The split point balances bytes so both halves fit, or, when
 * the new entry is the last of the tree's last leaf, keeps the left nine
 * tenths full. Returns 1 when the new entry belongs in the left half: the
 * caller inserts it there (leaf_insert_at at p->off), which keeps that call
 * off this frame. */
CN_NOINLINE static int leaf_split(cairn *fs, struct path *p, uint64_t key, const struct cn_val *v,
                      uint32_t *right, uint64_t *sep)
{
    uint32_t leaf = p->n - 1, pos = p->idx[leaf], need = LEAF_HDR + v->alen + v->blen;
    uint8_t *n = cn_slot_data(fs, p->slot[leaf]), *r;
    uint32_t total = n_count(n) + 1, bytes = n_used(n) + need;
    uint32_t c, left = 0, oo = 0, best = 0, best_max = CN_NONE, s, o;
    uint32_t at_end = pos + 1 == total && rightmost(fs, p, leaf);
    int err;
    for (c = 0; c + 1 < total; c++) {
        uint32_t mx;
        left += comb_size(n, c, pos, need, &oo);
        mx = left > bytes - left ? left : bytes - left;
        if (at_end) /* the fullest left half within the fill factor */
            mx = left <= end_split_left(fs) ? cap(fs) - left : CN_NONE - 1u;
        if (left <= cap(fs) && bytes - left <= cap(fs) && mx < best_max) {
            best_max = mx;
            best = c + 1;
        }
    }
    if (best == 0)
        return CAIRN_ERR_CORRUPT; /* cannot happen with entries <= cap / 2 */
    s = best;
    err = cn_cache_new(fs);
    if (err < 0)
        return err;
    *right = (uint32_t)err;
    node_init(fs, *right, 0);
    r = cn_slot_data(fs, *right);
    /* right gets combined entries [s, total) */
    oo = 0;
    o = 0;
    for (c = 0; c < total; c++) {
        uint32_t at = oo, sz = comb_size(n, c, pos, need, &oo);
        if (c < s)
            continue;
        if (c == pos)
            put_entry(r + HDR + o, key, v);
        else
            memcpy(r + HDR + o, n + HDR + at, sz);
        o += sz;
    }
    n_set(r, total - s, o);
    /* left keeps combined [0, s) */
    {
        uint32_t keep = pos < s ? s - 1 : s;
        n_set(n, keep, entry_off(n, keep));
    }
    *sep = cn_get64(r + HDR);
    return pos < s; /* 1: the caller inserts into the left half, at p->off */
}

/* Insert (key, child) at index i of the internal node at level lv, splitting
 * upward as needed; a root split grows the tree by one level. */
CN_NOINLINE static int internal_insert(cairn *fs, struct path *p, uint32_t lv, uint64_t key, uint32_t child)
{
    for (;;) {
        uint32_t slot, i, count, s, total, r;
        uint8_t *n, *rn;
        int err;
        if (lv == CN_NONE) { /* new root above the old one */
            uint32_t nr, old = fs->root;
            err = cn_cache_new(fs);
            if (err < 0)
                return err;
            nr = (uint32_t)err;
            node_init(fs, nr, fs->height);
            n = cn_slot_data(fs, nr);
            cn_put64(ient(n, 0), 0);
            cn_put32(ient(n, 0) + 8, old);
            cn_put64(ient(n, 1), key);
            cn_put32(ient(n, 1) + 8, child);
            n_set(n, 2, 2 * IENT);
            fs->root = CN_DIRTY_REF | nr;
            fs->height++;
            return 0;
        }
        slot = p->slot[lv];
        n = cn_slot_data(fs, slot);
        count = n_count(n);
        i = p->idx[lv] + 1;
        if ((count + 1) * IENT <= cap(fs)) {
            memmove(ient(n, i + 1), ient(n, i), (count - i) * IENT);
            cn_put64(ient(n, i), key);
            cn_put32(ient(n, i) + 8, child);
            n_set(n, count + 1, (count + 1) * IENT);
            return 0;
        }
        /* split: combined entries, right half to a new node (after an
         * insert at the end, the left keeps nine tenths, as a leaf does) */
        total = count + 1;
        s = total / 2;
        if (i == count && rightmost(fs, p, lv))
            s = (uint32_t)((uint64_t)total * end_split_left(fs) / cap(fs));
        if (s < 1u || s >= total)
            s = total / 2;
        err = cn_cache_new(fs);
        if (err < 0)
            return err;
        r = (uint32_t)err;
        node_init(fs, r, fs->slots[slot].level);
        rn = cn_slot_data(fs, r);
        {
            uint32_t c, o = 0;
            for (c = s; c < total; c++, o++) {
                if (c == i) {
                    cn_put64(ient(rn, o), key);
                    cn_put32(ient(rn, o) + 8, child);
                } else {
                    memcpy(ient(rn, o), ient(n, c < i ? c : c - 1), IENT);
                }
            }
            n_set(rn, total - s, (total - s) * IENT);
        }
        if (i < s) {
            uint32_t keep = s - 1;
            memmove(ient(n, i + 1), ient(n, i), (keep - i) * IENT);
            cn_put64(ient(n, i), key);
            cn_put32(ient(n, i) + 8, child);
            n_set(n, s, s * IENT);
        } else {
            n_set(n, s, s * IENT);
        }
        key = cn_get64(ient(rn, 0));
        child = CN_DIRTY_REF | r;
        lv = lv == 0 ? CN_NONE : lv - 1;
    }
}

int cn_tree_put(cairn *fs, uint64_t key, const void *val, uint32_t vlen)
{
    struct cn_val v;
    v.a = val;
    v.alen = vlen;
    v.b = NULL;
    v.blen = 0;
    return cn_tree_put2(fs, &v, key);
}

/* Would a split of the path's leaf go up to the root (every internal node
 * on the path full)? Only that split makes the tree taller: at the greatest
 * height the others still go on (before, every leaf split was refused there,
 * with the root nearly empty: 256-byte nodes reached height 5 with about
 * 1,200 small files on 1 MiB, branch wip/small-nodes). */
static int splits_to_root(cairn *fs, const struct path *p)
{
    uint32_t lv;
    for (lv = 0; lv + 1 < p->n; lv++)
        if ((n_count(cn_slot_data(fs, p->slot[lv])) + 1) * IENT <= cap(fs))
            return 0;
    return 1;
}

/* New slots the put of an entry of `need` bytes takes on the pinned path: one
 * for each level a full path splits, one more for a new root. */
static uint32_t slots_for_put(cairn *fs, const struct path *p, uint64_t key, uint32_t need)
{
    uint32_t leaf = p->n - 1u, lv, slots = 1;
    const uint8_t *n = cn_slot_data(fs, p->slot[leaf]), *old = leaf_at(fs, p, key);
    if (n_used(n) - (old ? ent_size(old) : 0u) + need <= cap(fs))
        return 0;
    for (lv = leaf; lv-- > 0; slots++)
        if ((n_count(cn_slot_data(fs, p->slot[lv])) + 1) * IENT <= cap(fs))
            return slots;
    return slots; /* every level splits: the count includes the new root */
}

/* cn_tree_put2 on the leaf where key belongs (path pinned): replace or insert,
 * splitting upward when the leaf is full. */
CN_NOINLINE static int put_in_leaf(cairn *fs, struct path *p, uint64_t key,
                                   const struct cn_val *v)
{
    uint32_t leaf = p->n - 1u, right;
    uint8_t *n;
    uint64_t sep;
    int err;
    make_dirty(fs, p, p->n);
    n = cn_slot_data(fs, p->slot[leaf]);
    if (leaf_at(fs, p, key)) {
        uint32_t old = ent_size(n + HDR + p->off), used = n_used(n);
        memmove(n + HDR + p->off, n + HDR + p->off + old, used - p->off - old);
        n_set(n, n_count(n) - 1, used - old);
    }
    if (n_used(n) + LEAF_HDR + v->alen + v->blen <= cap(fs)) {
        leaf_insert_at(n, p->off, key, v);
        return 0;
    }
    if (fs->height >= CN_MAX_HEIGHT && splits_to_root(fs, p))
        return CAIRN_ERR_NOSPC;
    err = leaf_split(fs, p, key, v, &right, &sep);
    if (err == 1) {
        leaf_insert_at(n, p->off, key, v);
        err = 0;
    }
    if (!err)
        err = internal_insert(fs, p, leaf == 0 ? CN_NONE : leaf - 1, sep,
                              CN_DIRTY_REF | right);
    return err;
}

int cn_tree_put2(cairn *fs, const struct cn_val *v, uint64_t key)
{
    struct path p;
    int err;
    if (v->alen + v->blen + LEAF_HDR > cap(fs) / 2)
        return CAIRN_ERR_INVAL;
    err = ensure_room(fs);
    if (!err)
        err = descend(fs, &p, key);
    /* A split through every level takes 2 x height + 1 slots in all; the
     * room before the descent covered height 2 only (a split through four
     * levels of 256-byte nodes found every slot dirty or pinned: NOSPC from
     * the cache, branch wip/small-nodes). Short of slots, flush and walk
     * again: the path is then clean and cached, and the rest of the cache,
     * at least 12 - 5 slots, evictable. */
    if (!err && slots_for_put(fs, &p, key, LEAF_HDR + v->alen + v->blen) >
                    cn_cache_evictable(fs)) {
        unpin(fs, &p);
        err = cn_cache_flush(fs);
        if (!err)
            err = descend(fs, &p, key);
    }
    if (err)
        return err;
    err = put_in_leaf(fs, &p, key, v);
    unpin(fs, &p);
    return leave_room(fs, err);
}

/* Remove entry idx from the internal node at level lv, dropping nodes that
 * become empty and collapsing a root left with one child. */
CN_NOINLINE static void internal_remove(cairn *fs, struct path *p, uint32_t lv)
{
    for (;;) {
        uint8_t *n = cn_slot_data(fs, p->slot[lv]);
        uint32_t count = n_count(n), i = p->idx[lv];
        memmove(ient(n, i), ient(n, i + 1), (count - i - 1) * IENT);
        n_set(n, count - 1, (count - 1) * IENT);
        if (count - 1 > 0 || lv == 0)
            break;
        fs->slots[p->slot[lv]].pins = 0;
        cn_cache_drop(fs, p->slot[lv]);
        p->slot[lv] = NO_SLOT;
        lv--;
    }
    while (fs->height > 1) {
        uint32_t rs = fs->root & ~CN_DIRTY_REF;
        uint8_t *rn;
        if (!(fs->root & CN_DIRTY_REF))
            break;
        rn = cn_slot_data(fs, rs);
        if (n_count(rn) != 1)
            break;
        fs->root = cn_get32(ient(rn, 0) + 8);
        fs->slots[rs].pins = 0;
        cn_cache_drop(fs, rs);
        for (lv = 0; lv < p->n; lv++)
            if (p->slot[lv] == rs)
                p->slot[lv] = NO_SLOT;
        fs->height--;
    }
}

/* cn_tree_del on the leaf where key belongs (path pinned). */
CN_NOINLINE static int del_in_leaf(cairn *fs, struct path *p, uint64_t key)
{
    uint32_t leaf = p->n - 1u, sz, used;
    uint8_t *n = cn_slot_data(fs, p->slot[leaf]);
    if (!leaf_at(fs, p, key))
        return CAIRN_ERR_NOENT;
    make_dirty(fs, p, p->n);
    sz = ent_size(n + HDR + p->off);
    used = n_used(n);
    memmove(n + HDR + p->off, n + HDR + p->off + sz, used - p->off - sz);
    n_set(n, n_count(n) - 1, used - sz);
    if (n_count(n) == 0 && leaf > 0) {
        fs->slots[p->slot[leaf]].pins = 0;
        cn_cache_drop(fs, p->slot[leaf]);
        p->slot[leaf] = NO_SLOT;
        internal_remove(fs, p, leaf - 1);
    }
    return 0;
}

/* cn_tree_del once the cache has room (see put_here). */
CN_NOINLINE static int del_here(cairn *fs, uint64_t key)
{
    struct path p;
    int err = descend(fs, &p, key);
    if (err)
        return err;
    err = del_in_leaf(fs, &p, key);
    unpin(fs, &p);
    return err;
}

int cn_tree_del(cairn *fs, uint64_t key)
{
    int err = ensure_room(fs);
    return err ? err : leave_room(fs, del_here(fs, key));
}

int cn_tree_init_empty(cairn *fs)
{
    int err = cn_cache_new(fs);
    uint32_t slot = (uint32_t)err;
    if (err < 0)
        return err;
    node_init(fs, slot, 0);
    fs->root = CN_DIRTY_REF | slot;
    fs->height = 1;
    return 0;
}

/* Keep room in the cache while a walk makes nodes dirty. */
static int walk_room(cairn *fs)
{
    if (cn_cache_evictable(fs) >= fs->height + 3 || fs->read_only)
        return 0;
    return cn_cache_flush(fs);
}

/* Walk step: take child i of the node at level lv (pinned) as the new level
 * lv + 1, not yet visited. */
static int walk_child(cairn *fs, struct path *p, uint32_t lv, uint32_t i)
{
    uint8_t *n = cn_slot_data(fs, p->slot[lv]);
    int err;
    p->idx[lv] = (uint16_t)i;
    release_below(fs, p, lv + 1);
    err = walk_room(fs);
    if (!err)
        err = load(fs, p, lv + 1, cn_get32(ient(n, i) + 8));
    if (!err)
        p->idx[lv + 1] = WALK_FRESH;
    return err;
}

/* ---- what a change would add to the next flush (apply.c record_cost) ---- */

/* Count the nodes of the pinned path once each: a clean node by its page,
 * a dirty one by its slot (dirty slots stay put while nothing is flushed).
 * A dirty node is written by the flush anyway and is counted all the same:
 * a commit or flush before the change may clean it. 1 when the count no
 * longer fits (the caller falls back to the general bound). */
static int cost_path(cairn *fs, struct cn_cost *c, const struct path *p)
{
    uint32_t lv, i;
    for (lv = 0; lv < p->n && lv < CN_MAX_HEIGHT; lv++) {
        const struct cn_slot *s = &fs->slots[p->slot[lv]];
        uint32_t id = s->dirty ? CN_DIRTY_REF | p->slot[lv] : s->addr;
        for (i = 0; i < c->n && c->node[i] != id; i++)
            ;
        if (i < c->n)
            continue;
        if (c->n >= CN_COST_NODES)
            return 1;
        c->node[c->n++] = id;
    }
    return 0;
}

/* The path to `key`, and the nodes a put there of an entry of `grow` bytes
 * (0: no put) would create by splitting (slots_for_put). */
int cn_tree_cost_key(cairn *fs, struct cn_cost *c, uint64_t key, uint32_t grow)
{
    struct path p;
    int err = descend(fs, &p, key);
    if (err)
        return err;
    err = cost_path(fs, c, &p);
    if (!err && grow > 0)
        c->made += slots_for_put(fs, &p, key, grow);
    unpin(fs, &p);
    return err;
}

/* Keys of the leaf the path holds that lie in [lo, hi]; *first: its first. */
static uint32_t keys_within(cairn *fs, const struct path *p, uint64_t lo, uint64_t hi,
                            uint64_t *first)
{
    const uint8_t *n = cn_slot_data(fs, p->slot[p->n - 1]);
    uint32_t i, off = 0, in = 0;
    *first = n_count(n) > 0 ? cn_get64(n + HDR) : 0;
    for (i = 0; i < n_count(n); i++) {
        uint64_t k = cn_get64(n + HDR + off);
        in += k >= lo && k <= hi;
        off += ent_size(n + HDR + off);
    }
    return in;
}

/* The paths to the leaves holding the last `most` keys in [lo, hi], the
 * ones a trim deletes from the top (deletes only: no node is made), at
 * most CN_COST_LEAVES leaves: 1 beyond. *fewer: [lo, hi] holds fewer. The
 * leaf before is found by the path (step_leaf), not by a key below this
 * leaf's first: a separator may lie below a leaf's first key, and such a
 * key led back to the same leaf (a trim then dirtied a leaf the count
 * missed: torture regress nor-w25q128-b4 seed 19, under the I11 check). */
int cn_tree_cost_last(cairn *fs, struct cn_cost *c, uint64_t lo, uint64_t hi, uint32_t most,
                      int *fewer)
{
    struct path p;
    uint32_t leaves;
    int err = descend(fs, &p, hi);
    for (leaves = 0; !err; leaves++) {
        uint64_t first;
        uint32_t in;
        if (leaves == CN_COST_LEAVES) {
            err = 1;
            break;
        }
        in = keys_within(fs, &p, lo, hi, &first);
        err = cost_path(fs, c, &p);
        *fewer = in < most;
        if (err || in >= most || first <= lo || !step_leaf(fs, &p, -1))
            break;
        most -= in;
        err = descend_from(fs, &p, 0);
    }
    unpin(fs, &p);
    return err;
}

/* Does the node in `slot` (one cn_tree_walk visits) hold an entry `match`
 * accepts? 0 for an inner node. Its structure was checked when it was
 * loaded (node_sane), so its entries lie within the node. */
int cn_tree_leaf_holds(cairn *fs, uint32_t slot, cn_match_fn match, void *arg)
{
    const uint8_t *n = cn_slot_data(fs, slot);
    uint32_t i, off = 0;
    if (fs->slots[slot].level != 0)
        return 0;
    for (i = 0; i < n_count(n); i++) {
        const uint8_t *e = n + HDR + off;
        if (match(cn_get64(e), e + 10, cn_get16(e + 8), arg))
            return 1;
        off += ent_size(e);
    }
    return 0;
}

/* Pre-order walk over every node. fn returns 1 to have the node rewritten
 * (copy-on-write, e.g. to move it out of a GC victim), 0 to go on, <0 to stop
 * with that error. idx[lv] is WALK_FRESH until the node at lv is visited, then
 * the child being walked. */
int cn_tree_walk(cairn *fs, cn_node_fn fn, void *arg)
{
    struct path p;
    uint32_t lv = 0, visits = 0;
    /* Every node of a sound tree is visited once, and there are at most as
     * many as fit the volume plus the dirty ones in the cache. A tree read
     * from flash whose nodes share children could take ~84^4 visits. */
    uint32_t most = fs->seg_count * (fs->seg_pages / fs->node_pages) + fs->nslots;
    int err;
    p.n = 0;
    err = load(fs, &p, 0, fs->root);
    p.idx[0] = WALK_FRESH;
    while (!err) {
        uint32_t slot = p.slot[lv], next;
        if (p.idx[lv] == WALK_FRESH) {
            int r;
            if (++visits > most) {
                err = CAIRN_ERR_CORRUPT;
                break;
            }
            r = fn(fs, slot, fs->slots[slot].dirty ? CN_NONE : fs->slots[slot].addr, arg);
            err = r < 0 ? r : 0; /* a rewriting walker began the session itself */
            if (err)
                break;
            if (r == 1)
                make_dirty(fs, &p, lv + 1);
            next = 0;
        } else {
            next = p.idx[lv] + 1;
        }
        if (lv + 1 < fs->height && next < n_count(cn_slot_data(fs, slot))) {
            err = walk_child(fs, &p, lv, next);
            lv++;
            continue;
        }
        if (lv == 0)
            break;
        release_below(fs, &p, lv);
        lv--;
    }
    unpin(fs, &p);
    return err;
}
