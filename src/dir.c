/* Directories: mkdir, remove, rename, stat, listing and custom attributes.
 * Names and the lookup of paths are name.c's. */
#include "cn.h"

int cairn_mkdir(cairn *fs, const char *path)
{
    struct cn_where w;
    int err = cn_fs_ready(fs, 1);
    if (err)
        return err;
    err = cn_lookup(fs, path, &w);
    if (err == 0)
        return CAIRN_ERR_EXIST;
    if (err != CAIRN_ERR_NOENT || w.parent == CN_NONE)
        return err;
    return cn_create(fs, w.parent, w.sub, w.name, w.len, CAIRN_TYPE_DIR, &w.id);
}

/* 1 when dir has no entry: no DIRENT key (a mark stands while its bucket's
 * overflow entries exist) and, checked too, no DIROVF key. */
static int dir_empty(cairn *fs, uint32_t dir)
{
    unsigned kind;
    for (kind = CN_K_DIRENT; kind <= CN_K_DIROVF; kind += CN_K_DIROVF - CN_K_DIRENT) {
        struct cn_hit h;
        int err;
        h.key = cn_key(dir, kind, 0);
        h.val = NULL;
        h.cap = 0;
        err = cn_tree_seek(fs, &h, 0);
        if (err && err != CAIRN_ERR_NOENT)
            return err;
        if (!err && cn_key_id(h.key) == dir && cn_key_kind(h.key) == kind)
            return 0;
    }
    return 1;
}

int cairn_remove(cairn *fs, const char *path)
{
    struct cn_where w;
    uint32_t id, parent, sub;
    uint8_t p[12];
    int err = cn_fs_ready(fs, 1);
    if (err)
        return err;
    err = cn_lookup(fs, path, &w);
    if (!err)
        err = cn_want_dir(&w);
    if (err)
        return err;
    id = w.id;
    parent = w.parent;
    sub = w.sub;
    if (parent == CN_NONE)
        return CAIRN_ERR_INVAL; /* the root */
    if (w.type == CAIRN_TYPE_DIR) {
        err = dir_empty(fs, id);
        if (err < 0)
            return err;
        if (!err)
            return CAIRN_ERR_NOTEMPTY;
    }
    err = cn_settle_delete(fs);
    if (err)
        return err;
    cn_put32(p, parent);
    cn_put32(p + 4, sub);
    cn_put32(p + 8, id);
    err = cn_record_delete(fs, CN_R_REMOVE, p, CN_RL_REMOVE);
    if (err)
        return err; /* not removed: its handles and their data stay */
    cn_files_unlinked(fs, id);
    return cn_finish_orphans(fs, CN_NONE);
}

/* Would moving dir `id` under `dest` put it inside itself? */
static int inside_itself(cairn *fs, uint32_t id, uint32_t dest)
{
    uint32_t steps = 0;
    while (dest != CN_ROOT_ID) {
        int err;
        if (dest == id)
            return 1;
        if (++steps > 4096)
            return CAIRN_ERR_CORRUPT;
        err = cn_inode_get(fs, dest, NULL, &dest, NULL);
        if (err)
            return err;
    }
    return id == CN_ROOT_ID;
}

int cairn_rename(cairn *fs, const char *from, const char *to)
{
    struct cn_where o, t; /* from, to */
    uint32_t replaced = 0;
    uint8_t *p = fs->recbuf;
    int terr, err = cn_fs_ready(fs, 1);
    if (!err && from != NULL && to != NULL) { /* as Linux: both forms before a lookup */
        err = cn_path_ok(from);
        if (!err)
            err = cn_path_ok(to);
    }
    if (err)
        return err;
    /* as Linux: both directories are found before either last name */
    err = cn_lookup(fs, from, &o);
    if (err && !o.last)
        return err;
    terr = cn_lookup(fs, to, &t);
    if (err || (terr && !t.last))
        return err && (!terr || t.last) ? err : terr;
    if (o.parent == CN_NONE)
        return CAIRN_ERR_INVAL;
    err = terr;
    if ((err == 0 || (err == CAIRN_ERR_NOENT && t.parent != CN_NONE)) &&
        o.type != CAIRN_TYPE_DIR && (o.slash || t.slash))
        return CAIRN_ERR_NOTDIR; /* as Linux: a file named with a trailing '/' */
    if (err == 0) {
        if (t.id == o.id)
            return 0;
        if (t.parent == CN_NONE)
            return CAIRN_ERR_INVAL;
        if (t.type == CAIRN_TYPE_DIR && o.type != CAIRN_TYPE_DIR)
            return CAIRN_ERR_ISDIR;
        if (t.type != CAIRN_TYPE_DIR && o.type == CAIRN_TYPE_DIR)
            return CAIRN_ERR_NOTDIR;
        if (t.type == CAIRN_TYPE_DIR) {
            err = dir_empty(fs, t.id);
            if (err < 0)
                return err;
            if (!err)
                return CAIRN_ERR_NOTEMPTY;
        }
        replaced = t.id;
    } else if (err != CAIRN_ERR_NOENT || t.parent == CN_NONE) {
        return err;
    }
    if (o.type == CAIRN_TYPE_DIR) {
        err = inside_itself(fs, o.id, t.parent);
        if (err)
            return err < 0 ? err : CAIRN_ERR_INVAL;
    }
    err = replaced ? cn_settle_delete(fs) : cn_settle(fs, 0);
    if (err)
        return err;
    cn_put32(p, o.parent);
    cn_put32(p + 4, o.sub);
    cn_put32(p + 8, t.parent);
    cn_put32(p + 12, t.sub);
    cn_put32(p + 16, replaced);
    cn_put32(p + 20, o.id);
    p[24] = (uint8_t)t.len;
    memcpy(p + CN_RL_RENAME, t.name, t.len);
    err = replaced ? cn_record_delete(fs, CN_R_RENAME, p, CN_RL_RENAME + t.len)
                   : cn_record(fs, CN_R_RENAME, p, CN_RL_RENAME + t.len);
    if (err || !replaced)
        return err; /* a failed rename leaves the replaced file's handles alone */
    cn_files_unlinked(fs, replaced);
    return cn_finish_orphans(fs, CN_NONE);
}

