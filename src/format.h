/*
 * cairn's on-flash format in numbers: every magic, version byte, structure
 * size and field offset that more than one file reads or writes, defined
 * once. docs/FORMAT.md is the spec these numbers implement (section names in
 * the comments below); a change here is a change of the format.
 *
 * Only constants: the core (cn.h) and the host tool (tools/probe.h, dump.c)
 * both include it. All multi-byte fields are little-endian.
 */
#ifndef CN_FORMAT_H
#define CN_FORMAT_H

#include "cairn.h" /* CAIRN_DISK_VERSION, CAIRN_TYPE_*, CAIRN_NAME_MAX, CAIRN_ATTR_MAX */

/* ---- FORMAT.md "Checkpoint" ---- */
#define CN_CK_MAGIC 0x314E5243u /* "CRN1" as bytes */
#define CN_CK_VERSION CAIRN_DISK_VERSION
/* the oldest checkpoint version a mount reads: 4 differs from 5 only in
 * what a format leaves (5: anchors not erased whole, PARTIAL, a tree and a
 * journal not written yet), so a version 4 volume is a version 5 one */
#define CN_CK_VERSION_OLDEST 4u
#define CN_CK_HDR 144u  /* header bytes; the segment table follows */
#define CN_CK_ENTRY 12u /* bytes of one segment's table entry */
#define CN_CK_HEADS 10u /* heads recorded: meta, cold, data 0..7 */
/* header fields (byte offsets) */
#define CN_CK_O_MAGIC 0u
#define CN_CK_O_VERSION 4u /* u16 */
#define CN_CK_O_FLAGS 6u   /* u8 */
/* u8, outside the CRC: 0xFF as written; a NOR session programs it 0x00 before
 * its first change (FORMAT.md "The session byte") */
#define CN_CK_O_SESSION 7u
#define CN_CK_O_SEQ 8u
#define CN_CK_O_LENGTH 12u
#define CN_CK_O_CRC 16u
#define CN_CK_O_PAGE_SIZE 20u
#define CN_CK_O_SEG_PAGES 24u
#define CN_CK_O_SEG_COUNT 28u
#define CN_CK_O_NODE_SIZE 32u
#define CN_CK_O_ROOT 36u
#define CN_CK_O_HEIGHT 40u
#define CN_CK_O_NEXT_ID 44u
#define CN_CK_O_LOG_SEG 48u
#define CN_CK_O_LOG_OFF 52u
#define CN_CK_O_LOG_SEQ 56u
#define CN_CK_O_CLOCK 60u
#define CN_CK_O_HEADS 64u /* CN_CK_HEADS x (segment u32, next page u32) */
/* header flags */
#define CN_CK_F_CLEAN 1u        /* written by a clean unmount (or format) */
#define CN_CK_F_OTHER_ERASED 2u /* the other anchor was erased after the switch */
/* NOR only, bit 2: PARTIAL, this checkpoint's anchor is in a partial run
 * (format erased only the blocks of its slot 0; the blocks after the one
 * holding this checkpoint's last page are erased only when a later slot
 * needs them). Written by version 5. */
#define CN_CK_F_PARTIAL 4u
/* bits 2..7: NAND anchors of several erase blocks, n: the other anchor's
 * blocks from n on are erased (0: not recorded) */
#define CN_CK_F_OTHER_BLOCKS_SHIFT 2u
#define CN_CK_F_OTHER_BLOCKS_MAX 63u
/* segment table entry fields (byte offsets inside the entry) */
#define CN_CK_E_ERASES 0u /* u32 */
#define CN_CK_E_STAMP 4u  /* u32 */
#define CN_CK_E_LIVE 8u   /* u16 */
#define CN_CK_E_STATE 10u /* u8, enum cn_seg_state */
#define CN_CK_E_FLAGS 11u /* u8, CN_SF_* */
/* A head's segment field holding 0xFFFFFFFF means "no segment". */

/* Segment states (table entry byte 10). */
enum cn_seg_state {
    CN_SEG_FREE = 0,   /* no live data; must be erased before use */
    CN_SEG_ERASED = 1, /* erased and untouched since */
    CN_SEG_OPEN = 2,   /* a head appends into it */
    CN_SEG_FULL = 3,   /* closed; freed by a commit once live == 0 */
    CN_SEG_LOG = 4,    /* holds journal records */
    CN_SEG_ANCHOR = 5, /* checkpoint area */
    CN_SEG_BAD = 6
};
/* Segment flags (table entry byte 11). */
#define CN_SF_NODES 0x01u   /* tree nodes were written into it */
#define CN_SF_SCRUB 0x02u   /* reads needed error correction: move its data soon */
#define CN_SF_FAILING 0x04u /* a program or erase failed: move its data, retire it */
#define CN_SF_STUCK 0x08u   /* holds pages GC could not read: not a victim again */
#define CN_SF_EVICT 0x10u   /* replaces a failing anchor: emptied, not handed out */

/* ---- FORMAT.md "Tree nodes" ---- */
#define CN_NODE_MAGIC 0x4E43u /* "CN" as bytes */
#define CN_NODE_VERSION 1u
#define CN_NODE_HDR 16u
#define CN_NODE_O_MAGIC 0u   /* u16 */
#define CN_NODE_O_VERSION 2u /* u8 */
#define CN_NODE_O_LEVEL 3u   /* u8, 0 = leaf */
#define CN_NODE_O_COUNT 4u   /* u16 */
#define CN_NODE_O_USED 6u    /* u16: bytes of entries */
#define CN_NODE_O_SEQ 8u     /* u32 */
#define CN_NODE_O_CRC 12u    /* u32 */
#define CN_NODE_IENT 12u     /* internal entry: key u64, child page u32 */
#define CN_NODE_LEAF_HDR 10u /* leaf entry before its value: key u64, vlen u16 */

