/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca_pure.h - the few definitions the pure engine files need.
 *
 * The pure engine parts (linked-list queue, header build/parse, ICRC,
 * transmit history, key table, address-range registers) make no kernel
 * calls: memory and locking are supplied by their callers.  They include
 * only this header, so the same source builds inside the module and in the
 * userspace unit tests under tests/unit/.
 */
#ifndef SHCA_PURE_H
#define SHCA_PURE_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/compiler.h>
#include <linux/version.h>
#include <asm/byteorder.h>
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#else /* userspace unit tests */

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <endian.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;

#define cpu_to_be16(x)	htobe16(x)
#define cpu_to_be32(x)	htobe32(x)
#define cpu_to_be64(x)	htobe64(x)
#define be16_to_cpu(x)	be16toh(x)
#define be32_to_cpu(x)	be32toh(x)
#define be64_to_cpu(x)	be64toh(x)
#define le64_to_cpu(x)	le64toh(x)

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)
#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static inline u16 get_unaligned_be16(const void *p)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline u32 get_unaligned_be32(const void *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline u64 get_unaligned_be64(const void *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void put_unaligned_be16(u16 v, void *p)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_unaligned_be32(u32 v, void *p)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void put_unaligned_be64(u64 v, void *p)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

#endif /* __KERNEL__ */

#endif /* SHCA_PURE_H */
