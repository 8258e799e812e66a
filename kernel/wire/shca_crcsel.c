// SPDX-License-Identifier: GPL-2.0
/*
 * shca_crcsel.c - which CRC-32 the data path computes with, chosen at
 * module load by timing every candidate the running CPU has, as the
 * kernel's RAID6 and xor code choose theirs.
 *
 * CRC candidates: the table code (shca_crc_table.c), the kernel's
 * crc32_le() ("lib"), the crypto API's "crc32" transform ("crypto", an
 * accelerated driver where the kernel has one, e.g. crc32-pclmul), and
 * on x86-64 the carry-less multiply folds of shca_crc_clmul.c: "clmul"
 * (PCLMULQDQ) and "vclmul" (AVX-512 VPCLMULQDQ).  Copy-with-CRC
 * candidates: the fused one-pass copies of the table and folding code,
 * and "memcpy", a copy followed by the chosen CRC over the copy.
 *
 * The vector code runs between kernel_fpu_begin() and kernel_fpu_end(),
 * and only where the context allows it (irq_fpu_usable()) and the piece
 * is long enough to pay for saving a task's vector state; otherwise the
 * table code does the piece.  Each candidate is first checked against
 * the table code, then timed over a 4 KiB buffer (one packet of the
 * largest MTU); the fastest is kept.  The module parameters crc and
 * crc_copy force a choice, and read back the one made.
 */
#include <linux/module.h>
#include <linux/crc32.h>
#include <linux/ktime.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <crypto/hash.h>
#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif
#include "shca_crc.h"
#include "shca_crc_clmul.h"
#include "shca_crc_table.h"
#include "shca_crcsel.h"

#define SHCA_CRCSEL_NAME_LEN	16

static char shca_crc_param[SHCA_CRCSEL_NAME_LEN] = "auto";
module_param_string(crc, shca_crc_param, sizeof(shca_crc_param), 0444);
MODULE_PARM_DESC(crc,
		 "CRC-32 of the data path: auto (the fastest at load), table, lib, crypto, clmul, vclmul; reads back the one in use");

static char shca_crc_copy_param[SHCA_CRCSEL_NAME_LEN] = "auto";
module_param_string(crc_copy, shca_crc_copy_param,
		    sizeof(shca_crc_copy_param), 0444);
MODULE_PARM_DESC(crc_copy,
		 "copy with CRC-32: auto, table, clmul, vclmul (one pass) or memcpy (a copy, then the chosen CRC); reads back the one in use");

/* the bytes each candidate is timed over, and for how long */
#define SHCA_CRCSEL_LEN		4096
#define SHCA_CRCSEL_NS		(1 * NSEC_PER_MSEC)
#define SHCA_CRCSEL_ROUNDS	2

/*
 * Below this a piece takes the table code even where vector code is
 * chosen: it runs in about the time that saving a task's vector state
 * for kernel_fpu_begin() takes.
 */
#define SHCA_CRC_FPU_MIN	256
/* longest piece vector code does with preemption off */
#define SHCA_CRC_FPU_CHUNK	(32 * 1024)

/**
 * struct shca_crcsel_cand - one candidate
 * @name: as the module parameters and dmesg spell it
 * @usable: whether this CPU and kernel have it (NULL: always)
 * @crc: its CRC-32, or NULL if it has none (memcpy)
 * @copy: its copy with CRC-32, or NULL if it has none
 * @right: usable here and its results checked against the table code's
 * @mibps: best speed measured, MiB/s
 */
struct shca_crcsel_cand {
	const char *name;
	bool (*usable)(void);
	u32 (*crc)(u32 crc, const void *buf, size_t len);
	u32 (*copy)(u32 crc, void *dst, const void *src, size_t len);
	bool right;
	u64 mibps;
};

static u32 shca_crc_lib(u32 crc, const void *buf, size_t len)
{
	return crc32_le(crc, buf, len);
}

static struct crypto_shash *shca_crc_tfm;

static bool shca_crc_crypto_usable(void)
{
	return shca_crc_tfm;
}

