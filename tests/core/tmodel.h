/*
 * In-memory model of a cairn volume (paths -> files and directories) and a
 * driver that runs every operation on both the file system and the model.
 *
 * Check mode (record = 0): the driver calls cairn, compares the result with
 * what the model expects (error code, count, bytes read) and applies the
 * operation to the model when it succeeded.
 *
 * Record mode (record = 1, for power-cut tests): only operations the model
 * says will succeed are run. The model applies each one before calling cairn
 * and keeps a history: every namespace state and every content state of each
 * file, with the point up to which each file (and the namespace) was made
 * durable by a completed file sync, close or cairn_sync. When the power goes
 * off during a call, the driver stops (d->stop), and m_verify_cut checks the
 * mounted volume against the history.
 */
#ifndef TMODEL_H
#define TMODEL_H

#include <stdint.h>

#include "tsupport.h"

#define M_MAXFD 64

struct mstate {
    uint8_t *data;
    int32_t size;
    /* wlen > 0: reached from the previous state by writing
     * data[woff .. woff + wlen) at woff (a write call). */
    int32_t woff, wlen;
};

struct mobj {
    uint8_t type; /* CAIRN_TYPE_FILE or CAIRN_TYPE_DIR */
    uint8_t alive;
    int nopen;
    uint8_t *data;
    int32_t size, cap;
    /* history (record mode) */
    struct mstate *hist;
    int nhist, chist;
    int dur;        /* hist index of the last durable state */
    int created_ns; /* namespace history index of its creation */
};

struct mnode {
    char *path;
    int obj;
};

struct mns {
    struct mnode *v; /* sorted by path */
    int n;
};

struct mfd {
    int used;
    int obj;
    int flags;
    int32_t pos;
};

struct model {
    struct mnode *nodes;
    int nnodes, cnodes;
    struct mobj *objs;
    int nobjs, cobjs;
    struct mfd fds[M_MAXFD];
    int64_t bytes; /* sum of live file sizes */
    int record;
    struct mns *ns;
    int nns, cns;
    int ns_lo; /* namespace lower bound after a cut */
};

void m_init(struct model *m);
void m_free(struct model *m);
/* Record mode: the current state becomes the durable baseline. */
void m_rec_start(struct model *m);
int m_find(const struct model *m, const char *path);
int m_children(const struct model *m, const char *dir);
int m_open_handles(const struct model *m, const char *path); /* incl. below */
/* Loads the model from the mounted file system (all entries and contents). */
int m_load(struct model *m, cairn *fs);

/* ---- driver ---- */
struct mdrv {
    cairn *fs;
    csim *sim;
    struct model *m;
    int record;
    int stop;   /* record mode: the power went off (or a call failed) */
    int failed; /* a check failed (the model no longer matches) */
    const char *label;
    uint64_t seed;
    long step;
    const char *cut_in; /* the call during which the power went off */
    /* Check mode: a call that returns CAIRN_ERR_NOSPC (or a write that stops
     * short) is counted in nospc instead of failing the check; the model
     * keeps the bytes a short write reports. The content of a file whose
     * write, sync or close ran out of space is then unknown: the caller
     * removes it (d_remove). A remove refused with NOSPC is counted too (the
     * file stays, as in the model). */
    int nospc_ok;
    long nospc;
    /* cairn's handle limit (cfg.max_open, or its default): with that many
     * handles open (a close refused with NOSPC keeps its handle), an open
     * must return CAIRN_ERR_MFILE. 0: not checked. */
    uint32_t max_open;
};

/* Each returns cairn's result (or, in record mode, the model's error for an
 * operation it skipped). */
int d_open(struct mdrv *d, const char *path, int flags);
int32_t d_write(struct mdrv *d, int fd, const void *buf, int32_t len);
int32_t d_read(struct mdrv *d, int fd, int32_t len);
int32_t d_seek(struct mdrv *d, int fd, int32_t off, int whence);
int d_truncate(struct mdrv *d, int fd, int32_t size);
int d_fsync(struct mdrv *d, int fd);
int d_close(struct mdrv *d, int fd);
int d_sync(struct mdrv *d);
int d_mkdir(struct mdrv *d, const char *path);
int d_remove(struct mdrv *d, const char *path);
int d_rename(struct mdrv *d, const char *from, const char *to);
void d_close_all(struct mdrv *d);
void d_close_unlinked(struct mdrv *d);
/* Compares the whole volume with the model (stat, readdir, contents, open
 * handles). Returns 0 when everything matched. */
int d_verify(struct mdrv *d);

/* After a power cut and a successful mount: checks the volume against the
 * record-mode history (invariant 2). Returns 0 when it is consistent. */
int m_verify_cut(struct model *m, cairn *fs, const char *label);
/* Set: m_verify_cut only returns its verdict (for the oracle's self-test). */
extern int m_verify_quiet;
/* How often a file matched only a state inside a completed write call (the
 * write was made durable page by page before it returned): informational. */
long m_mid_write_count(void);

/* ---- random operations (test_model, random power cuts) ---- */
struct rop {
    int32_t page;      /* the medium's page size */
    int32_t big;       /* largest single write */
    int64_t max_bytes; /* keep the sum of file sizes below this */
    int max_fds;       /* file handles kept open at most */
    int one_handle;    /* at most one handle per file (record mode) */
};
/* Runs one random operation through the driver. Returns its name. */
const char *d_random_op(struct mdrv *d, uint64_t *rng, const struct rop *r);

#endif