/* Size of a file as its open object or the tree knows it. */
static int object_info(cairn *fs, uint32_t id, uint8_t type, struct cairn_info *info)
{
    int32_t size = 0;
    int err = 0;
    info->type = type;
    info->id = id;
    if (type == CAIRN_TYPE_FILE && !cn_open_size(fs, id, &size))
        err = cn_inode_get(fs, id, NULL, NULL, &size);
    info->size = type == CAIRN_TYPE_FILE ? size : 0;
    return err;
}

int cairn_stat(cairn *fs, const char *path, struct cairn_info *info)
{
    struct cn_where w;
    int err = cn_fs_ready(fs, 0);
    if (err)
        return err;
    if (info == NULL)
        return CAIRN_ERR_INVAL;
    err = cn_lookup(fs, path, &w);
    if (!err)
        err = cn_want_dir(&w);
    if (err)
        return err;
    memcpy(info->name, w.name, w.len);
    info->name[w.len] = '\0';
    return object_info(fs, w.id, w.type, info);
}

int cairn_opendir(cairn *fs, const char *path)
{
    struct cn_where w;
    int h, err = cn_fs_ready(fs, 0);
    if (err)
        return err;
    err = cn_lookup(fs, path, &w);
    if (err)
        return err;
    if (w.type != CAIRN_TYPE_DIR)
        return CAIRN_ERR_NOTDIR;
    h = cn_handle_new(fs);
    if (h < 0)
        return h;
    fs->handles[h].kind = CN_HND_DIR;
    fs->handles[h].dir_id = w.id;
    fs->handles[h].dir_next = 0;
    return h;
}

static struct cn_handle *dir_handle(cairn *fs, int dd)
{
    if (cn_fs_ready(fs, 0) || dd < 0 || (uint32_t)dd >= fs->max_open ||
        fs->handles[dd].kind != CN_HND_DIR)
        return NULL;
    return &fs->handles[dd];
}

/* The entry after h's position: the directory's DIRENT keys (marks skipped),
 * then its DIROVF keys. dir_next holds the next DIRENT sub, or READDIR_OVF +
 * the next overflow id, or CN_NONE at the end. 1, 0 at the end, or error. */
#define READDIR_OVF (CN_SUB_MASK + 1u)
static int next_entry(cairn *fs, struct cn_handle *h, struct cn_hit *e, uint8_t *v)
{
    uint32_t pass;
    for (pass = 0; pass <= (CN_SUB_MASK >> 4) + 2; pass++) { /* skips a mark per bucket */
        int ovf = h->dir_next >= READDIR_OVF, err;
        unsigned kind = ovf ? CN_K_DIROVF : CN_K_DIRENT;
        if (h->dir_next == CN_NONE || (ovf && h->dir_next - READDIR_OVF > CN_ID_MAX))
            return 0; /* the end (or past the last id there can be) */
        e->key = cn_key(h->dir_id, kind, ovf ? h->dir_next - READDIR_OVF : h->dir_next);
        e->val = v;
        e->cap = 6 + CAIRN_NAME_MAX;
        err = cn_tree_seek(fs, e, 0);
        if (err && err != CAIRN_ERR_NOENT)
            return err;
        if (err || cn_key_id(e->key) != h->dir_id || cn_key_kind(e->key) != kind) {
            h->dir_next = ovf ? CN_NONE : READDIR_OVF; /* this kind is done */
            continue;
        }
        h->dir_next = cn_key_sub(e->key) + 1 + (ovf ? READDIR_OVF : 0);
        if (ovf || (cn_key_sub(e->key) & 15u) != CN_MARK_SLOT)
            return 1;
    }
    return CAIRN_ERR_CORRUPT;
}