/* the crypto transform's state is the raw CRC, as shca_crc32_le()'s */
static u32 shca_crc_crypto(u32 crc, const void *buf, size_t len)
{
	SHASH_DESC_ON_STACK(desc, shca_crc_tfm);
	u32 st = crc;

	desc->tfm = shca_crc_tfm;
	if (crypto_shash_import(desc, &st) ||
	    crypto_shash_update(desc, buf, len) ||
	    crypto_shash_export(desc, &st))
		return shca_crc32_table(crc, buf, len);
	return st;
}

/* the chosen CRC, for the memcpy candidate */
static u32 (*shca_crc_chosen)(u32 crc, const void *buf, size_t len) =
	shca_crc32_table;

static u32 shca_crc_copy_memcpy(u32 crc, void *dst, const void *src,
				size_t len)
{
	memcpy(dst, src, len);
	return shca_crc_chosen(crc, dst, len);
}

#ifdef SHCA_CRC_CLMUL

static bool shca_crc_clmul_usable(void)
{
	return boot_cpu_has(X86_FEATURE_XMM2) &&
	       boot_cpu_has(X86_FEATURE_PCLMULQDQ);
}

static bool shca_crc_vclmul_usable(void)
{
	return shca_crc_clmul_usable() &&
	       boot_cpu_has(X86_FEATURE_AVX512F) &&
	       boot_cpu_has(X86_FEATURE_VPCLMULQDQ) &&
	       cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM |
				 XFEATURE_MASK_AVX512, NULL);
}

/* can vector code do @len bytes here (kernel_fpu_begin() allowed)? */
static bool shca_crc_fpu_ok(size_t len)
{
	return len >= SHCA_CRC_FPU_MIN && irq_fpu_usable();
}

/* @fn, a vector CRC-32, under kernel_fpu_begin() in chunks */
static u32 shca_crc_fpu(u32 crc, const void *buf, size_t len,
			u32 (*fn)(u32 crc, const void *buf, size_t len))
{
	size_t n;

	if (!shca_crc_fpu_ok(len))
		return shca_crc32_table(crc, buf, len);
	for (; len; len -= n, buf += n) {
		n = min_t(size_t, len, SHCA_CRC_FPU_CHUNK);
		kernel_fpu_begin();
		crc = fn(crc, buf, n);
		kernel_fpu_end();
	}
	return crc;
}

/* @fn, a vector copy with CRC-32, the same way */
static u32 shca_crc_copy_fpu(u32 crc, void *dst, const void *src, size_t len,
			     u32 (*fn)(u32 crc, void *dst, const void *src,
				       size_t len))
{
	size_t n;

	if (!shca_crc_fpu_ok(len))
		return shca_crc32_copy_table(crc, dst, src, len);
	for (; len; len -= n, src += n, dst += n) {
		n = min_t(size_t, len, SHCA_CRC_FPU_CHUNK);
		kernel_fpu_begin();
		crc = fn(crc, dst, src, n);
		kernel_fpu_end();
	}
	return crc;
}

static u32 shca_crc_clmul_k(u32 crc, const void *buf, size_t len)
{
	return shca_crc_fpu(crc, buf, len, shca_crc32_clmul);
}

static u32 shca_crc_copy_clmul_k(u32 crc, void *dst, const void *src,
				 size_t len)
{
	return shca_crc_copy_fpu(crc, dst, src, len, shca_crc32_copy_clmul);
}

static u32 shca_crc_vclmul_k(u32 crc, const void *buf, size_t len)
{
	return shca_crc_fpu(crc, buf, len, shca_crc32_vclmul);
}

static u32 shca_crc_copy_vclmul_k(u32 crc, void *dst, const void *src,
				  size_t len)
{
	return shca_crc_copy_fpu(crc, dst, src, len, shca_crc32_copy_vclmul);
}

#endif /* SHCA_CRC_CLMUL */

static struct shca_crcsel_cand shca_crc_cands[] = {
	{ .name = "table", .crc = shca_crc32_table },
	{ .name = "lib", .crc = shca_crc_lib },
	{ .name = "crypto", .usable = shca_crc_crypto_usable,
	  .crc = shca_crc_crypto },
#ifdef SHCA_CRC_CLMUL
	{ .name = "clmul", .usable = shca_crc_clmul_usable,
	  .crc = shca_crc_clmul_k },
	{ .name = "vclmul", .usable = shca_crc_vclmul_usable,
	  .crc = shca_crc_vclmul_k },
#endif
};

