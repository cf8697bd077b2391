/*
 * The power-cut torture test's own oracle (see test_torture.c for the rules
 * it checks). It keeps, for one volume:
 *   - the namespace as a list of snapshots: [0] is the durable one (nothing
 *     older may come back after a cut), every later one the namespace after a
 *     namespace call made since (create, mkdir, remove, rename), the last one
 *     possibly that of a call in flight;
 *   - per file object, its durable content (base) and the steps since then
 *     (writes and size changes, in call order), the last one possibly in
 *     flight, and its current content (what a read must return now).
 * After a power cut, the recovered volume must equal one namespace snapshot,
 * and each file in it one of the states its object passed through from its
 * base on, where a write may also be present up to one of its page
 * boundaries. Objects are named by oracle numbers, never by cairn ids.
 *
 * Ring files (cairn_ring_create) are file objects with a capacity: a write
 * appends to their stream, and the content is the window ring.c keeps (the
 * newest bytes, whole slots given up as the stream comes back to them), so
 * the oracle keeps each state's head (the ring offset of its oldest byte) and
 * a write may be present up to a page boundary of the stream. Rings are never
 * truncated here: an empty window then means a stream never written.
 */
#ifndef TORTURE_ORACLE_H
#define TORTURE_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#define TO_PATH_MAX 40
#define TO_MAX_ENTRIES 48 /* files and directories, the root not counted */

enum to_type { TO_FILE = 1, TO_DIR = 2 };
enum to_step_kind { TO_STEP_WRITE = 1, TO_STEP_SIZE = 2, TO_STEP_RING = 3 };

struct to_step {
    uint8_t kind;
    int32_t off;   /* WRITE: file offset; SIZE: the new size */
    int32_t len;   /* WRITE: bytes */
    uint8_t *data; /* WRITE: the bytes (owned) */
};

struct to_obj {
    uint8_t type;       /* enum to_type; 0 = slot unused */
    uint8_t *base;      /* durable content */
    int32_t base_size;
    uint8_t *cur;       /* content now */
    int32_t cur_size;
    uint8_t *work;      /* scratch: the states a check replays */
    struct to_step *steps; /* since base, in order */
    uint32_t nsteps, cap_steps;
    int32_t ring_cap;   /* rings: capacity in bytes (0: a plain file) */
    int32_t base_head;  /* rings: ring offset of the oldest byte, durable */
    int32_t cur_head;   /* ... and now */
    int32_t match_head; /* ... of the state a check matched */
};

struct to_entry {
    char path[TO_PATH_MAX];
    uint32_t obj;
    uint8_t type;
};

struct to_snap {
    uint32_t n;
    struct to_entry e[TO_MAX_ENTRIES];
};

struct to_oracle {
    int32_t page_size;
    struct to_obj *objs;
    uint32_t nobjs, cap_objs;
    struct to_snap *snaps;
    uint32_t nsnaps, cap_snaps;
};

/* What a mount shows: every entry below the root with its content. */
struct to_seen {
    char path[TO_PATH_MAX];
    uint8_t type;
    int32_t size;
    uint8_t *data; /* files (owned) */
    int32_t ring_cap; /* a ring file: its capacity (cairn_ring_capacity); 0: plain */
};

struct to_view {
    struct to_seen e[TO_MAX_ENTRIES + 8];
    uint32_t n;
    int overflow; /* more entries than fit: always a mismatch */
};

void to_init(struct to_oracle *o, int32_t page_size);
void to_free(struct to_oracle *o);

/* ---- namespace ---- */
/* The newest snapshot (the namespace as calls so far left it). */
const struct to_snap *to_ns(const struct to_oracle *o);
/* Entry of path in the newest snapshot, or NULL. */
const struct to_entry *to_lookup(const struct to_oracle *o, const char *path);
/* A namespace call is about to be made: pushes a copy of the newest snapshot
 * for the caller to change. to_ns_pop takes it back (the call failed
 * cleanly); if power fails during the call it stays (the call may or may
 * not have happened). */
struct to_snap *to_ns_push(struct to_oracle *o);
void to_ns_pop(struct to_oracle *o);
/* Helpers on a snapshot being changed. New objects start empty. */
uint32_t to_new_obj(struct to_oracle *o, uint8_t type);
int to_snap_add(struct to_snap *s, const char *path, uint32_t obj, uint8_t type);
void to_snap_del(struct to_snap *s, const char *path);
/* Renames path `from` (and, for a directory, everything below it) to `to`;
 * an entry at `to` is replaced. */
void to_snap_rename(struct to_snap *s, const char *from, const char *to);

/* A ring of `cap` bytes (a multiple of the page size), empty. */
uint32_t to_new_ring(struct to_oracle *o, int32_t cap);

/* ---- file content ---- */
/* A write (or size change) is about to be made: recorded as the object's
 * newest step (in flight until to_step_done). */
void to_write_begin(struct to_oracle *o, uint32_t obj, int32_t off, const uint8_t *data,
                    int32_t len);
void to_size_begin(struct to_oracle *o, uint32_t obj, int32_t size);
/* A ring write: len bytes appended to the ring's stream. */
void to_ring_begin(struct to_oracle *o, uint32_t obj, const uint8_t *data, int32_t len);
/* The call returned: `applied` bytes of the write took effect (a size change:
 * 1 or 0). With 0 the step is dropped. */
void to_step_done(struct to_oracle *o, uint32_t obj, int32_t applied);

/* ---- durability ---- */
void to_ns_durable(struct to_oracle *o);              /* namespace as it is now */
void to_file_durable(struct to_oracle *o, uint32_t obj); /* content as it is now */
void to_all_durable(struct to_oracle *o);

/* ---- checking ---- */
/* After a cut: is the view one the rules allow? On success the oracle takes
 * the view as its new durable state (a mount that returned makes what it
 * shows durable) and returns 0; else returns -1 and writes what differed to
 * why (of why_len bytes). */
int to_check_recovered(struct to_oracle *o, const struct to_view *v, char *why, size_t why_len);
/* In a session: must equal the newest snapshot and current contents. */
int to_check_live(const struct to_oracle *o, const struct to_view *v, char *why, size_t why_len);
void to_view_free(struct to_view *v);

/* Bytes of file data the newest snapshot holds (page-rounded per file). */
uint64_t to_data_bytes(const struct to_oracle *o, int round_pages);

#endif