/* ---- FORMAT.md "Keys" ---- key = id << 32 | kind << 28 | sub */
enum cn_kind {
    CN_K_INODE = 0,
    CN_K_ATTR = 1,
    CN_K_DIRENT = 2,
    CN_K_EXTENT = 3,
    CN_K_ORPHAN = 4, /* under id 0: objects whose space is still being freed */
    CN_K_DIROVF = 5  /* (dir, 5, child id): entries whose name bucket is full */
};
#define CN_SUB_MASK 0x0FFFFFFFu
#define CN_ID_MAX 0x0FFFFFFFu
#define CN_ROOT_ID 1u
/* Directory entries: a bucket of 16 DIRENT subs (hash24 << 4 | n), names in
 * n 0..14, the overflow mark in n 15; an overflow entry's sub in records and
 * inodes is CN_SUB_OVF | hash24. */
#define CN_BUCKET_NAMES 15u
#define CN_MARK_SLOT 15u
#define CN_SUB_OVF 0x80000000u

/* ---- FORMAT.md "Values" ---- */
/* inode: type u8, flags u8, 0[2], parent u32, size i32, sub u32; a ring
 * file (flag CN_INODE_F_RING) adds capacity u32 and head u32 */
#define CN_INODE_LEN 16u
#define CN_INODE_F_RING 0x01u
#define CN_RING_INODE_LEN 24u
#define CN_DIRENT_HDR 6u /* dirent value before the name: child id u32, type u8, nlen u8 */
#define CN_EXTENT_VAL 8u /* extent value: phys u32, count u32 */
#define CN_MARK_VAL 4u   /* bucket mark value: count u32 */

/* ---- FORMAT.md "Journal" ---- */
#define CN_REC_HDR 12u  /* type u8, flags u8, len u16, seq u32, crc u32 */
#define CN_REC_MAX 320  /* largest record, header included */
#define CN_REC_O_TYPE 0u
#define CN_REC_O_FLAGS 1u
#define CN_REC_O_LEN 2u
#define CN_REC_O_SEQ 4u
#define CN_REC_O_CRC 8u
enum cn_rec_type {
    CN_R_PAD = 0x01,
    CN_R_NEXT = 0x02,
    CN_R_EXTENT = 0x10,
    CN_R_SIZE = 0x11,
    CN_R_TRIM = 0x12,
    CN_R_MOVE = 0x13,
    CN_R_PUNCH = 0x14,   /* sector trim: file pages become a hole */
    CN_R_RING = 0x15,    /* ring file: pages into slots and the new window */
    CN_R_RINGNEW = 0x16, /* create a ring file */
    CN_R_CREATE = 0x20,
    CN_R_REMOVE = 0x21,
    CN_R_RENAME = 0x22,
    CN_R_ATTR = 0x30,
    CN_R_ATTRDEL = 0x31
};
/* payload lengths (fixed ones), and the fixed part of the others */
#define CN_RL_NEXT 4u
#define CN_RL_EXTENT 20u
#define CN_RL_SIZE 8u
#define CN_RL_TRIM 4u
#define CN_RL_MOVE 20u
#define CN_RL_PUNCH 12u
#define CN_RL_RING 24u
#define CN_RL_RINGNEW 18u /* capacity u32 + a CREATE payload: + name */
#define CN_RL_CREATE 14u  /* + name */
#define CN_RL_REMOVE 12u
#define CN_RL_RENAME 25u  /* + name */
#define CN_RL_ATTR 6u     /* + value */
#define CN_RL_ATTRDEL 5u

/* ---- FORMAT.md "NAND spare tags" ---- */
#define CN_TAG_MAGIC 0x5443u /* "CT" as bytes */
#define CN_TAG_VERSION 1u
#define CN_TAG_LEN 28u
#define CN_TAG_DATA 0u /* kind: a file page written by a data head or GC */
#define CN_TAG_LOG 1u  /* kind: a file page written as the journal's next page */
#define CN_TAG_O_MAGIC 0u   /* u16 */
#define CN_TAG_O_VERSION 2u /* u8 */
#define CN_TAG_O_KIND 3u    /* u8 */
#define CN_TAG_O_ID 4u
#define CN_TAG_O_FPAGE 8u
#define CN_TAG_O_SEQ 12u
#define CN_TAG_O_SIZE 16u
#define CN_TAG_O_DATA_CRC 20u
#define CN_TAG_O_CRC 24u /* CRC-32 of the 24 bytes before it */

/* ---- FORMAT.md "Geometry" ---- */
/* Free segments each kind of writer must leave: user data stops at 4, data
 * moved by GC at 3 (so a flush of the tree always has a segment), tree nodes
 * and the journal at 2, which only a mount's recovery may take. */
#define CN_RESERVE_SEGS 4u
/* The fewest segments a volume may have (all of them in plan(), good ones at
 * format): 4 + the reserve + 3 (two anchors, the log, a head, GC's room). */
#define CN_MIN_SEGS (4u + CN_RESERVE_SEGS + 3u)
#define CN_MAX_HEIGHT 5  /* tree levels, leaves included */

#endif /* CN_FORMAT_H */