static struct shca_crcsel_cand shca_copy_cands[] = {
	{ .name = "table", .copy = shca_crc32_copy_table },
#ifdef SHCA_CRC_CLMUL
	{ .name = "clmul", .usable = shca_crc_clmul_usable,
	  .copy = shca_crc_copy_clmul_k },
	{ .name = "vclmul", .usable = shca_crc_vclmul_usable,
	  .copy = shca_crc_copy_vclmul_k },
#endif
	{ .name = "memcpy", .copy = shca_crc_copy_memcpy },
};

/**
 * struct shca_crcsel_buf - what the candidates are checked and timed on
 * @src: SHCA_CRCSEL_LEN random bytes
 * @dst: as many, for the copies
 * @want: shca_crc32_table() of @src from 0
 */
struct shca_crcsel_buf {
	u8 *src;
	u8 *dst;
	u32 want;
};

static bool shca_crcsel_usable(const struct shca_crcsel_cand *c)
{
	return !c->usable || c->usable();
}

/* one pass of @c over the buffer */
static u32 shca_crcsel_run(const struct shca_crcsel_cand *c,
			   struct shca_crcsel_buf *b, size_t off, size_t len)
{
	if (c->crc)
		return c->crc(0, b->src + off, len);
	return c->copy(0, b->dst + off, b->src + off, len);
}

/* @c gives the table code's results, and its copies copy */
static bool shca_crcsel_right(const struct shca_crcsel_cand *c,
			      struct shca_crcsel_buf *b)
{
	static const size_t lens[] = { 1, 63, 64, 255, 256, 1000, 4093 };
	unsigned int i;
	size_t len;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		len = lens[i];
		memset(b->dst, 0, SHCA_CRCSEL_LEN);
		if (shca_crcsel_run(c, b, 3, len) !=
		    shca_crc32_table(0, b->src + 3, len))
			return false;
		if (!c->crc && memcmp(b->dst + 3, b->src + 3, len))
			return false;
	}
	return shca_crcsel_run(c, b, 0, SHCA_CRCSEL_LEN) == b->want;
}

/* MiB/s of @c over SHCA_CRCSEL_LEN-byte pieces, timed once */
static u64 shca_crcsel_time(const struct shca_crcsel_cand *c,
			    struct shca_crcsel_buf *b)
{
	u64 start, ns, n = 0;

	preempt_disable();
	start = ktime_get_ns();
	do {
		shca_crcsel_run(c, b, 0, SHCA_CRCSEL_LEN);
		n++;
		ns = ktime_get_ns() - start;
	} while (ns < SHCA_CRCSEL_NS);
	preempt_enable();
	return div64_u64(n * SHCA_CRCSEL_LEN * NSEC_PER_SEC, ns) >> 20;
}

/*
 * Check and time every usable candidate of @cands; the fastest, or the
 * one @force names unless it is "auto".  NULL if the forced one is not
 * there.
 */
static struct shca_crcsel_cand *
shca_crcsel_pick(struct shca_crcsel_cand *cands, unsigned int n,
		 const char *force, struct shca_crcsel_buf *b)
{
	struct shca_crcsel_cand *best = NULL, *c;
	unsigned int i, r;
	u64 v;

	for (c = cands; c < cands + n; c++) {
		c->mibps = 0;
		c->right = false;
		if (!shca_crcsel_usable(c))
			continue;
		c->right = shca_crcsel_right(c, b);
		if (!c->right)
			pr_warn("shca: CRC-32 candidate %s gives wrong results, not used\n",
				c->name);
	}
	/* round-robin, so that a slow moment of the CPU spreads over all */
	for (r = 0; r < SHCA_CRCSEL_ROUNDS; r++)
		for (i = 0; i < n; i++) {
			if (!cands[i].right)
				continue;
			v = shca_crcsel_time(&cands[i], b);
			cands[i].mibps = max(cands[i].mibps, v);
		}
	for (c = cands; c < cands + n; c++) {
		if (!c->right)
			continue;
		if (!strcmp(force, c->name))
			return c;
		if (!best || c->mibps > best->mibps)
			best = c;
	}
	return strcmp(force, "auto") ? NULL : best;
}

