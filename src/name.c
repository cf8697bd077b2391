/* Names: a path walked to the object it names, and a new object created
 * under a name. A layer of its own below the objects (file.c, dir.c, ring.c)
 * that all open or create by path, so that they need not call each other.
 *
 * A directory entry is the tree key (parent, DIRENT,
 * hash24(name) << 4 | n): names with the same 24-bit hash take the first free
 * n of 15, so a lookup reads one bucket of keys, never the whole directory.
 * A 16th name of a full bucket goes to the directory's overflow area,
 * (parent, DIROVF, child id), and the bucket's slot 15 counts how many of
 * its names are there: only a lookup that meets that mark scans the area.
 * Names come from outside, so any number may share a hash (cn.h). */
#include "cn.h"

/* What dir_find found: the child, its type and its entry's sub. */
struct cn_found {
    uint32_t child, sub;
    uint8_t type;
};

/* Does the entry value v (vlen bytes) name this name? CORRUPT if malformed. */
static int entry_is(const uint8_t *v, uint32_t vlen, const char *name, uint32_t len)
{
    if (vlen < 7 || vlen != 6u + v[5])
        return CAIRN_ERR_CORRUPT;
    return v[5] == len && memcmp(v + 6, name, len) == 0;
}

/* Scan dir's overflow area for name (only when its bucket carries a mark).
 * Costs the area's leaves: it holds only names of buckets that filled up. */
static int ovf_find(cairn *fs, uint32_t dir, const char *name, uint32_t len, uint32_t hash,
                    struct cn_found *f)
{
    uint64_t k = cn_key(dir, CN_K_DIROVF, 0);
    uint8_t *v = fs->scratch;
    uint32_t steps;
    for (steps = 0; steps <= CN_ID_MAX; steps++) { /* one entry per object at most */
        struct cn_hit h;
        int err;
        h.key = k;
        h.val = v;
        h.cap = 6 + CAIRN_NAME_MAX;
        err = cn_tree_seek(fs, &h, 0);
        if (err)
            return err;
        k = h.key;
        if (cn_key_id(k) != dir || cn_key_kind(k) != CN_K_DIROVF)
            break;
        err = entry_is(v, h.len, name, len);
        if (err < 0)
            return err;
        if (err) {
            f->child = cn_get32(v);
            f->type = v[4];
            f->sub = CN_SUB_OVF | hash;
            return 0;
        }
        k++;
    }
    return CAIRN_ERR_NOENT;
}

/* Find name in dir. With free_sub set, on NOENT it receives the sub a new
 * entry of that name takes: the first free slot of its bucket, else an
 * overflow sub. */
static int dir_find(cairn *fs, uint32_t dir, const char *name, uint32_t len,
                    struct cn_found *f, uint32_t *free_sub)
{
    uint32_t hash = cn_name_hash(name, len), base = hash << 4, used = 0, s;
    uint64_t k = cn_key(dir, CN_K_DIRENT, base);
    uint8_t *v = fs->scratch;
    int marked = 0, err;
    for (;;) { /* at most 16 keys: the bucket */
        struct cn_hit h;
        h.key = k;
        h.val = v;
        h.cap = 6 + CAIRN_NAME_MAX;
        err = cn_tree_seek(fs, &h, 0);
        k = h.key;
        if (err == CAIRN_ERR_NOENT)
            break;
        if (err)
            return err;
        s = cn_key_sub(k);
        if (cn_key_id(k) != dir || cn_key_kind(k) != CN_K_DIRENT || s >= base + 16)
            break;
        if (s - base == CN_MARK_SLOT) {
            if (h.len != 4 || cn_get32(v) == 0)
                return CAIRN_ERR_CORRUPT;
            marked = 1;
            break;
        }
        err = entry_is(v, h.len, name, len);
        if (err < 0)
            return err;
        used |= 1u << (s - base);
        if (err) {
            f->child = cn_get32(v);
            f->type = v[4];
            f->sub = s;
            return 0;
        }
        k++;
    }
    err = marked ? ovf_find(fs, dir, name, len, hash, f) : CAIRN_ERR_NOENT;
    if (err == CAIRN_ERR_NOENT && free_sub) {
        *free_sub = CN_SUB_OVF | hash;
        for (s = 0; s < CN_BUCKET_NAMES; s++)
            if (!(used & (1u << s))) {
                *free_sub = base + s;
                break;
            }
    }
    return err;
}

/* Checks a whole path before it is walked: NUL within CAIRN_PATH_MAX bytes
 * (else NAMETOOLONG, as Linux's PATH_MAX), not empty (NOENT), no "." or ".."
 * component (INVAL: cairn resolves every path from the root and keeps no
 * current directory, so they are refused rather than half supported). */
