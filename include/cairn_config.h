/*
 * Compile-time switches of cairn. Define them on the compiler's command line
 * (or in a header included before this one) to leave features out.
 */
#ifndef CAIRN_CONFIG_H
#define CAIRN_CONFIG_H

/* Never call malloc: the user always passes cairn_config.mem. */
/* #define CAIRN_NO_MALLOC */

/* Leave out custom attributes (cairn_getattr & co. return CAIRN_ERR_INVAL). */
/* #define CAIRN_NO_ATTRS */

/* Leave out ring files (cairn_ring_create returns CAIRN_ERR_INVAL). */
/* #define CAIRN_NO_RING */

/* Leave out the sector interface (cairn_bd_*). */
/* #define CAIRN_NO_BD */

/* Leave out cairn_check. */
/* #define CAIRN_NO_CHECK */

/* Bytes of struct cairn, for static allocation (checked at compile time). */
#ifndef CAIRN_CONTEXT_SIZE
#define CAIRN_CONTEXT_SIZE 512
#endif

#endif /* CAIRN_CONFIG_H */
