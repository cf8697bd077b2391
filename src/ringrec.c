/* Ring files' records applied to the tree, by the live path and by replay
 * alike (RINGNEW, RING: docs/FORMAT.md), and the checks of a ring's inode
 * they share with ring.c, which writes them (the objects layer above). */
#include "cn.h"

#ifndef CAIRN_NO_RING

/* A capacity a ring may have: whole pages, within the file API's int32. */
int cn_ring_cap_ok(const cairn *fs, uint32_t cap)
{
    return cap > 0 && cap <= (uint32_t)INT32_MAX && cap % fs->page_size == 0;
}

/* The window spans at most C slots, none of them twice. */
int cn_ring_window_ok(const cairn *fs, uint32_t cap, uint32_t head, int32_t size)
{
    uint32_t ps = fs->page_size, end;
    if (head >= cap || size < 0 || (uint32_t)size > cap)
        return 0;
    end = head + (uint32_t)size;
    return (end + ps - 1) / ps - head / ps <= cap / ps;
}

/* Read id's inode value: 1 and its capacity for a ring, 0 for anything else. */
int cn_ring_inode(cairn *fs, uint32_t id, uint8_t *v, uint32_t *cap)
{
    uint32_t vlen;
    int err = cn_tree_get(fs, cn_key(id, CN_K_INODE, 0), v, CN_RING_INODE_LEN, &vlen);
    if (err)
        return err;
    if (vlen < CN_INODE_LEN || !(v[1] & CN_INODE_F_RING))
        return 0; /* not a ring (a malformed inode is cn_inode_get's to report) */
    *cap = cn_get32(v + 16);
    if (!cn_inode_len_ok(v, vlen) || !cn_ring_cap_ok(fs, *cap))
        return CAIRN_ERR_CORRUPT;
    return 1;
}

/* RING: id, slot, phys, count, size, head. Sets the window and, when count
 * is not 0, maps slots [slot, +count) to phys. The window goes in first so
 * that the extent's size update finds it already done. */
CN_NOINLINE static int window_put(cairn *fs, const uint8_t *p)
{
    uint8_t v[CN_RING_INODE_LEN];
    uint32_t id = cn_get32(p), slot = cn_get32(p + 4), count = cn_get32(p + 12), cap = 0;
    int32_t size = (int32_t)cn_get32(p + 16);
    int r = cn_ring_inode(fs, id, v, &cap);
    if (r <= 0)
        return r == 0 || r == CAIRN_ERR_NOENT ? CAIRN_ERR_CORRUPT : r;
    if (!cn_ring_window_ok(fs, cap, cn_get32(p + 20), size) ||
        (count > 0 && (slot >= cap / fs->page_size || count > cap / fs->page_size - slot)))
        return CAIRN_ERR_CORRUPT;
    memcpy(v + 8, p + 16, 4);
    memcpy(v + 20, p + 20, 4);
    return cn_tree_put(fs, cn_key(id, CN_K_INODE, 0), v, CN_RING_INODE_LEN);
}

/* RINGNEW: capacity, then a CREATE payload (a file). */
CN_NOINLINE static int ring_apply_new(cairn *fs, const uint8_t *p, uint32_t len)
{
    uint8_t v[CN_RING_INODE_LEN];
    uint32_t cap = cn_get32(p);
    int err;
    if (!cn_ring_cap_ok(fs, cap) || p[16] != CAIRN_TYPE_FILE)
        return CAIRN_ERR_CORRUPT;
    err = cn_apply_create(fs, p + 4, len - 4);
    if (err)
        return err;
    cn_inode_pack(v, CAIRN_TYPE_FILE, cn_get32(p + 4), 0, cn_get32(p + 12));
    v[1] = CN_INODE_F_RING;
    cn_put32(v + 16, cap);
    cn_put32(v + 20, 0);
    return cn_tree_put(fs, cn_key(cn_get32(p + 8), CN_K_INODE, 0), v, CN_RING_INODE_LEN);
}

int cn_ring_apply(cairn *fs, uint8_t type, const uint8_t *p, uint32_t len)
{
    int err;
    if (type == CN_R_RINGNEW)
        return len >= CN_RL_RINGNEW ? ring_apply_new(fs, p, len) : CAIRN_ERR_CORRUPT;
    if (len != CN_RL_RING)
        return CAIRN_ERR_CORRUPT;
    err = window_put(fs, p);
    if (err || cn_get32(p + 12) == 0)
        return err;
    return cn_apply_extent(fs, cn_get32(p), cn_get32(p + 4), cn_get32(p + 8),
                           cn_get32(p + 12), (int32_t)cn_get32(p + 16));
}

#else
/* (compiled out: a translation unit may not be empty) */
typedef int cn_ringrec_compiled_out;
#endif