int cairn_readdir(cairn *fs, int dd, struct cairn_info *info)
{
    struct cn_handle *h = dir_handle(fs, dd);
    uint8_t *v;
    struct cn_hit e;
    int err;
    if (h == NULL)
        return CAIRN_ERR_BADF;
    if (info == NULL)
        return CAIRN_ERR_INVAL;
    v = fs->scratch;
    err = next_entry(fs, h, &e, v);
    if (err <= 0)
        return err;
    if (e.len < 7 || e.len != 6u + v[5])
        return CAIRN_ERR_CORRUPT;
    memcpy(info->name, v + 6, v[5]);
    info->name[v[5]] = '\0';
    err = object_info(fs, cn_get32(v), v[4], info);
    return err ? err : 1;
}

int cairn_rewinddir(cairn *fs, int dd)
{
    struct cn_handle *h = dir_handle(fs, dd);
    if (h == NULL)
        return CAIRN_ERR_BADF;
    h->dir_next = 0;
    return 0;
}

int cairn_closedir(cairn *fs, int dd)
{
    struct cn_handle *h = dir_handle(fs, dd);
    if (h == NULL)
        return CAIRN_ERR_BADF;
    h->kind = CN_HND_FREE;
    return 0;
}

/* ---- custom attributes ---- */

#ifndef CAIRN_NO_ATTRS

static int attr_target(cairn *fs, const char *path, int write, uint32_t *id)
{
    struct cn_where w;
    int err = cn_fs_ready(fs, write);
    if (!err)
        err = cn_lookup(fs, path, &w);
    if (!err)
        err = cn_want_dir(&w);
    if (!err)
        *id = w.id;
    return err;
}

int cairn_getattr(cairn *fs, const char *path, uint8_t type, void *buf, uint32_t size)
{
    uint32_t id, vlen;
    int err = attr_target(fs, path, 0, &id);
    if (err)
        return err;
    err = cn_tree_get(fs, cn_key(id, CN_K_ATTR, type), buf, buf ? size : 0, &vlen);
    if (err)
        return err == CAIRN_ERR_NOENT ? CAIRN_ERR_NOATTR : err;
    return vlen > CAIRN_ATTR_MAX ? CAIRN_ERR_CORRUPT : (int)vlen;
}

int cairn_setattr(cairn *fs, const char *path, uint8_t type, const void *buf, uint32_t size)
{
    uint32_t id;
    uint8_t *p = fs ? fs->recbuf : NULL;
    int err;
    if (size > CAIRN_ATTR_MAX || (buf == NULL && size > 0))
        return CAIRN_ERR_INVAL;
    err = attr_target(fs, path, 1, &id);
    if (!err)
        err = cn_space_for_records(fs);
    if (err)
        return err;
    cn_put32(p, id);
    p[4] = type;
    p[5] = (uint8_t)size;
    if (size)
        memcpy(p + CN_RL_ATTR, buf, size);
    return cn_record(fs, CN_R_ATTR, p, CN_RL_ATTR + size);
}

int cairn_removeattr(cairn *fs, const char *path, uint8_t type)
{
    uint32_t id, vlen;
    uint8_t p[CN_RL_ATTRDEL];
    int err = attr_target(fs, path, 1, &id);
    if (err)
        return err;
    err = cn_tree_get(fs, cn_key(id, CN_K_ATTR, type), NULL, 0, &vlen);
    if (err)
        return err == CAIRN_ERR_NOENT ? CAIRN_ERR_NOATTR : err;
    err = cn_settle(fs, 0);
    if (err)
        return err;
    cn_put32(p, id);
    p[4] = type;
    return cn_record(fs, CN_R_ATTRDEL, p, CN_RL_ATTRDEL);
}

#else /* volumes written with attributes still mount: records and keys stay valid */
int cairn_getattr(cairn *fs, const char *path, uint8_t type, void *buf, uint32_t size)
{
    (void)fs, (void)path, (void)type, (void)buf, (void)size;
    return CAIRN_ERR_INVAL;
}

int cairn_setattr(cairn *fs, const char *path, uint8_t type, const void *buf, uint32_t size)
{
    (void)fs, (void)path, (void)type, (void)buf, (void)size;
    return CAIRN_ERR_INVAL;
}

int cairn_removeattr(cairn *fs, const char *path, uint8_t type)
{
    (void)fs, (void)path, (void)type;
    return CAIRN_ERR_INVAL;
}
#endif