/* one dmesg line: @what, each candidate's speed, the choice */
static void shca_crcsel_report(const char *what,
			       const struct shca_crcsel_cand *cands,
			       unsigned int n,
			       const struct shca_crcsel_cand *chosen,
			       const char *force)
{
	char line[160];
	int len = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (cands[i].right)
			len += scnprintf(line + len, sizeof(line) - len,
					 " %s %llu", cands[i].name,
					 cands[i].mibps);
	pr_info("shca: %s, MiB/s:%s; using %s (%s)\n", what, line,
		chosen->name, strcmp(force, "auto") ? "forced" : "fastest");
}

static void shca_crcsel_tfm(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32", 0, 0);

	if (IS_ERR(tfm))
		return;
	if (crypto_shash_descsize(tfm) != sizeof(u32) ||
	    crypto_shash_statesize(tfm) != sizeof(u32)) {
		crypto_free_shash(tfm);
		return;
	}
	shca_crc_tfm = tfm;
}

static int shca_crcsel_choose(struct shca_crcsel_buf *b)
{
	struct shca_crcsel_cand *crc, *copy;
	struct shca_crc_impl impl;

	crc = shca_crcsel_pick(shca_crc_cands, ARRAY_SIZE(shca_crc_cands),
			       shca_crc_param, b);
	if (!crc) {
		pr_err("shca: crc=%s: no such CRC-32 on this CPU and kernel\n",
		       shca_crc_param);
		return -EINVAL;
	}
	shca_crc_chosen = crc->crc;
	copy = shca_crcsel_pick(shca_copy_cands, ARRAY_SIZE(shca_copy_cands),
				shca_crc_copy_param, b);
	if (!copy) {
		pr_err("shca: crc_copy=%s: no such copy on this CPU\n",
		       shca_crc_copy_param);
		return -EINVAL;
	}
	shca_crcsel_report("CRC-32", shca_crc_cands,
			   ARRAY_SIZE(shca_crc_cands), crc, shca_crc_param);
	shca_crcsel_report("copy with CRC-32", shca_copy_cands,
			   ARRAY_SIZE(shca_copy_cands), copy,
			   shca_crc_copy_param);
	if (shca_crc_tfm)
		pr_info("shca: crypto is %s\n",
			crypto_shash_driver_name(shca_crc_tfm));
	impl.name = crc->name;
	impl.crc = crc->crc;
	impl.copy = copy->copy;
	shca_crc_use(&impl);
	strscpy(shca_crc_param, crc->name, sizeof(shca_crc_param));
	strscpy(shca_crc_copy_param, copy->name, sizeof(shca_crc_copy_param));
	return 0;
}

/**
 * shca_crcsel_init() - choose the data path's CRC-32 (module load)
 *
 * Before any device exists: shca_crc_use() may not run under traffic.
 *
 * Return: 0, -ENOMEM, or -EINVAL when a module parameter names a choice
 * this CPU or kernel does not have.
 */
int shca_crcsel_init(void)
{
	struct shca_crcsel_buf b;
	int ret = -ENOMEM;

	shca_crc_table_init();
	b.src = kmalloc(SHCA_CRCSEL_LEN, GFP_KERNEL);
	b.dst = kmalloc(SHCA_CRCSEL_LEN, GFP_KERNEL);
	if (!b.src || !b.dst)
		goto out;
	get_random_bytes(b.src, SHCA_CRCSEL_LEN);
	b.want = shca_crc32_table(0, b.src, SHCA_CRCSEL_LEN);
	shca_crcsel_tfm();
	ret = shca_crcsel_choose(&b);
	if (ret)
		shca_crcsel_exit();
out:
	kfree(b.dst);
	kfree(b.src);
	return ret;
}

/**
 * shca_crcsel_exit() - release what the choice holds (module unload)
 *
 * After the last device: the table code is in use again afterwards.
 */
void shca_crcsel_exit(void)
{
	shca_crc_use(NULL);
	shca_crc_chosen = shca_crc32_table;
	if (shca_crc_tfm)
		crypto_free_shash(shca_crc_tfm);
	shca_crc_tfm = NULL;
}