int cn_path_ok(const char *path)
{
    uint32_t i, comp = 0; /* comp: bytes of the current component so far */
    int dots = 1;         /* the current component is only dots */
    for (i = 0; i < CAIRN_PATH_MAX; i++) {
        char c = path[i];
        if (c == '\0' || c == '/') {
            if (dots && (comp == 1 || comp == 2))
                return CAIRN_ERR_INVAL;
            if (c == '\0')
                return i == 0 ? CAIRN_ERR_NOENT : 0;
            comp = 0;
            dots = 1;
        } else {
            comp++;
            dots = dots && c == '.';
        }
    }
    return CAIRN_ERR_NAMETOOLONG;
}

/* Resolve a path. On success: the object's id and type, and its entry's
 * parent and sub (parent CN_NONE for the root). When only the last component
 * is missing: CAIRN_ERR_NOENT with w->parent the directory to create it in and
 * w->sub the sub a new entry of that name takes (dir_find); otherwise
 * w->parent is CN_NONE. w->name and w->len name the last component; w->slash
 * is 1 when the path ends in '/' after it: the caller then requires a
 * directory (cn_want_dir), as POSIX does. On an error, w->last tells that
 * it is the last component's (its directory was found). Components are
 * checked in order as Linux does: the directory they are looked up in
 * (NOTDIR), their length (NAMETOOLONG), then their presence (NOENT). */
int cn_lookup(cairn *fs, const char *path, struct cn_where *w)
{
    uint32_t cur = CN_ROOT_ID, csub = 0, cparent = CN_NONE, fsub;
    uint8_t ctype = CAIRN_TYPE_DIR;
    struct cn_found f;
    const char *p = path;
    int err;
    w->parent = CN_NONE;
    w->name = "/";
    w->len = 1;
    w->slash = 0;
    w->last = 0;
    if (path == NULL)
        return CAIRN_ERR_INVAL;
    err = cn_path_ok(path);
    if (err)
        return err;
    for (;;) { /* bounded: cn_path_ok found the NUL within CAIRN_PATH_MAX bytes */
        const char *name, *q;
        uint32_t len;
        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        if (ctype != CAIRN_TYPE_DIR)
            return CAIRN_ERR_NOTDIR;
        name = p;
        while (*p != '\0' && *p != '/')
            p++;
        len = (uint32_t)(p - name);
        for (q = p; *q == '/'; q++)
            ;
        w->last = *q == '\0';
        w->slash = *p == '/';
        if (len > CAIRN_NAME_MAX)
            return CAIRN_ERR_NAMETOOLONG;
        w->name = name;
        w->len = len;
        err = dir_find(fs, cur, name, len, &f, &fsub);
        if (err == CAIRN_ERR_NOENT) {
            if (*q == '\0') {
                w->parent = cur;
                w->sub = fsub;
            }
            return err;
        }
        if (err)
            return err;
        if (f.type != CAIRN_TYPE_FILE && f.type != CAIRN_TYPE_DIR)
            return CAIRN_ERR_CORRUPT;
        cparent = cur;
        csub = f.sub;
        cur = f.child;
        ctype = f.type;
    }
    w->id = cur;
    w->type = ctype;
    w->parent = cparent;
    w->sub = csub;
    return 0;
}

/* A path that ends in '/' names a directory: NOTDIR for a file. */
int cn_want_dir(const struct cn_where *w)
{
    return w->slash && w->type != CAIRN_TYPE_DIR ? CAIRN_ERR_NOTDIR : 0;
}

/* Room for a new object: an entry (any name has one now: a bucket slot or
 * the overflow area; CN_NONE is refused), an id, space for its records
 * (space.c cn_space_for_records). */
int cn_new_object_room(cairn *fs, uint32_t sub)
{
    if (sub == CN_NONE || fs->next_id > CN_ID_MAX)
        return CAIRN_ERR_NOSPC;
    return cn_space_for_records(fs);
}

/* Create a file or directory named by path; the caller checked it is absent. */
int cn_create(cairn *fs, uint32_t parent, uint32_t sub, const char *name, uint32_t len,
              uint8_t type, uint32_t *id_out)
{
    uint8_t *p = fs->recbuf;
    int err = cn_new_object_room(fs, sub);
    if (err)
        return err;
    cn_put32(p, parent);
    cn_put32(p + 4, fs->next_id);
    cn_put32(p + 8, sub);
    p[12] = type;
    p[13] = (uint8_t)len;
    memcpy(p + CN_RL_CREATE, name, len);
    *id_out = fs->next_id;
    return cn_record(fs, CN_R_CREATE, p, CN_RL_CREATE + len);
}
