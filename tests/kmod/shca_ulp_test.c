// SPDX-License-Identifier: GPL-2.0
/*
 * shca_ulp_test - use two RDMA devices the way kernel ULPs (nvme-rdma,
 * iSER, NFS/RDMA) do: fast registration (FRWR), local and remote
 * invalidation and the errors around them, every byte and every
 * completion checked.
 *
 * Loaded only by tests/selftests/kernel_ulp.sh.  Module init finds the
 * two devices by name (dev_a, dev_b; RoCEv2 GID indexes gid_a, gid_b),
 * connects RC QPs between them with ib_modify_qp() as a ULP does once
 * rdma_cm has resolved the route, runs its cases, releases every object
 * it created and returns 0 whether or not a case failed.  Each case is
 * one TAP line ("ok N - ..." or "not ok N - ...", diagnostics as "# ...")
 * printed with pr_info() and kept in debugfs, shca_ulp_test/results,
 * until the module is removed.  A failure to set up makes init fail.
 *
 * Device A owns the memory under test, a fast-registration MR over pages
 * from alloc_pages(); device B is the peer that reaches it with RDMA
 * WRITE, RDMA READ and SEND_WITH_INV from its own buffer (also an FRMR,
 * used through its lkey).  Two QP pairs: pair 1 in PD A1 / PD B, pair 2
 * in a second PD of device A (A2) and PD B.
 *
 * With race=1 only the race cases run: LOCAL_INV posted, on the same QP or
 * on another QP of the PD (pair 2 is then in PD A1 too), while the peer's
 * 1 MiB RDMA WRITE or READ is on the wire, at delays spread over the
 * transfer; not one byte may move through the MR once the LOCAL_INV has
 * completed.
 *
 * The devices must be virtual-DMA devices (shca, rdma_rxe): the CPU reads
 * and writes the registered pages without DMA syncs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ktime.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/net_namespace.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *dev_a;
module_param(dev_a, charp, 0444);
MODULE_PARM_DESC(dev_a, "RDMA device owning the memory under test");

static char *dev_b;
module_param(dev_b, charp, 0444);
MODULE_PARM_DESC(dev_b, "RDMA device of the peer");

static uint gid_a;
module_param(gid_a, uint, 0444);
MODULE_PARM_DESC(gid_a, "RoCEv2 GID index of dev_a (port 1)");

static uint gid_b;
module_param(gid_b, uint, 0444);
MODULE_PARM_DESC(gid_b, "RoCEv2 GID index of dev_b (port 1)");

static bool race;
module_param(race, bool, 0444);
MODULE_PARM_DESC(race,
		 "Run the LOCAL_INV race cases instead of the functional ones");

static uint race_tries = 20;
module_param(race_tries, uint, 0444);
MODULE_PARM_DESC(race_tries,
		 "Tries of each race case per invalidating QP (default 20)");

static uint cycles = 300;
module_param(cycles, uint, 0444);
MODULE_PARM_DESC(cycles,
		 "REG_MR/invalidate cycles of the cycle case (default 300)");

#define SHCA_ULP_PORT		1
#define SHCA_ULP_CQE		256
#define SHCA_ULP_SEND_WR	32
#define SHCA_ULP_RECV_WR	16
#define SHCA_ULP_RD_ATOMIC	16
#define SHCA_ULP_WAIT_MS	10000
#define SHCA_ULP_FUNC_PAGES	24	/* the functional cases' MR: 96 KiB */
#define SHCA_ULP_BIG_PAGES	256	/* 1 MiB */
#define SHCA_ULP_TB2_PAGES	2
#define SHCA_ULP_GUARD		256
#define SHCA_ULP_LBUF		8192
#define SHCA_ULP_OUT_SIZE	SZ_64K
#define SHCA_ULP_DIAG_MAX	12
#define SHCA_ULP_SETTLE_MS	50
#define SHCA_ULP_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_WRITE)
/*
 * Receive completion flags about addressing, which a device may set on an
 * RC receive as well (rdma_rxe sets the first two): not checked.
 */
#define SHCA_ULP_WC_ADDR	(IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE | \
				 IB_WC_WITH_SMAC | IB_WC_WITH_VLAN)

/* one RDMA device and the GID its QPs use */
struct shca_ulp_host {
	struct ib_device *dev;
	const struct ib_gid_attr *gattr;
	enum ib_mtu mtu;
};

/* one end of a connection: PD, CQs, RC QP */
struct shca_ulp_end {
	struct shca_ulp_host *host;
	struct ib_pd *pd;
	bool own_pd;
	struct ib_cq *scq;
	struct ib_cq *rcq;
	struct ib_qp *qp;
	u8 dmac[ETH_ALEN];	/* the peer's Ethernet address */
};

struct shca_ulp_pair {
	struct shca_ulp_end a;
	struct shca_ulp_end b;
};

/**
 * struct shca_ulp_buf - pages from alloc_pages() behind a fast-registration
 *	MR
 * @dev: the device the pages are DMA-mapped for
 * @sgl: one entry per allocation, of 1, 2 or 4 pages
 * @nents: entries in @sgl
 * @npages: pages in all
 * @len: bytes in all
 * @mapped: ib_dma_map_sg() succeeded
 * @mr: the FRMR (IB_MR_TYPE_MEM_REG, @npages pages)
 * @valid: a registration is in effect (as far as the test knows)
 * @key: its key
 * @iova: its first address
 * @mr_len: its length
 * @off: the byte of the buffer at @iova
 */
struct shca_ulp_buf {
	struct ib_device *dev;
	struct scatterlist *sgl;
	unsigned int nents;
	unsigned int npages;
	size_t len;
	bool mapped;
	struct ib_mr *mr;
	bool valid;
	u32 key;
	u64 iova;
	u64 mr_len;
	size_t off;
};

/* a small kmalloc'd buffer used through its PD's local DMA lkey */
struct shca_ulp_lbuf {
	struct ib_device *dev;
	u8 *va;
	u64 dma;
	u32 lkey;
};

struct shca_ulp_test {
	struct shca_ulp_host ha;
	struct shca_ulp_host hb;
	struct shca_ulp_pair p1;
	struct shca_ulp_pair p2;
	struct shca_ulp_buf tb;		/* A: the MR under test (PD A1) */
	struct shca_ulp_buf tb2;	/* A: an MR of PD A2 */
	struct shca_ulp_buf lb;		/* B: WRITE sources, READ sinks */
	struct shca_ulp_lbuf ra;	/* A: receives */
	struct shca_ulp_lbuf sa;	/* A: sends */
	struct shca_ulp_lbuf rb;	/* B: receives */
	u64 wr_id;
	u32 epoch;
	unsigned int ncase;
	unsigned int nfail;
	bool failed;
	unsigned int ndiag;
};

/* ---- results ------------------------------------------------------- */

static char *shca_ulp_out;
static size_t shca_ulp_out_len;
static struct dentry *shca_ulp_dir;

/* Print a result line and keep it for debugfs. */
static __printf(1, 2) void shca_ulp_say(const char *fmt, ...)
{
	char line[400];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = vscnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	pr_info("%s\n", line);
	if (shca_ulp_out && shca_ulp_out_len + n + 1 < SHCA_ULP_OUT_SIZE) {
		memcpy(shca_ulp_out + shca_ulp_out_len, line, n);
		shca_ulp_out_len += n;
		shca_ulp_out[shca_ulp_out_len++] = '\n';
	}
}

/* A diagnostic line of the current case ("# ..."), at most a dozen. */
static __printf(2, 3) void shca_ulp_diag(struct shca_ulp_test *t,
					 const char *fmt, ...)
{
	char line[384];
	va_list ap;

	if (t->ndiag++ >= SHCA_ULP_DIAG_MAX)
		return;
	va_start(ap, fmt);
	vscnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	shca_ulp_say("# %s", line);
}

#define shca_ulp_fail(t, fmt, ...)				\
	do {							\
		(t)->failed = true;				\
		shca_ulp_diag(t, fmt, ##__VA_ARGS__);		\
	} while (0)

static ssize_t shca_ulp_results_read(struct file *file, char __user *buf,
				     size_t count, loff_t *ppos)
{
	return simple_read_from_buffer(buf, count, ppos, shca_ulp_out,
				       shca_ulp_out_len);
}

static const struct file_operations shca_ulp_results_fops = {
	.owner = THIS_MODULE,
	.read = shca_ulp_results_read,
	.llseek = default_llseek,
};

/* ---- data patterns --------------------------------------------------- */

/**
 * struct shca_ulp_pat - a byte pattern
 * @seed: selects the pattern
 * @x: XORed into every byte (x 0xff gives a pattern differing from the
 *	x 0 one in every byte)
 * @poff: pattern offset of the first byte of the range it is used on
 *
 * Byte i of a range is shca_ulp_pat_byte(seed, poff + i) ^ x: not
 * periodic, so data landing at a wrong offset shows.
 */
struct shca_ulp_pat {
	u32 seed;
	u8 x;
	u64 poff;
};

/*
 * A seed with this bit gives bytes below 0x80 (so does x below 0x80 on
 * top): memset(0xff) then changes every byte, at memset's speed.
 */
#define SHCA_ULP_SEED7		BIT(31)
#define SHCA_ULP_SPOILT		0xff

static inline u8 shca_ulp_pat_byte(u32 seed, u64 off)
{
	u32 v = (u32)(off >> 2) * 0x9e3779b1U ^ seed * 0x85ebca77U;
	u8 c;

	v ^= v >> 15;
	v *= 0x2c1b3c6dU;
	v ^= v >> 12;
	c = v >> ((off & 3) * 8);
	return seed & SHCA_ULP_SEED7 ? c & 0x7f : c;
}

enum shca_ulp_op {
	SHCA_ULP_FILL,		/* write the pattern */
	SHCA_ULP_DIFF,		/* count bytes that differ from it */
	SHCA_ULP_SPOILED,	/* count bytes equal to SHCA_ULP_SPOILT */
	SHCA_ULP_SNAP,		/* copy out to a linear buffer */
	SHCA_ULP_CMP,		/* count bytes differing from a linear buffer */
	SHCA_ULP_SPOIL,		/* set every byte to SHCA_ULP_SPOILT */
};

/**
 * shca_ulp_buf_op - apply an operation to bytes [@off, @off + @len) of @b
 * @b: buffer
 * @off: first byte
 * @len: bytes
 * @op: operation
 * @pat: the pattern (FILL, DIFF), else NULL
 * @lin: the linear buffer of SNAP and CMP (its byte 0 is byte @off)
 * @first: if not NULL, receives the offset in @b of the first byte counted
 *
 * SNAP, CMP (where nothing differs) and SPOIL go a piece at a time with
 * memcpy(), memcmp() and memset(): the race cases need them fast.
 *
 * Return: bytes counted (DIFF, SPOILED, CMP), else 0.
 */
static size_t shca_ulp_buf_op(struct shca_ulp_buf *b, size_t off, size_t len,
			      enum shca_ulp_op op,
			      const struct shca_ulp_pat *pat, u8 *lin,
			      size_t *first)
{
	size_t count = 0, pos = 0, start = off, i, n;
	struct scatterlist *sg;
	unsigned int e;
	bool hit;
	u8 *p;

	if (first)
		*first = 0;
	for_each_sg(b->sgl, sg, b->nents, e) {
		if (!len)
			break;
		if (off >= sg->length) {
			off -= sg->length;
			continue;
		}
		p = (u8 *)sg_virt(sg) + off;
		n = min_t(size_t, sg->length - off, len);
		off = 0;
		len -= n;
		if (op == SHCA_ULP_SNAP || op == SHCA_ULP_SPOIL ||
		    (op == SHCA_ULP_CMP && !memcmp(p, lin + pos, n))) {
			if (op == SHCA_ULP_SNAP)
				memcpy(lin + pos, p, n);
			else if (op == SHCA_ULP_SPOIL)
				memset(p, SHCA_ULP_SPOILT, n);
			pos += n;
			continue;
		}
		for (i = 0; i < n; i++, pos++) {
			u8 want = 0;

			if (pat)
				want = shca_ulp_pat_byte(pat->seed,
							 pat->poff + pos) ^
				       pat->x;
			hit = false;
			switch (op) {
			case SHCA_ULP_FILL:
				p[i] = want;
				break;
			case SHCA_ULP_DIFF:
				hit = p[i] != want;
				break;
			case SHCA_ULP_SPOILED:
				hit = p[i] == SHCA_ULP_SPOILT;
				break;
			case SHCA_ULP_CMP:
				hit = p[i] != lin[pos];
				break;
			default:
				break;
			}
			if (hit && !count++ && first)
				*first = start + pos;
		}
	}
	return count;
}

static void shca_ulp_fill(struct shca_ulp_buf *b, size_t off, size_t len,
			  u32 seed, u8 x, u64 poff)
{
	struct shca_ulp_pat pat = { .seed = seed, .x = x, .poff = poff };

	shca_ulp_buf_op(b, off, len, SHCA_ULP_FILL, &pat, NULL, NULL);
}

/* Bytes of [@off, @off + @len) of @b not holding the pattern. */
static size_t shca_ulp_diff(struct shca_ulp_buf *b, size_t off, size_t len,
			    u32 seed, u8 x, u64 poff, size_t *first)
{
	struct shca_ulp_pat pat = { .seed = seed, .x = x, .poff = poff };

	return shca_ulp_buf_op(b, off, len, SHCA_ULP_DIFF, &pat, NULL, first);
}

/* Bytes of the linear buffer @lin not holding pattern @seed (x 0). */
static size_t shca_ulp_lin_diff(const u8 *lin, size_t len, u32 seed)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += lin[i] != shca_ulp_pat_byte(seed, i);
	return n;
}

/* Check a range against a pattern; one diagnostic when it does not hold. */
static bool shca_ulp_check(struct shca_ulp_test *t, const char *what,
			   struct shca_ulp_buf *b, size_t off, size_t len,
			   u32 seed, u8 x, u64 poff)
{
	size_t n, first;

	if (!len)
		return true;
	n = shca_ulp_diff(b, off, len, seed, x, poff, &first);
	if (!n)
		return true;
	shca_ulp_fail(t, "%s: %zu of %zu bytes wrong, the first at offset %zu",
		      what, n, len, first);
	return false;
}

/* ---- buffers ----------------------------------------------------------- */

static void shca_ulp_buf_free(struct shca_ulp_buf *b)
{
	struct scatterlist *sg;
	unsigned int i;

	if (b->mr && ib_dereg_mr(b->mr))
		pr_err("ib_dereg_mr failed\n");
	b->mr = NULL;
	if (b->mapped)
		ib_dma_unmap_sg(b->dev, b->sgl, b->nents, DMA_BIDIRECTIONAL);
	b->mapped = false;
	if (b->sgl) {
		for_each_sg(b->sgl, sg, b->nents, i)
			if (sg_page(sg))
				__free_pages(sg_page(sg),
					     get_order(sg->length));
	}
	kfree(b->sgl);
	b->sgl = NULL;
}

/**
 * shca_ulp_buf_alloc - allocate and DMA-map a buffer and its FRMR
 * @b: the buffer (zeroed)
 * @pd: the PD of the MR
 * @npages: size in pages
 *
 * The pages come from alloc_pages() in allocations of 2, 1 and 4 pages in
 * turn, one scatterlist entry each, so that a registration spans entries
 * of different sizes.
 *
 * Return: 0 or a negative errno (@b then holds what to free).
 */
static int shca_ulp_buf_alloc(struct shca_ulp_buf *b, struct ib_pd *pd,
			      unsigned int npages)
{
	static const unsigned int orders[] = { 1, 0, 2 };
	unsigned int left, n, i, o;
	struct page *page;
	int ret;

	b->dev = pd->device;
	for (left = npages, n = 0; left; n++) {
		for (o = orders[n % ARRAY_SIZE(orders)]; (1U << o) > left; o--)
			;
		left -= 1U << o;
	}
	b->sgl = kcalloc(n, sizeof(*b->sgl), GFP_KERNEL);
	if (!b->sgl)
		return -ENOMEM;
	sg_init_table(b->sgl, n);
	b->nents = n;
	for (left = npages, i = 0; i < n; i++) {
		for (o = orders[i % ARRAY_SIZE(orders)]; (1U << o) > left; o--)
			;
		page = alloc_pages(GFP_KERNEL, o);
		if (!page)
			return -ENOMEM;
		sg_set_page(&b->sgl[i], page, PAGE_SIZE << o, 0);
		left -= 1U << o;
	}
	b->npages = npages;
	b->len = (size_t)npages * PAGE_SIZE;
	ret = ib_dma_map_sg(b->dev, b->sgl, b->nents, DMA_BIDIRECTIONAL);
	if (ret != b->nents)
		return -ENOMEM;
	b->mapped = true;
	b->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(b->mr)) {
		ret = PTR_ERR(b->mr);
		b->mr = NULL;
		return ret;
	}
	return 0;
}

static void shca_ulp_lbuf_free(struct shca_ulp_lbuf *l)
{
	if (l->va && !ib_dma_mapping_error(l->dev, l->dma))
		ib_dma_unmap_single(l->dev, l->dma, SHCA_ULP_LBUF,
				    DMA_BIDIRECTIONAL);
	kfree(l->va);
	l->va = NULL;
}

static int shca_ulp_lbuf_alloc(struct shca_ulp_lbuf *l, struct ib_pd *pd)
{
	l->dev = pd->device;
	l->lkey = pd->local_dma_lkey;
	l->va = kzalloc(SHCA_ULP_LBUF, GFP_KERNEL);
	if (!l->va)
		return -ENOMEM;
	l->dma = ib_dma_map_single(l->dev, l->va, SHCA_ULP_LBUF,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(l->dev, l->dma))
		return -ENOMEM;
	return 0;
}

/* The remote address of byte @boff of @b's registration. */
static u64 shca_ulp_raddr(const struct shca_ulp_buf *b, size_t boff)
{
	return b->iova + boff - b->off;
}

/* ---- completions --------------------------------------------------- */

/*
 * One completion from @cq within @ms; between polls sleep, or with @spin
 * only yield (the race cases act on a completion the moment it is there).
 */
static int shca_ulp_poll(struct ib_cq *cq, struct ib_wc *wc, unsigned int ms,
			 bool spin)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? n : 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		if (spin) {
			cpu_relax();
			cond_resched();
		} else {
			usleep_range(20, 50);
		}
	}
}

static const char *shca_ulp_st(enum ib_wc_status st)
{
	return ib_wc_status_msg(st);
}

/**
 * shca_ulp_check_wc - check a completion in every field the test knows
 * @t: test
 * @what: what it completes (diagnostics)
 * @wc: the completion
 * @qp: the QP it must name
 * @wr_id: its work request id
 * @status: expected status
 * @opcode: expected opcode
 * @flags: expected wc_flags, or -1 not to check them
 *
 * An error completion is valid in wr_id, status and QP only (IBTA; rdma_rxe
 * reports opcode 0 for every failed WR): @opcode and @flags are checked on
 * successful completions, receive completions' flags apart from
 * SHCA_ULP_WC_ADDR.
 *
 * Return: true when everything matched.
 */
static bool shca_ulp_check_wc(struct shca_ulp_test *t, const char *what,
			      const struct ib_wc *wc, struct ib_qp *qp,
			      u64 wr_id, enum ib_wc_status status,
			      enum ib_wc_opcode opcode, int flags)
{
	int got = wc->wc_flags;

	if (opcode & IB_WC_RECV)
		got &= ~SHCA_ULP_WC_ADDR;
	if (wc->wr_id == wr_id && wc->status == status && wc->qp == qp &&
	    (status != IB_WC_SUCCESS ||
	     (wc->opcode == opcode && (flags < 0 || got == flags))))
		return true;
	shca_ulp_fail(t, "%s: completion wr_id %llu status %s opcode %d flags %#x qp %u; expected wr_id %llu status %s opcode %d flags %#x qp %u",
		      what, wc->wr_id, shca_ulp_st(wc->status), wc->opcode,
		      wc->wc_flags, wc->qp ? wc->qp->qp_num : 0, wr_id,
		      shca_ulp_st(status), opcode, flags, qp->qp_num);
	return false;
}

/* Wait for the next completion of @cq and check it (shca_ulp_check_wc). */
static bool shca_ulp_expect(struct shca_ulp_test *t, const char *what,
			    struct ib_cq *cq, struct ib_qp *qp, u64 wr_id,
			    enum ib_wc_status status,
			    enum ib_wc_opcode opcode, int flags,
			    struct ib_wc *out)
{
	struct ib_wc wc;

	if (shca_ulp_poll(cq, &wc, SHCA_ULP_WAIT_MS, false)) {
		shca_ulp_fail(t, "%s: no completion within %u ms", what,
			      SHCA_ULP_WAIT_MS);
		return false;
	}
	if (out)
		*out = wc;
	return shca_ulp_check_wc(t, what, &wc, qp, wr_id, status, opcode,
				 flags);
}

/* No completion is waiting on @cq. */
static bool shca_ulp_quiet(struct shca_ulp_test *t, const char *what,
			   struct ib_cq *cq)
{
	struct ib_wc wc;

	if (ib_poll_cq(cq, 1, &wc) <= 0)
		return true;
	shca_ulp_fail(t, "%s: unexpected completion wr_id %llu status %s opcode %d",
		      what, wc.wr_id, shca_ulp_st(wc.status), wc.opcode);
	return false;
}

/* Throw away whatever completions @cq holds. */
static unsigned int shca_ulp_drain_cq(struct ib_cq *cq)
{
	struct ib_wc wc[8];
	unsigned int total = 0;
	int n;

	while ((n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc)) > 0)
		total += n;
	return total;
}

/* ---- connection ------------------------------------------------------ */

struct shca_ulp_resolve {
	struct completion done;
	int status;
};

static void shca_ulp_resolved(int status, struct sockaddr *src,
			      struct rdma_dev_addr *addr, void *context)
{
	struct shca_ulp_resolve *r = context;

	r->status = status;
	complete(&r->done);
}

/**
 * shca_ulp_resolve_mac - resolve the Ethernet address of a peer
 * @h: the sending host (its GID's netdev and namespace route the lookup)
 * @dgid: the peer's GID
 * @mac: receives the address
 *
 * The core leaves a kernel QP's destination MAC to the caller
 * (_ib_modify_qp() resolves it for user QPs only); rdma_cm finds it with
 * rdma_resolve_ip(), and so does this.
 *
 * Return: 0 or a negative errno.
 */
static int shca_ulp_resolve_mac(struct shca_ulp_host *h,
				const union ib_gid *dgid, u8 *mac)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} src, dst;
	struct shca_ulp_resolve r;
	struct rdma_dev_addr *addr;
	int ret;

	addr = kzalloc(sizeof(*addr), GFP_KERNEL);
	if (!addr)
		return -ENOMEM;
	rdma_gid2ip(&src.sa, &h->gattr->gid);
	rdma_gid2ip(&dst.sa, dgid);
	addr->net = &init_net;	/* replaced by the GID's namespace */
	addr->sgid_attr = h->gattr;
	init_completion(&r.done);
	ret = rdma_resolve_ip(&src.sa, &dst.sa, addr, 3000,
			      shca_ulp_resolved, true, &r);
	if (!ret) {
		wait_for_completion(&r.done);
		ret = r.status;
	}
	if (!ret)
		ether_addr_copy(mac, addr->dst_dev_addr);
	kfree(addr);
	return ret;
}

/* Bring @e's QP from RESET to RTS, connected to @peer's QP. */
static int shca_ulp_qp_rts(struct shca_ulp_end *e, struct shca_ulp_end *peer,
			   u32 sq_psn, u32 rq_psn)
{
	struct ib_qp_attr attr = {};
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.pkey_index = 0;
	attr.port_num = SHCA_ULP_PORT;
	attr.qp_access_flags = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE;
	ret = ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = min(e->host->mtu, peer->host->mtu);
	attr.dest_qp_num = peer->qp->qp_num;
	attr.rq_psn = rq_psn;
	attr.max_dest_rd_atomic = SHCA_ULP_RD_ATOMIC;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(e->host->dev, SHCA_ULP_PORT);
	rdma_ah_set_port_num(&attr.ah_attr, SHCA_ULP_PORT);
	rdma_ah_set_grh(&attr.ah_attr, (union ib_gid *)&peer->host->gattr->gid,
			0, e->host->gattr->index, 64, 0);
	ether_addr_copy(attr.ah_attr.roce.dmac, e->dmac);
	ret = ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 17;	/* 0.5 s: the test VM is slow */
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = sq_psn;
	attr.max_rd_atomic = SHCA_ULP_RD_ATOMIC;
	return ib_modify_qp(e->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* Connect both QPs of @p (both in RESET), new PSNs each time. */
static int shca_ulp_connect(struct shca_ulp_test *t, struct shca_ulp_pair *p)
{
	u32 psn_ab = (++t->epoch * 7919U + 1) & 0xffffff;
	u32 psn_ba = (t->epoch * 104729U + 2) & 0xffffff;
	int ret;

	ret = shca_ulp_qp_rts(&p->a, &p->b, psn_ab, psn_ba);
	if (!ret)
		ret = shca_ulp_qp_rts(&p->b, &p->a, psn_ba, psn_ab);
	return ret;
}

static int shca_ulp_set_state(struct ib_qp *qp, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

/**
 * shca_ulp_reconnect - reset a pair after an error and connect it again
 * @t: test
 * @p: the pair
 *
 * Both QPs go to ERR (flushing what is posted), packets still on their way
 * get time to arrive and be dropped, every completion left is thrown away,
 * a WR posted to one of them in ERR must complete flushed (as the marker
 * of ib_drain_sq() does; shca flushes it outside the caller's context,
 * whose IRQs the RDMA core lets be off), then RESET and a new connection
 * with new PSNs.
 *
 * Return: true on success (a failure is recorded).
 */
static bool shca_ulp_flush_marker(struct shca_ulp_test *t,
				  struct shca_ulp_end *e)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = ++t->wr_id,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	int ret;

	ret = ib_post_send(e->qp, &wr.wr, NULL);
	if (ret) {
		shca_ulp_fail(t, "posting to a QP in ERR: %d", ret);
		return false;
	}
	return shca_ulp_expect(t, "a WR posted in ERR", e->scq, e->qp,
			       wr.wr.wr_id, IB_WC_WR_FLUSH_ERR, 0, 0, NULL);
}

static bool shca_ulp_reconnect(struct shca_ulp_test *t,
			       struct shca_ulp_pair *p)
{
	int ret;

	shca_ulp_set_state(p->a.qp, IB_QPS_ERR);
	shca_ulp_set_state(p->b.qp, IB_QPS_ERR);
	msleep(20);
	shca_ulp_drain_cq(p->a.scq);
	/* a WR posted in ERR completes flushed (ib_drain_sq()'s marker) */
	if (!shca_ulp_flush_marker(t, &p->a))
		return false;
	shca_ulp_drain_cq(p->a.rcq);
	shca_ulp_drain_cq(p->b.scq);
	shca_ulp_drain_cq(p->b.rcq);
	ret = shca_ulp_set_state(p->a.qp, IB_QPS_RESET);
	if (!ret)
		ret = shca_ulp_set_state(p->b.qp, IB_QPS_RESET);
	if (!ret)
		ret = shca_ulp_connect(t, p);
	if (ret)
		shca_ulp_fail(t, "reconnecting the QPs: %d", ret);
	return !ret;
}

static bool shca_ulp_qp_in(struct shca_ulp_test *t, const char *what,
			   struct ib_qp *qp, enum ib_qp_state want)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init)) {
		shca_ulp_fail(t, "%s: ib_query_qp failed", what);
		return false;
	}
	if (attr.qp_state == want)
		return true;
	shca_ulp_fail(t, "%s: QP %u in state %d, expected %d", what,
		      qp->qp_num, attr.qp_state, want);
	return false;
}

/* ---- work requests --------------------------------------------------- */

/**
 * shca_ulp_map - map the first @nents entries of @b into its MR
 * @t: test
 * @b: buffer
 * @nents: scatterlist entries to map
 * @off: offset of the MR's first byte in the first entry
 *
 * Checks what ib_map_mr_sg() made of them: every entry mapped, the MR's
 * iova, length and page size.
 *
 * Return: true on success (a failure is recorded).
 */
static bool shca_ulp_map(struct shca_ulp_test *t, struct shca_ulp_buf *b,
			 unsigned int nents, unsigned int off)
{
	unsigned int sg_off = off, i;
	u64 len = 0;
	int n;

	for (i = 0; i < nents; i++)
		len += b->sgl[i].length;
	len -= off;
	n = ib_map_mr_sg(b->mr, b->sgl, nents, &sg_off, PAGE_SIZE);
	if (n != nents) {
		shca_ulp_fail(t, "ib_map_mr_sg mapped %d of %u entries", n,
			      nents);
		return false;
	}
	if (b->mr->iova != sg_dma_address(b->sgl) + off ||
	    b->mr->length != len || b->mr->page_size != PAGE_SIZE) {
		shca_ulp_fail(t, "ib_map_mr_sg: iova %#llx length %llu page size %u; expected %#llx, %llu, %lu",
			      b->mr->iova, b->mr->length, b->mr->page_size,
			      sg_dma_address(b->sgl) + off, len, PAGE_SIZE);
		return false;
	}
	return true;
}

/* Post a REG_MR of @b's MR as last mapped, with its next key. */
static int shca_ulp_post_reg(struct shca_ulp_test *t, struct shca_ulp_end *e,
			     struct shca_ulp_buf *b, int access, bool signaled,
			     struct ib_send_wr *next, u64 *wr_id)
{
	struct ib_reg_wr wr = {};

	ib_update_fast_reg_key(b->mr, ib_inc_rkey(b->mr->rkey) & 0xff);
	*wr_id = ++t->wr_id;
	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_id = *wr_id;
	wr.wr.send_flags = signaled ? IB_SEND_SIGNALED : 0;
	wr.wr.next = next;
	wr.mr = b->mr;
	wr.key = b->mr->rkey;
	wr.access = access;
	return ib_post_send(e->qp, &wr.wr, NULL);
}

/* The registration @b's MR got from its last REG_MR, as the test knows. */
static void shca_ulp_note_reg(struct shca_ulp_buf *b, unsigned int off)
{
	b->valid = true;
	b->key = b->mr->rkey;
	b->iova = b->mr->iova;
	b->mr_len = b->mr->length;
	b->off = off;
}

/**
 * shca_ulp_register - map and register @b through @e's QP
 * @t: test
 * @e: the end posting the REG_MR (in @b's PD)
 * @b: buffer, whose MR is free
 * @nents: scatterlist entries to map
 * @off: offset of the MR's first byte in the first entry
 * @access: access rights
 *
 * The key byte moves on (ib_update_fast_reg_key()); the REG_MR completion
 * must be a success with opcode IB_WC_REG_MR.
 *
 * Return: true on success (a failure is recorded).
 */
static bool shca_ulp_register(struct shca_ulp_test *t, struct shca_ulp_end *e,
			      struct shca_ulp_buf *b, unsigned int nents,
			      unsigned int off, int access)
{
	u64 id;
	int ret;

	if (!shca_ulp_map(t, b, nents, off))
		return false;
	ret = shca_ulp_post_reg(t, e, b, access, true, NULL, &id);
	if (ret) {
		shca_ulp_fail(t, "posting REG_MR: %d", ret);
		return false;
	}
	if (!shca_ulp_expect(t, "REG_MR", e->scq, e->qp, id, IB_WC_SUCCESS,
			     IB_WC_REG_MR, 0, NULL))
		return false;
	shca_ulp_note_reg(b, off);
	return true;
}

/* Register all of @b through pair 1's owner end (the usual case). */
static bool shca_ulp_reg_tb(struct shca_ulp_test *t)
{
	return shca_ulp_register(t, &t->p1.a, &t->tb, t->tb.nents, 0,
				 SHCA_ULP_ACCESS);
}

/**
 * shca_ulp_local_inv - post a LOCAL_INV of @key on @e's QP and check it
 * @t: test
 * @e: end
 * @b: the buffer whose MR @key is meant to name
 * @key: the key
 * @status: expected completion status
 *
 * Return: true when the completion was as expected.
 */
static bool shca_ulp_local_inv(struct shca_ulp_test *t, struct shca_ulp_end *e,
			       struct shca_ulp_buf *b, u32 key,
			       enum ib_wc_status status)
{
	struct ib_send_wr wr = {};
	int ret;

	wr.opcode = IB_WR_LOCAL_INV;
	wr.wr_id = ++t->wr_id;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.ex.invalidate_rkey = key;
	ret = ib_post_send(e->qp, &wr, NULL);
	if (ret) {
		shca_ulp_fail(t, "posting LOCAL_INV: %d", ret);
		return false;
	}
	if (!shca_ulp_expect(t, "LOCAL_INV", e->scq, e->qp, wr.wr_id, status,
			     IB_WC_LOCAL_INV, 0, NULL))
		return false;
	if (status == IB_WC_SUCCESS && key == b->key)
		b->valid = false;
	return true;
}

/* Post an RDMA WRITE or READ from @e between @lb and a remote address. */
static int shca_ulp_post_rdma(struct shca_ulp_test *t, struct shca_ulp_end *e,
			      enum ib_wr_opcode op, size_t lb_off,
			      u64 raddr, u32 rkey, u32 len)
{
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;

	sge.addr = shca_ulp_raddr(&t->lb, lb_off);
	sge.length = len;
	sge.lkey = t->lb.key;
	wr.wr.opcode = op;
	wr.wr.wr_id = ++t->wr_id;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = raddr;
	wr.rkey = rkey;
	return ib_post_send(e->qp, &wr.wr, NULL);
}

/**
 * shca_ulp_peer_write - the peer RDMA WRITEs into @b and both ends check
 * @t: test
 * @p: the pair (its b end writes)
 * @b: the target buffer on the a end
 * @boff: first byte of @b written
 * @len: bytes
 * @rkey: the key the peer uses
 * @seed: pattern of the data
 * @status: expected completion status of the WRITE
 *
 * The source is @t->lb from offset 0.  Checked: the WRITE's completion;
 * on success the target range holds the data, on failure its previous
 * pattern; SHCA_ULP_GUARD bytes on each side keep theirs; the source is
 * unchanged; the owner got no completion.  A failed WRITE leaves the pair
 * in error: it is reconnected.
 *
 * Return: true when all of it held.
 */
static bool shca_ulp_peer_write(struct shca_ulp_test *t,
				struct shca_ulp_pair *p,
				struct shca_ulp_buf *b, size_t boff,
				size_t len, u32 rkey, u32 seed,
				enum ib_wc_status status)
{
	size_t g0 = boff - min_t(size_t, boff, SHCA_ULP_GUARD);
	size_t g1 = min(b->len, boff + len + SHCA_ULP_GUARD);
	u32 old = seed ^ 0x5a5a5a5a;
	bool ok = true;
	int ret;

	shca_ulp_fill(b, g0, g1 - g0, old, 0, g0);
	shca_ulp_fill(&t->lb, 0, len, seed, 0, 0);
	ret = shca_ulp_post_rdma(t, &p->b, IB_WR_RDMA_WRITE, 0,
				 shca_ulp_raddr(b, boff), rkey, len);
	if (ret) {
		shca_ulp_fail(t, "posting RDMA WRITE: %d", ret);
		return false;
	}
	ok &= shca_ulp_expect(t, "RDMA WRITE", p->b.scq, p->b.qp, t->wr_id,
			      status, IB_WC_RDMA_WRITE, 0, NULL);
	if (status == IB_WC_SUCCESS)
		ok &= shca_ulp_check(t, "WRITE target", b, boff, len, seed, 0,
				     0);
	else
		ok &= shca_ulp_check(t, "refused WRITE's target", b, boff,
				     len, old, 0, boff);
	ok &= shca_ulp_check(t, "bytes before the WRITE target", b, g0,
			     boff - g0, old, 0, g0);
	ok &= shca_ulp_check(t, "bytes after the WRITE target", b, boff + len,
			     g1 - boff - len, old, 0, boff + len);
	ok &= shca_ulp_check(t, "WRITE source", &t->lb, 0, len, seed, 0, 0);
	if (status != IB_WC_SUCCESS)
		return shca_ulp_reconnect(t, p) && ok;
	ok &= shca_ulp_quiet(t, "owner's send CQ after a WRITE", p->a.scq);
	ok &= shca_ulp_quiet(t, "owner's receive CQ after a WRITE", p->a.rcq);
	return ok;
}

/**
 * shca_ulp_peer_read - the peer RDMA READs from @b and both ends check
 * @t: test
 * @p: the pair (its b end reads)
 * @b: the source buffer on the a end
 * @boff: first byte of @b read
 * @len: bytes
 * @rkey: the key the peer uses
 * @seed: pattern of the data
 * @status: expected completion status of the READ
 *
 * The sink is @t->lb from offset 512 KiB.  Checked as for
 * shca_ulp_peer_write(), the other way round.
 *
 * Return: true when all of it held.
 */
static bool shca_ulp_peer_read(struct shca_ulp_test *t,
			       struct shca_ulp_pair *p,
			       struct shca_ulp_buf *b, size_t boff,
			       size_t len, u32 rkey, u32 seed,
			       enum ib_wc_status status)
{
	size_t lo = SZ_512K, g0 = lo - SHCA_ULP_GUARD;
	size_t g1 = min(t->lb.len, lo + len + SHCA_ULP_GUARD);
	u32 old = seed ^ 0xa5a5a5a5;
	bool ok = true;
	int ret;

	shca_ulp_fill(b, boff, len, seed, 0, 0);
	shca_ulp_fill(&t->lb, g0, g1 - g0, old, 0, g0);
	ret = shca_ulp_post_rdma(t, &p->b, IB_WR_RDMA_READ, lo,
				 shca_ulp_raddr(b, boff), rkey, len);
	if (ret) {
		shca_ulp_fail(t, "posting RDMA READ: %d", ret);
		return false;
	}
	ok &= shca_ulp_expect(t, "RDMA READ", p->b.scq, p->b.qp, t->wr_id,
			      status, IB_WC_RDMA_READ, 0, NULL);
	if (status == IB_WC_SUCCESS)
		ok &= shca_ulp_check(t, "READ sink", &t->lb, lo, len, seed, 0,
				     0);
	else
		ok &= shca_ulp_check(t, "refused READ's sink", &t->lb, lo,
				     len, old, 0, lo);
	ok &= shca_ulp_check(t, "bytes before the READ sink", &t->lb, g0,
			     lo - g0, old, 0, g0);
	ok &= shca_ulp_check(t, "bytes after the READ sink", &t->lb, lo + len,
			     g1 - lo - len, old, 0, lo + len);
	ok &= shca_ulp_check(t, "READ source", b, boff, len, seed, 0, 0);
	if (status != IB_WC_SUCCESS)
		return shca_ulp_reconnect(t, p) && ok;
	ok &= shca_ulp_quiet(t, "owner's send CQ after a READ", p->a.scq);
	ok &= shca_ulp_quiet(t, "owner's receive CQ after a READ", p->a.rcq);
	return ok;
}

/* Post a receive of @l (SHCA_ULP_LBUF bytes) on @e. */
static int shca_ulp_post_recv(struct shca_ulp_test *t, struct shca_ulp_end *e,
			      struct shca_ulp_lbuf *l, u64 *wr_id)
{
	struct ib_recv_wr wr = {};
	struct ib_sge sge;

	memset(l->va, 0, SHCA_ULP_LBUF);
	sge.addr = l->dma;
	sge.length = SHCA_ULP_LBUF;
	sge.lkey = l->lkey;
	*wr_id = ++t->wr_id;
	wr.wr_id = *wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ib_post_recv(e->qp, &wr, NULL);
}

/**
 * shca_ulp_send_inv - the peer SENDs @len bytes with invalidation of @key
 * @t: test
 * @p: pair (b sends, a receives)
 * @key: the key named in the IETH
 * @len: payload bytes, from @t->lb
 * @seed: their pattern
 * @status: expected status of both completions
 *
 * On success the receive completion must be IB_WC_RECV with exactly
 * IB_WC_WITH_INVALIDATE, invalidate_rkey @key and the payload; on failure
 * both completions carry @status and the pair is reconnected.
 *
 * Return: true when all of it held.
 */
static bool shca_ulp_send_inv(struct shca_ulp_test *t, struct shca_ulp_pair *p,
			      u32 key, u32 len, u32 seed,
			      enum ib_wc_status status)
{
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	struct ib_wc wc;
	size_t i, bad = 0;
	bool ok = true;
	u64 rid;
	int ret;

	ret = shca_ulp_post_recv(t, &p->a, &t->ra, &rid);
	if (ret) {
		shca_ulp_fail(t, "posting a receive: %d", ret);
		return false;
	}
	shca_ulp_fill(&t->lb, 0, len, seed, 0, 0);
	sge.addr = shca_ulp_raddr(&t->lb, 0);
	sge.length = len;
	sge.lkey = t->lb.key;
	wr.opcode = IB_WR_SEND_WITH_INV;
	wr.wr_id = ++t->wr_id;
	wr.send_flags = IB_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.ex.invalidate_rkey = key;
	ret = ib_post_send(p->b.qp, &wr, NULL);
	if (ret) {
		shca_ulp_fail(t, "posting SEND_WITH_INV: %d", ret);
		return false;
	}
	ok &= shca_ulp_expect(t, "SEND_WITH_INV", p->b.scq, p->b.qp, wr.wr_id,
			      status, IB_WC_SEND, 0, NULL);
	if (status != IB_WC_SUCCESS) {
		ok &= shca_ulp_expect(t, "receive of a refused SEND_WITH_INV",
				      p->a.rcq, p->a.qp, rid, status,
				      IB_WC_RECV, -1, NULL);
		return shca_ulp_reconnect(t, p) && ok;
	}
	if (!shca_ulp_expect(t, "receive of SEND_WITH_INV", p->a.rcq, p->a.qp,
			     rid, IB_WC_SUCCESS, IB_WC_RECV,
			     IB_WC_WITH_INVALIDATE, &wc))
		return false;
	if (wc.byte_len != len || wc.ex.invalidate_rkey != key) {
		shca_ulp_fail(t, "receive of SEND_WITH_INV: byte_len %u invalidate_rkey %#x; expected %u and %#x",
			      wc.byte_len, wc.ex.invalidate_rkey, len, key);
		ok = false;
	}
	ib_dma_sync_single_for_cpu(t->ra.dev, t->ra.dma, SHCA_ULP_LBUF,
				   DMA_BIDIRECTIONAL);
	for (i = 0; i < len; i++)
		bad += t->ra.va[i] != shca_ulp_pat_byte(seed, i);
	if (bad) {
		shca_ulp_fail(t, "SEND_WITH_INV payload: %zu of %u bytes wrong",
			      bad, len);
		ok = false;
	}
	ok &= shca_ulp_quiet(t, "owner's send CQ after SEND_WITH_INV",
			     p->a.scq);
	return ok;
}

/* ---- functional cases ------------------------------------------------ */

/* A write of just over 64 KiB: 65 packets at a 1024-byte path MTU. */
#define SHCA_ULP_XFER	(SZ_64K + 1000)

/*
 * (a) FRWR: REG_MR of a multi-page, multi-entry FRMR, then the peer's
 * multi-packet RDMA WRITE and READ through its rkey.
 */
static void shca_ulp_case_frwr(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b = &t->tb;

	if (!shca_ulp_reg_tb(t))
		return;
	shca_ulp_diag(t, "FRMR of %u pages in %u scatterlist entries: iova %#llx length %llu rkey %#x",
		      b->npages, b->nents, b->iova, b->mr_len, b->key);
	if (!shca_ulp_peer_write(t, &t->p1, b, 3000, SHCA_ULP_XFER, b->key,
				 11, IB_WC_SUCCESS))
		return;
	shca_ulp_peer_read(t, &t->p1, b, 1500, SHCA_ULP_XFER, b->key, 12,
			   IB_WC_SUCCESS);
}

/*
 * (b) LOCAL_INV: completes as IB_WC_LOCAL_INV; then the old rkey is
 * refused for WRITE and READ with no byte moved.
 */
static void shca_ulp_case_local_inv(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b = &t->tb;
	u32 key;

	if (!shca_ulp_reg_tb(t) ||
	    !shca_ulp_peer_write(t, &t->p1, b, 0, 4096, b->key, 21,
				 IB_WC_SUCCESS))
		return;
	key = b->key;
	if (!shca_ulp_local_inv(t, &t->p1.a, b, key, IB_WC_SUCCESS))
		return;
	shca_ulp_peer_write(t, &t->p1, b, 100, SHCA_ULP_XFER, key, 22,
			    IB_WC_REM_ACCESS_ERR);
	shca_ulp_peer_read(t, &t->p1, b, 100, SHCA_ULP_XFER, key, 23,
			   IB_WC_REM_ACCESS_ERR);
}

/*
 * (c) Re-registration of the same MR with a new key byte and a new
 * translation (offset 512 into the first entry, the last two entries
 * left out): the new rkey reaches the new range, the previous one is
 * refused, and so is an access past the new, shorter end.
 */
static void shca_ulp_case_rereg(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b = &t->tb;
	unsigned int nents = b->nents - 2;
	u32 k1, k2;

	if (!shca_ulp_reg_tb(t))
		return;
	k1 = b->key;
	if (!shca_ulp_local_inv(t, &t->p1.a, b, k1, IB_WC_SUCCESS) ||
	    !shca_ulp_register(t, &t->p1.a, b, nents, 512, SHCA_ULP_ACCESS))
		return;
	k2 = b->key;
	if (k2 == k1 || (k2 >> 8) != (k1 >> 8) ||
	    (k2 & 0xff) != ((k1 + 1) & 0xff)) {
		shca_ulp_fail(t, "new key %#x after %#x: expected the next key byte",
			      k2, k1);
		return;
	}
	if (!shca_ulp_peer_write(t, &t->p1, b, 512 + 100, SHCA_ULP_XFER, k2,
				 31, IB_WC_SUCCESS) ||
	    !shca_ulp_peer_read(t, &t->p1, b, 512 + 200, SHCA_ULP_XFER, k2,
				32, IB_WC_SUCCESS))
		return;
	shca_ulp_peer_write(t, &t->p1, b, 512 + 100, 4096, k1, 33,
			    IB_WC_REM_ACCESS_ERR);
	shca_ulp_peer_read(t, &t->p1, b, 512 + 100, 4096, k1, 34,
			   IB_WC_REM_ACCESS_ERR);
	/* 10 bytes inside the registration, 90 past its end */
	shca_ulp_peer_write(t, &t->p1, b, b->off + b->mr_len - 10, 100, k2, 35,
			    IB_WC_REM_ACCESS_ERR);
	shca_ulp_peer_write(t, &t->p1, b, b->off + b->mr_len - 100, 100, k2,
			    36, IB_WC_SUCCESS);
}

/*
 * (d) SEND_WITH_INV from the peer naming the rkey: the receive says
 * IB_WC_WITH_INVALIDATE with that rkey; afterwards the rkey is refused.
 */
static void shca_ulp_case_send_inv(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b = &t->tb;
	u32 key;

	if (!shca_ulp_reg_tb(t) ||
	    !shca_ulp_peer_write(t, &t->p1, b, 0, 4096, b->key, 41,
				 IB_WC_SUCCESS))
		return;
	key = b->key;
	/* 5000 bytes: five packets, the IETH on the last */
	if (!shca_ulp_send_inv(t, &t->p1, key, 5000, 42, IB_WC_SUCCESS))
		return;
	b->valid = false;
	shca_ulp_peer_write(t, &t->p1, b, 0, SHCA_ULP_XFER, key, 43,
			    IB_WC_REM_ACCESS_ERR);
	shca_ulp_peer_read(t, &t->p1, b, 0, SHCA_ULP_XFER, key, 44,
			   IB_WC_REM_ACCESS_ERR);
}

/* The registration in effect still reaches its memory both ways. */
static void shca_ulp_still_valid(struct shca_ulp_test *t,
				 struct shca_ulp_pair *p,
				 struct shca_ulp_buf *b, u32 seed)
{
	if (shca_ulp_peer_write(t, p, b, b->off, 8192, b->key, seed,
				IB_WC_SUCCESS))
		shca_ulp_peer_read(t, p, b, b->off + 4000, 8192, b->key,
				   seed + 1, IB_WC_SUCCESS);
}

/*
 * (e) LOCAL_INV of a stale key (the MR re-registered since under the next
 * key byte): a local protection error, the QP in error; after
 * reconnecting, the current registration still works.
 */
static void shca_ulp_case_inv_stale(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b = &t->tb;
	u32 k1;

	if (!shca_ulp_reg_tb(t))
		return;
	k1 = b->key;
	if (!shca_ulp_local_inv(t, &t->p1.a, b, k1, IB_WC_SUCCESS) ||
	    !shca_ulp_reg_tb(t) ||
	    !shca_ulp_local_inv(t, &t->p1.a, b, k1, IB_WC_LOC_PROT_ERR))
		return;
	shca_ulp_qp_in(t, "after the failed LOCAL_INV", t->p1.a.qp,
		       IB_QPS_ERR);
	if (shca_ulp_reconnect(t, &t->p1))
		shca_ulp_still_valid(t, &t->p1, b, 51);
}

/*
 * (e) REG_MR of an MR that is still valid: a local protection error; the
 * registration in effect keeps its key and memory, the key of the
 * refused REG_MR is refused.
 */
static void shca_ulp_case_reg_valid(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b = &t->tb;
	u32 k2;
	u64 id;
	int ret;

	if (!shca_ulp_reg_tb(t))
		return;
	ret = shca_ulp_post_reg(t, &t->p1.a, b, SHCA_ULP_ACCESS, true, NULL,
				&id);
	if (ret) {
		shca_ulp_fail(t, "posting REG_MR: %d", ret);
		return;
	}
	k2 = b->mr->rkey;
	if (!shca_ulp_expect(t, "REG_MR of a valid MR", t->p1.a.scq,
			     t->p1.a.qp, id, IB_WC_LOC_PROT_ERR,
			     IB_WC_REG_MR, 0, NULL))
		return;
	shca_ulp_qp_in(t, "after the failed REG_MR", t->p1.a.qp, IB_QPS_ERR);
	if (!shca_ulp_reconnect(t, &t->p1))
		return;
	shca_ulp_still_valid(t, &t->p1, b, 61);
	shca_ulp_peer_write(t, &t->p1, b, 0, 4096, k2, 63,
			    IB_WC_REM_ACCESS_ERR);
}

/*
 * ib_map_mr_sg() on an MR that is still valid, over other pages, then a
 * refused REG_MR: the page list is an argument of the REG_MR, so the
 * registration in effect must still reach its own pages.
 */
static void shca_ulp_case_map_valid(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b = &t->tb;
	unsigned int skip = 3, i, n;
	size_t other = 0;
	u64 id;
	int ret;

	if (!shca_ulp_register(t, &t->p1.a, b, 1, 0, SHCA_ULP_ACCESS))
		return;
	for (i = 0; i < skip; i++)
		other += b->sgl[i].length;
	/* the same number of pages, from entry 3 on */
	n = ib_map_mr_sg(b->mr, &b->sgl[skip], 1, NULL, PAGE_SIZE);
	if (n != 1) {
		shca_ulp_fail(t, "ib_map_mr_sg of entry %u: %d", skip, n);
		return;
	}
	shca_ulp_fill(b, other, b->sgl[skip].length, 71, 0x33, 0);
	ret = shca_ulp_post_reg(t, &t->p1.a, b, SHCA_ULP_ACCESS, true, NULL,
				&id);
	if (ret) {
		shca_ulp_fail(t, "posting REG_MR: %d", ret);
		return;
	}
	if (!shca_ulp_expect(t, "REG_MR of a valid MR", t->p1.a.scq,
			     t->p1.a.qp, id, IB_WC_LOC_PROT_ERR,
			     IB_WC_REG_MR, 0, NULL) ||
	    !shca_ulp_reconnect(t, &t->p1))
		return;
	/* where the data went, if not to the registered pages */
	shca_ulp_peer_write(t, &t->p1, b, 0, b->sgl[0].length, b->key, 72,
			    IB_WC_SUCCESS);
	shca_ulp_check(t, "pages mapped but never registered", b, other,
		       b->sgl[skip].length, 71, 0x33, 0);
}

/*
 * (e) SEND_WITH_INV naming the key of an MR of another PD of the same
 * device: both completions are remote invalid request errors, that MR
 * stays valid, and so does the QP's own after reconnecting.
 */
static void shca_ulp_case_sendinv_pd(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b2 = &t->tb2;

	if (!shca_ulp_reg_tb(t) ||
	    !shca_ulp_register(t, &t->p2.a, b2, b2->nents, 0,
			       SHCA_ULP_ACCESS) ||
	    !shca_ulp_peer_read(t, &t->p2, b2, 0, 6000, b2->key, 81,
				IB_WC_SUCCESS))
		return;
	if (!shca_ulp_send_inv(t, &t->p1, b2->key, 100, 82,
			       IB_WC_REM_INV_REQ_ERR))
		return;
	if (shca_ulp_peer_read(t, &t->p2, b2, 100, 6000, b2->key, 83,
			       IB_WC_SUCCESS))
		shca_ulp_still_valid(t, &t->p1, &t->tb, 84);
	shca_ulp_local_inv(t, &t->p2.a, b2, b2->key, IB_WC_SUCCESS);
}

/*
 * (e) SEND_WITH_INV naming a stale key (the previous key byte of an MR
 * registered again since): both completions are remote invalid request
 * errors and the current registration stays valid.
 */
static void shca_ulp_case_sendinv_stale(struct shca_ulp_test *t)
{
	struct shca_ulp_buf *b = &t->tb;
	u32 k1;

	if (!shca_ulp_reg_tb(t))
		return;
	k1 = b->key;
	if (!shca_ulp_local_inv(t, &t->p1.a, b, k1, IB_WC_SUCCESS) ||
	    !shca_ulp_reg_tb(t) ||
	    !shca_ulp_send_inv(t, &t->p1, k1, 100, 91, IB_WC_REM_INV_REQ_ERR))
		return;
	shca_ulp_still_valid(t, &t->p1, b, 92);
}

/* the memory descriptor a ULP sends its peer with the REG_MR */
struct shca_ulp_desc {
	__le64 addr;
	__le32 rkey;
	__le32 len;
};

/*
 * One cycle of the cycle case: REG_MR chained (unsignaled) with the SEND
 * that tells the peer about it, the peer's WRITE and READ, then the
 * peer's SEND_WITH_INV (even cycles) or the owner's LOCAL_INV.
 */
static bool shca_ulp_cycle(struct shca_ulp_test *t, unsigned int c)
{
	struct shca_ulp_pair *p = &t->p1;
	struct shca_ulp_buf *b = &t->tb;
	unsigned int nents = 4 + c % (b->nents - 3);
	unsigned int off = (c % 4) * 1024;
	struct shca_ulp_desc *d = (struct shca_ulp_desc *)t->sa.va;
	struct shca_ulp_desc got;
	struct ib_send_wr send = {};
	struct ib_sge sge;
	struct ib_wc wc;
	size_t len, boff;
	u64 rid, regid;
	int ret;

	if (!shca_ulp_map(t, b, nents, off))
		return false;
	ret = shca_ulp_post_recv(t, &p->b, &t->rb, &rid);
	if (ret) {
		shca_ulp_fail(t, "posting a receive: %d", ret);
		return false;
	}
	/* the key the REG_MR below gives the MR */
	d->addr = cpu_to_le64(b->mr->iova);
	d->rkey = cpu_to_le32(ib_inc_rkey(b->mr->rkey));
	d->len = cpu_to_le32(b->mr->length);
	sge.addr = t->sa.dma;
	sge.length = sizeof(*d);
	sge.lkey = t->sa.lkey;
	send.opcode = IB_WR_SEND;
	send.wr_id = ++t->wr_id;
	send.send_flags = IB_SEND_SIGNALED;
	send.sg_list = &sge;
	send.num_sge = 1;
	ret = shca_ulp_post_reg(t, &p->a, b, SHCA_ULP_ACCESS, false, &send,
				&regid);
	if (ret) {
		shca_ulp_fail(t, "posting REG_MR + SEND: %d", ret);
		return false;
	}
	if (!shca_ulp_expect(t, "SEND after an unsignaled REG_MR", p->a.scq,
			     p->a.qp, send.wr_id, IB_WC_SUCCESS, IB_WC_SEND,
			     0, NULL) ||
	    !shca_ulp_expect(t, "receive of the descriptor", p->b.rcq,
			     p->b.qp, rid, IB_WC_SUCCESS, IB_WC_RECV, 0, &wc))
		return false;
	ib_dma_sync_single_for_cpu(t->rb.dev, t->rb.dma, SHCA_ULP_LBUF,
				   DMA_BIDIRECTIONAL);
	memcpy(&got, t->rb.va, sizeof(got));
	if (wc.byte_len != sizeof(got) || memcmp(&got, d, sizeof(got)) ||
	    le32_to_cpu(got.rkey) != b->mr->rkey) {
		shca_ulp_fail(t, "descriptor received: %u bytes, rkey %#x, MR rkey %#x",
			      wc.byte_len, le32_to_cpu(got.rkey),
			      b->mr->rkey);
		return false;
	}
	shca_ulp_note_reg(b, off);
	len = 1 + (c * 4099) % 20480;
	boff = off + (c * 613) % (b->mr_len - len);
	if (!shca_ulp_peer_write(t, p, b, boff, len, b->key, 1000 + c,
				 IB_WC_SUCCESS) ||
	    !shca_ulp_peer_read(t, p, b, boff, len, b->key, 5000 + c,
				IB_WC_SUCCESS))
		return false;
	if (c % 2 == 0) {
		if (!shca_ulp_send_inv(t, p, b->key, 16, 9000 + c,
				       IB_WC_SUCCESS))
			return false;
		b->valid = false;
	} else if (!shca_ulp_local_inv(t, &p->a, b, b->key, IB_WC_SUCCESS)) {
		return false;
	}
	if (c % 50 == 49 &&
	    !shca_ulp_peer_write(t, p, b, boff, len, b->key, 7000 + c,
				 IB_WC_REM_ACCESS_ERR))
		return false;
	return true;
}

/*
 * (f) Many REG_MR / invalidation cycles as a ULP runs them, with data
 * checks; leaks show in the selftest's object counts.
 */
static void shca_ulp_case_cycles(struct shca_ulp_test *t)
{
	unsigned int c;

	for (c = 0; c < cycles; c++) {
		if (!shca_ulp_cycle(t, c)) {
			shca_ulp_diag(t, "cycle %u of %u failed", c, cycles);
			return;
		}
		cond_resched();
	}
	shca_ulp_diag(t, "%u cycles (REG_MR + SEND, WRITE, READ, SEND_WITH_INV or LOCAL_INV)",
		      cycles);
}

/* ---- race cases -------------------------------------------------------- */

/* Wait @us microseconds (0: not at all). */
static void shca_ulp_delay(u64 us)
{
	if (us < 20)
		udelay(us);
	else
		usleep_range(us, us + us / 16 + 1);
}

/**
 * struct shca_ulp_race - one race case's tries
 * @write: the peer WRITEs (else READs)
 * @snap: the owner's copy of the MR's memory when LOCAL_INV completed
 *	(WRITE)
 * @full_us: how long the undisturbed transfer took
 * @ok: per invalidating QP (0: the QP the transfer uses, 1: another QP of
 *	the PD): tries whose transfer completed successfully
 * @rae: tries whose transfer completed with IB_WC_REM_ACCESS_ERR
 * @bad: tries with a violation
 */
struct shca_ulp_race {
	bool write;
	u8 *snap;
	u64 full_us;
	unsigned int ok[2];
	unsigned int rae[2];
	unsigned int bad[2];
};

/**
 * shca_ulp_race_try - one transfer of the whole MR, LOCAL_INV racing it
 * @t: test
 * @r: the race case
 * @ie: the end posting the LOCAL_INV, or NULL: none (time the transfer)
 * @d_us: microseconds from posting the transfer to posting the LOCAL_INV
 * @ns: receives how long the transfer took
 *
 * The peer's transfer runs on pair 1.  The moment the LOCAL_INV completes
 * (polled without sleeping) the owner acts on its memory: for a WRITE it
 * copies it to @r->snap, for a READ it overwrites every byte with
 * SHCA_ULP_SPOILT, which no byte of the data had.
 *
 * Return: the transfer's completion status, or -1 when something else
 * went wrong (recorded).
 */
static int shca_ulp_race_try(struct shca_ulp_test *t, struct shca_ulp_race *r,
			     struct shca_ulp_end *ie, u64 d_us, u64 *ns)
{
	enum ib_wc_opcode wop = r->write ? IB_WC_RDMA_WRITE : IB_WC_RDMA_READ;
	struct shca_ulp_pair *p = &t->p1;
	struct shca_ulp_buf *b = &t->tb;
	struct ib_send_wr inv = {};
	struct ib_wc wc;
	u64 t0, id;
	int ret;

	t0 = ktime_get_ns();
	ret = shca_ulp_post_rdma(t, &p->b, r->write ? IB_WR_RDMA_WRITE :
				 IB_WR_RDMA_READ, 0, b->iova, b->key, b->len);
	if (ret) {
		shca_ulp_fail(t, "posting the 1 MiB transfer: %d", ret);
		return -1;
	}
	id = t->wr_id;
	if (ie) {
		shca_ulp_delay(d_us);
		inv.opcode = IB_WR_LOCAL_INV;
		inv.wr_id = ++t->wr_id;
		inv.send_flags = IB_SEND_SIGNALED;
		inv.ex.invalidate_rkey = b->key;
		ret = ib_post_send(ie->qp, &inv, NULL);
		if (ret) {
			shca_ulp_fail(t, "posting LOCAL_INV: %d", ret);
			return -1;
		}
		if (shca_ulp_poll(ie->scq, &wc, SHCA_ULP_WAIT_MS, true)) {
			shca_ulp_fail(t, "LOCAL_INV did not complete");
			return -1;
		}
		if (r->write)
			shca_ulp_buf_op(b, 0, b->len, SHCA_ULP_SNAP, NULL,
					r->snap, NULL);
		else
			shca_ulp_buf_op(b, 0, b->len, SHCA_ULP_SPOIL, NULL,
					NULL, NULL);
		if (!shca_ulp_check_wc(t, "LOCAL_INV", &wc, ie->qp, inv.wr_id,
				       IB_WC_SUCCESS, IB_WC_LOCAL_INV, 0))
			return -1;
		b->valid = false;
	}
	if (shca_ulp_poll(p->b.scq, &wc, SHCA_ULP_WAIT_MS, false)) {
		shca_ulp_fail(t, "the 1 MiB transfer did not complete");
		return -1;
	}
	*ns = ktime_get_ns() - t0;
	if (wc.wr_id != id ||
	    (wc.status == IB_WC_SUCCESS && wc.opcode != wop)) {
		shca_ulp_fail(t, "transfer completion: wr_id %llu opcode %d; expected %llu and %d",
			      wc.wr_id, wc.opcode, id, wop);
		return -1;
	}
	return wc.status;
}

/*
 * What the owner's memory (WRITE) or the reader's buffer (READ) shows
 * after try @i (pattern @seed) ended with @st: the violations, recorded.
 */
static void shca_ulp_race_judge(struct shca_ulp_test *t,
				struct shca_ulp_race *r, unsigned int i,
				u32 seed, u64 d, int st, u64 ns)
{
	struct shca_ulp_buf *b = r->write ? &t->tb : &t->lb;
	unsigned int v = i & 1;
	size_t late, miss = 0, first;

	if (r->write) {
		/* written after the snapshot; missing from it */
		late = shca_ulp_buf_op(b, 0, b->len, SHCA_ULP_CMP, NULL,
				       r->snap, &first);
		if (st == IB_WC_SUCCESS)
			miss = shca_ulp_lin_diff(r->snap, b->len, seed);
	} else {
		/* overwritten bytes the reader got; bytes a success lacks */
		late = shca_ulp_buf_op(b, 0, b->len, SHCA_ULP_SPOILED, NULL,
				       NULL, &first);
		if (st == IB_WC_SUCCESS)
			miss = shca_ulp_diff(b, 0, b->len, seed, 0, 0, NULL);
	}
	if (st == IB_WC_SUCCESS)
		r->ok[v]++;
	else if (st == IB_WC_REM_ACCESS_ERR)
		r->rae[v]++;
	else
		shca_ulp_fail(t, "try %u: the transfer completed with %s", i,
			      shca_ulp_st(st));
	if (!late && !miss)
		return;
	r->bad[v]++;
	shca_ulp_fail(t, "try %u (LOCAL_INV on %s QP %llu us after the %s, which ended %s after %llu us): %zu bytes %s after LOCAL_INV completed (the first at %zu), %zu bytes of a successful transfer missing",
		      i, v ? "another" : "the same", d,
		      r->write ? "WRITE" : "READ", shca_ulp_st(st),
		      div_u64(ns, 1000), late,
		      r->write ? "written" : "of the owner's writes read", first,
		      miss);
}

/*
 * Race: the peer's 1 MiB RDMA WRITE or READ of the whole MR against the
 * owner's LOCAL_INV, posted at delays spread over the transfer (the last
 * quarter of the tries after its end).  The invalidating QP alternates:
 * the QP the transfer uses, then another QP of the same PD (pair 2).
 *
 * WRITE: the owner copies its memory as soon as the LOCAL_INV completes;
 * after the WRITE completed either way and a settle time the memory must
 * still be that copy, and a successful WRITE must be all in it.
 *
 * READ: the owner overwrites every byte of its memory as soon as the
 * LOCAL_INV completes, each with a value no byte of the data had; not one
 * such byte may reach the reader, and a successful READ must have read
 * all the original bytes.
 */
static void shca_ulp_race(struct shca_ulp_test *t, bool write)
{
	struct shca_ulp_race r = { .write = write };
	unsigned int n = race_tries * 2, spread = max(race_tries * 3 / 4, 1U);
	const char *what = write ? "WRITE" : "READ";
	struct shca_ulp_buf *b = &t->tb;
	struct shca_ulp_end *ie;
	unsigned int i, k;
	u64 d, ns;
	u32 seed;
	int st;

	if (write) {
		r.snap = vmalloc(b->len);
		if (!r.snap) {
			shca_ulp_fail(t, "no memory for the snapshot");
			return;
		}
	}
	/* k 0: the transfer undisturbed; then try i = k - 1 */
	for (k = 0; k <= n; k++) {
		i = k - 1;
		seed = SHCA_ULP_SEED7 | (100 + k + (write ? 0 : 1000));
		ie = !k ? NULL : i & 1 ? &t->p2.a : &t->p1.a;
		d = !k ? 0 : div_u64(r.full_us * (i / 2), spread);
		/* WRITE: target P ^ 0x55, source P; READ: source P */
		shca_ulp_fill(b, 0, b->len, seed, write ? 0x55 : 0, 0);
		shca_ulp_fill(&t->lb, 0, b->len, seed, write ? 0 : 0x55, 0);
		if (!shca_ulp_reg_tb(t))
			goto out;
		st = shca_ulp_race_try(t, &r, ie, d, &ns);
		if (st < 0)
			goto out;
		if (!ie) {
			if (st != IB_WC_SUCCESS ||
			    !shca_ulp_check(t, "undisturbed transfer",
					    write ? b : &t->lb, 0, b->len,
					    seed, 0, 0) ||
			    !shca_ulp_local_inv(t, &t->p1.a, b, b->key,
						IB_WC_SUCCESS)) {
				shca_ulp_fail(t, "the undisturbed 1 MiB %s failed",
					      what);
				goto out;
			}
			r.full_us = div_u64(ns, 1000);
			/* the last try's delay */
			d = div_u64(r.full_us * (max(race_tries, 1U) - 1),
				    spread);
			shca_ulp_diag(t, "1 MiB %s undisturbed: %llu us; LOCAL_INV from 0 to %llu us after posting it",
				      what, r.full_us, d);
			continue;
		}
		msleep(SHCA_ULP_SETTLE_MS);
		shca_ulp_race_judge(t, &r, i, seed, d, st, ns);
		if (st != IB_WC_SUCCESS && !shca_ulp_reconnect(t, &t->p1))
			goto out;
		if (!shca_ulp_quiet(t, "owner's send CQ after a try",
				    t->p1.a.scq) ||
		    !shca_ulp_quiet(t, "other QP's send CQ after a try",
				    t->p2.a.scq))
			goto out;
	}
	for (i = 0; i < 2; i++)
		shca_ulp_diag(t, "%s race, LOCAL_INV on %s QP: %u tries: %u completed, %u remote access error, %u violated",
			      what, i ? "another" : "the same", race_tries,
			      r.ok[i], r.rae[i], r.bad[i]);
out:
	vfree(r.snap);
}

static void shca_ulp_case_race_write(struct shca_ulp_test *t)
{
	shca_ulp_race(t, true);
}

static void shca_ulp_case_race_read(struct shca_ulp_test *t)
{
	shca_ulp_race(t, false);
}

/* ---- set-up and teardown --------------------------------------------- */

static void shca_ulp_host_put(struct shca_ulp_host *h)
{
	if (h->gattr)
		rdma_put_gid_attr(h->gattr);
	h->gattr = NULL;
	if (h->dev)
		ib_device_put(h->dev);
	h->dev = NULL;
}

static int shca_ulp_host_get(struct shca_ulp_host *h, const char *name,
			     u32 gid_index)
{
	struct ib_port_attr pa;
	int ret;

	if (!name) {
		pr_err("dev_a and dev_b must name RDMA devices\n");
		return -EINVAL;
	}
	h->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!h->dev) {
		pr_err("no RDMA device %s\n", name);
		return -ENODEV;
	}
	if (!ib_uses_virt_dma(h->dev)) {
		pr_err("%s is not a virtual-DMA device\n", name);
		return -EOPNOTSUPP;
	}
	h->gattr = rdma_get_gid_attr(h->dev, SHCA_ULP_PORT, gid_index);
	if (IS_ERR(h->gattr)) {
		ret = PTR_ERR(h->gattr);
		h->gattr = NULL;
		pr_err("%s: no GID %u: %d\n", name, gid_index, ret);
		return ret;
	}
	if (h->gattr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		pr_err("%s: GID %u is not a RoCEv2 GID\n", name, gid_index);
		return -EINVAL;
	}
	ret = ib_query_port(h->dev, SHCA_ULP_PORT, &pa);
	if (ret)
		return ret;
	h->mtu = pa.active_mtu;
	return 0;
}

static void shca_ulp_end_destroy(struct shca_ulp_end *e)
{
	if (e->qp)
		ib_destroy_qp(e->qp);
	e->qp = NULL;
	if (e->scq)
		ib_free_cq(e->scq);
	e->scq = NULL;
	if (e->rcq)
		ib_free_cq(e->rcq);
	e->rcq = NULL;
}

/* After its QP and every MR in it: the PD, if the end created it. */
static void shca_ulp_end_put_pd(struct shca_ulp_end *e)
{
	if (e->pd && e->own_pd)
		ib_dealloc_pd(e->pd);
	e->pd = NULL;
}

/* PD (a new one unless @pd is given), CQs and an RC QP on @h. */
static int shca_ulp_end_create(struct shca_ulp_end *e, struct shca_ulp_host *h,
			       struct ib_pd *pd)
{
	struct ib_qp_init_attr init = {};
	int ret;

	e->host = h;
	if (!pd) {
		pd = ib_alloc_pd(h->dev, 0);
		if (IS_ERR(pd))
			return PTR_ERR(pd);
		e->own_pd = true;
	}
	e->pd = pd;
	e->scq = ib_alloc_cq(h->dev, NULL, SHCA_ULP_CQE, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->scq)) {
		ret = PTR_ERR(e->scq);
		e->scq = NULL;
		return ret;
	}
	e->rcq = ib_alloc_cq(h->dev, NULL, SHCA_ULP_CQE, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->rcq)) {
		ret = PTR_ERR(e->rcq);
		e->rcq = NULL;
		return ret;
	}
	init.send_cq = e->scq;
	init.recv_cq = e->rcq;
	init.qp_type = IB_QPT_RC;
	init.sq_sig_type = IB_SIGNAL_REQ_WR;
	init.cap.max_send_wr = SHCA_ULP_SEND_WR;
	init.cap.max_recv_wr = SHCA_ULP_RECV_WR;
	init.cap.max_send_sge = 2;
	init.cap.max_recv_sge = 2;
	e->qp = ib_create_qp(pd, &init);
	if (IS_ERR(e->qp)) {
		ret = PTR_ERR(e->qp);
		e->qp = NULL;
		return ret;
	}
	return 0;
}

/* Both ends of @p, their peers' MAC addresses, connected. */
static int shca_ulp_pair_create(struct shca_ulp_test *t,
				struct shca_ulp_pair *p, struct ib_pd *pd_a,
				struct ib_pd *pd_b)
{
	int ret;

	ret = shca_ulp_end_create(&p->a, &t->ha, pd_a);
	if (!ret)
		ret = shca_ulp_end_create(&p->b, &t->hb, pd_b);
	if (ret)
		return ret;
	ret = shca_ulp_resolve_mac(&t->ha, &t->hb.gattr->gid, p->a.dmac);
	if (!ret)
		ret = shca_ulp_resolve_mac(&t->hb, &t->ha.gattr->gid,
					   p->b.dmac);
	if (ret) {
		pr_err("resolving the peers' MAC addresses: %d\n", ret);
		return ret;
	}
	return shca_ulp_connect(t, p);
}

static void shca_ulp_teardown(struct shca_ulp_test *t)
{
	shca_ulp_end_destroy(&t->p2.a);
	shca_ulp_end_destroy(&t->p2.b);
	shca_ulp_end_destroy(&t->p1.a);
	shca_ulp_end_destroy(&t->p1.b);
	shca_ulp_buf_free(&t->tb);
	shca_ulp_buf_free(&t->tb2);
	shca_ulp_buf_free(&t->lb);
	shca_ulp_lbuf_free(&t->ra);
	shca_ulp_lbuf_free(&t->sa);
	shca_ulp_lbuf_free(&t->rb);
	/* last: the QPs and MRs were in the PDs */
	shca_ulp_end_put_pd(&t->p2.a);
	shca_ulp_end_put_pd(&t->p2.b);
	shca_ulp_end_put_pd(&t->p1.a);
	shca_ulp_end_put_pd(&t->p1.b);
	shca_ulp_host_put(&t->ha);
	shca_ulp_host_put(&t->hb);
}

static int shca_ulp_setup(struct shca_ulp_test *t)
{
	unsigned int pages = race ? SHCA_ULP_BIG_PAGES : SHCA_ULP_FUNC_PAGES;
	int ret;

	ret = shca_ulp_host_get(&t->ha, dev_a, gid_a);
	if (!ret)
		ret = shca_ulp_host_get(&t->hb, dev_b, gid_b);
	if (ret)
		return ret;
	ret = shca_ulp_pair_create(t, &t->p1, NULL, NULL);
	if (!ret)
		ret = shca_ulp_pair_create(t, &t->p2,
					   race ? t->p1.a.pd : NULL,
					   t->p1.b.pd);
	if (ret) {
		pr_err("creating and connecting the QPs: %d\n", ret);
		return ret;
	}
	ret = shca_ulp_buf_alloc(&t->tb, t->p1.a.pd, pages);
	if (!ret)
		ret = shca_ulp_buf_alloc(&t->tb2, t->p2.a.pd,
					 SHCA_ULP_TB2_PAGES);
	if (!ret)
		ret = shca_ulp_buf_alloc(&t->lb, t->p1.b.pd,
					 SHCA_ULP_BIG_PAGES);
	if (!ret)
		ret = shca_ulp_lbuf_alloc(&t->ra, t->p1.a.pd);
	if (!ret)
		ret = shca_ulp_lbuf_alloc(&t->sa, t->p1.a.pd);
	if (!ret)
		ret = shca_ulp_lbuf_alloc(&t->rb, t->p1.b.pd);
	if (ret) {
		pr_err("allocating buffers and MRs: %d\n", ret);
		return ret;
	}
	/* the peer's buffer: an FRMR it uses through its lkey */
	if (!shca_ulp_register(t, &t->p1.b, &t->lb, t->lb.nents, 0,
			       IB_ACCESS_LOCAL_WRITE)) {
		pr_err("registering the peer's buffer failed\n");
		return -EIO;
	}
	t->ndiag = 0;
	t->failed = false;
	return 0;
}

/* ---- a completion handler that posts to its own QP -------------------- */

#define SHCA_ULP_ECHOES	100
#define SHCA_ULP_ECHO_LEN	64

/**
 * struct shca_ulp_echo - an RC QP served from its CQ's completion handler
 * @qp: the QP (on host A), whose send and receive CQ is @cq
 * @cq: its CQ, created with shca_ulp_echo_comp() as handler
 * @rx: receive buffer
 * @tx: send buffer
 * @echoed: receives answered so far
 * @err: the first error the handler met (a verb's return or a status)
 * @done: completed when @echoed reaches SHCA_ULP_ECHOES or on @err
 */
struct shca_ulp_echo {
	struct ib_qp *qp;
	struct ib_cq *cq;
	struct shca_ulp_lbuf rx;
	struct shca_ulp_lbuf tx;
	unsigned int echoed;
	int err;
	struct completion done;
};

static int shca_ulp_echo_post_recv(struct shca_ulp_echo *e)
{
	struct ib_sge sge = {
		.addr = e->rx.dma, .length = SHCA_ULP_ECHO_LEN,
		.lkey = e->rx.lkey,
	};
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(e->qp, &wr, NULL);
}

/* The reply to receive @n: its first byte is @n. */
static int shca_ulp_echo_post_send(struct shca_ulp_echo *e, unsigned int n)
{
	struct ib_sge sge = {
		.addr = e->tx.dma, .length = SHCA_ULP_ECHO_LEN,
		.lkey = e->tx.lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};

	memset(e->tx.va, n, SHCA_ULP_ECHO_LEN);
	return ib_post_send(e->qp, &wr, NULL);
}

/* One completion of the echo QP: a receive is answered at once. */
static void shca_ulp_echo_one(struct shca_ulp_echo *e, const struct ib_wc *wc)
{
	int ret;

	if (wc->status != IB_WC_SUCCESS) {
		e->err = -EIO;
		return;
	}
	if (wc->opcode != IB_WC_RECV)
		return;
	ret = shca_ulp_echo_post_recv(e);
	if (!ret)
		ret = shca_ulp_echo_post_send(e, ++e->echoed);
	if (ret)
		e->err = ret;
}

/*
 * The completion handler, as an old-style ULP writes it: poll, repost the
 * receive and send the reply on the same QP, re-arm.  It runs in the
 * device's completion context; with a driver lock of the QP held there,
 * the posts deadlock.
 */
static void shca_ulp_echo_comp(struct ib_cq *cq, void *ctx)
{
	struct shca_ulp_echo *e = ctx;
	struct ib_wc wc;

	do {
		while (!e->err && ib_poll_cq(cq, 1, &wc) > 0)
			shca_ulp_echo_one(e, &wc);
	} while (!e->err && e->echoed < SHCA_ULP_ECHOES &&
		 ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0);
	if (e->err || e->echoed >= SHCA_ULP_ECHOES)
		complete(&e->done);
}

static int shca_ulp_echo_create(struct shca_ulp_test *t,
				struct shca_ulp_echo *e, struct shca_ulp_end *a)
{
	struct ib_cq_init_attr ca = { .cqe = 64 };
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC, .sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int ret;

	init_completion(&e->done);
	ret = shca_ulp_lbuf_alloc(&e->rx, t->p1.a.pd);
	if (!ret)
		ret = shca_ulp_lbuf_alloc(&e->tx, t->p1.a.pd);
	if (ret)
		return ret;
	e->cq = ib_create_cq(t->ha.dev, shca_ulp_echo_comp, NULL, e, &ca);
	if (IS_ERR(e->cq)) {
		ret = PTR_ERR(e->cq);
		e->cq = NULL;
		return ret;
	}
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = ib_create_qp(t->p1.a.pd, &init);
	if (IS_ERR(e->qp)) {
		ret = PTR_ERR(e->qp);
		e->qp = NULL;
		return ret;
	}
	a->host = &t->ha;
	a->pd = t->p1.a.pd;
	a->qp = e->qp;
	ether_addr_copy(a->dmac, t->p1.a.dmac);
	return 0;
}

static void shca_ulp_echo_destroy(struct shca_ulp_echo *e)
{
	if (e->qp)
		ib_destroy_qp(e->qp);
	if (e->cq)
		ib_destroy_cq(e->cq);
	shca_ulp_lbuf_free(&e->rx);
	shca_ulp_lbuf_free(&e->tx);
}

/* The peer's side of one round: a SEND of @n, then the reply. */
static bool shca_ulp_echo_round(struct shca_ulp_test *t,
				struct shca_ulp_end *b, struct shca_ulp_lbuf *l,
				unsigned int n)
{
	struct ib_sge sge = {
		.addr = l->dma, .length = SHCA_ULP_ECHO_LEN, .lkey = l->lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = n, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};
	u64 rid;
	int ret;

	ret = shca_ulp_post_recv(t, b, &t->rb, &rid);
	if (!ret)
		ret = ib_post_send(b->qp, &wr, NULL);
	if (ret) {
		shca_ulp_fail(t, "peer's post of round %u: %d", n, ret);
		return false;
	}
	if (!shca_ulp_expect(t, "peer's SEND", b->scq, b->qp, n,
			     IB_WC_SUCCESS, IB_WC_SEND, 0, NULL) ||
	    !shca_ulp_expect(t, "the handler's reply", b->rcq, b->qp, rid,
			     IB_WC_SUCCESS, IB_WC_RECV, 0, NULL))
		return false;
	if (t->rb.va[0] != (u8)n || t->rb.va[SHCA_ULP_ECHO_LEN - 1] != (u8)n) {
		shca_ulp_fail(t, "reply %u carries %u", n, t->rb.va[0]);
		return false;
	}
	return true;
}

/*
 * (k) A completion handler that posts to its own QP: 100 SENDs from the
 * peer, each answered from the handler of the receiving QP's CQ (repost
 * the receive, SEND the reply, re-arm), the replies checked.
 */
static void shca_ulp_case_echo(struct shca_ulp_test *t)
{
	struct shca_ulp_echo *e = kzalloc(sizeof(*e), GFP_KERNEL);
	struct shca_ulp_pair p = {};
	struct shca_ulp_lbuf l = {};
	unsigned int n;

	if (!e || shca_ulp_echo_create(t, e, &p.a) ||
	    shca_ulp_end_create(&p.b, &t->hb, t->p1.b.pd) ||
	    shca_ulp_lbuf_alloc(&l, t->p1.b.pd)) {
		shca_ulp_fail(t, "creating the echo QP pair");
		goto out;
	}
	ether_addr_copy(p.b.dmac, t->p1.b.dmac);
	if (shca_ulp_connect(t, &p) || shca_ulp_echo_post_recv(e) ||
	    ib_req_notify_cq(e->cq, IB_CQ_NEXT_COMP) < 0) {
		shca_ulp_fail(t, "connecting the echo QP pair");
		goto out;
	}
	for (n = 1; n <= SHCA_ULP_ECHOES; n++)
		if (!shca_ulp_echo_round(t, &p.b, &l, n))
			break;
	if (!wait_for_completion_timeout(&e->done,
					 msecs_to_jiffies(SHCA_ULP_WAIT_MS)))
		shca_ulp_fail(t, "the handler answered %u of %u", e->echoed,
			      SHCA_ULP_ECHOES);
	else if (e->err)
		shca_ulp_fail(t, "the handler's post or completion: %d after %u",
			      e->err, e->echoed);
out:
	shca_ulp_end_destroy(&p.b);
	shca_ulp_lbuf_free(&l);
	if (e)
		shca_ulp_echo_destroy(e);
	kfree(e);
}

/* ---- the run --------------------------------------------------------- */

/**
 * struct shca_ulp_case - a case
 * @name: its TAP description
 * @run: runs it
 */
struct shca_ulp_case {
	const char *name;
	void (*run)(struct shca_ulp_test *t);
};

static const struct shca_ulp_case shca_ulp_cases[] = {
	{ "FRWR: REG_MR of a 24-page FRMR over 11 scatterlist entries, peer RDMA WRITE and READ of 65 KiB through its rkey",
	  shca_ulp_case_frwr },
	{ "LOCAL_INV completes as IB_WC_LOCAL_INV; the old rkey's WRITE and READ get REM_ACCESS_ERR, no byte moved",
	  shca_ulp_case_local_inv },
	{ "re-registration with the next key byte and a new translation: new rkey works, previous one and the old range refused",
	  shca_ulp_case_rereg },
	{ "SEND_WITH_INV from the peer: IB_WC_WITH_INVALIDATE with the rkey, then the rkey is refused",
	  shca_ulp_case_send_inv },
	{ "LOCAL_INV of a stale key: LOC_PROT_ERR, QP in error, the current registration still works",
	  shca_ulp_case_inv_stale },
	{ "REG_MR of a valid MR: LOC_PROT_ERR, the registration in effect unchanged, the refused key refused",
	  shca_ulp_case_reg_valid },
	{ "ib_map_mr_sg on a valid MR, REG_MR refused: the registration in effect still reaches its own pages",
	  shca_ulp_case_map_valid },
	{ "SEND_WITH_INV naming an MR of another PD: REM_INV_REQ_ERR both sides, that MR and the QP's own stay valid",
	  shca_ulp_case_sendinv_pd },
	{ "SEND_WITH_INV naming a stale key: REM_INV_REQ_ERR both sides, the current registration still works",
	  shca_ulp_case_sendinv_stale },
	{ "REG_MR/invalidate cycles (chained REG_MR + SEND, WRITE, READ, SEND_WITH_INV or LOCAL_INV) with data checks",
	  shca_ulp_case_cycles },
	{ "a completion handler posting to its own QP: 100 SENDs each answered from the receiving CQ's handler",
	  shca_ulp_case_echo },
};

static const struct shca_ulp_case shca_ulp_race_cases[] = {
	{ "race: 1 MiB RDMA WRITE against LOCAL_INV (same QP, another QP of the PD): no byte lands after the LOCAL_INV completed",
	  shca_ulp_case_race_write },
	{ "race: 1 MiB RDMA READ against LOCAL_INV (same QP, another QP of the PD): no byte written after the LOCAL_INV completed is read",
	  shca_ulp_case_race_read },
};

/*
 * After a failed case nothing about the MR under test is known: replace
 * it by a new one, and reconnect both pairs.
 */
static void shca_ulp_recover(struct shca_ulp_test *t)
{
	struct ib_mr *mr;

	shca_ulp_reconnect(t, &t->p1);
	shca_ulp_reconnect(t, &t->p2);
	mr = ib_alloc_mr(t->p1.a.pd, IB_MR_TYPE_MEM_REG, t->tb.npages);
	if (IS_ERR(mr))
		return;
	ib_dereg_mr(t->tb.mr);
	t->tb.mr = mr;
	t->tb.valid = false;
}

/* Leave the MR under test free for the next case. */
static void shca_ulp_case_end(struct shca_ulp_test *t)
{
	if (t->failed)
		shca_ulp_recover(t);
	else if (t->tb.valid)
		shca_ulp_local_inv(t, &t->p1.a, &t->tb, t->tb.key,
				   IB_WC_SUCCESS);
	if (t->tb2.valid)
		shca_ulp_local_inv(t, &t->p2.a, &t->tb2, t->tb2.key,
				   IB_WC_SUCCESS);
}

static void shca_ulp_run(struct shca_ulp_test *t,
			 const struct shca_ulp_case *cases, unsigned int n)
{
	unsigned int i;

	shca_ulp_say("1..%u", n);
	for (i = 0; i < n; i++) {
		t->failed = false;
		t->ndiag = 0;
		cases[i].run(t);
		shca_ulp_case_end(t);
		t->ncase++;
		if (t->failed)
			t->nfail++;
		shca_ulp_say("%sok %u - %s", t->failed ? "not " : "", i + 1,
			     cases[i].name);
	}
	shca_ulp_say("# %u of %u cases failed", t->nfail, t->ncase);
}

static int __init shca_ulp_init(void)
{
	struct shca_ulp_test *t;
	int ret;

	shca_ulp_out = kvzalloc(SHCA_ULP_OUT_SIZE, GFP_KERNEL);
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!shca_ulp_out || !t) {
		ret = -ENOMEM;
		goto err;
	}
	ret = shca_ulp_setup(t);
	if (ret)
		goto err;
	if (race)
		shca_ulp_run(t, shca_ulp_race_cases,
			     ARRAY_SIZE(shca_ulp_race_cases));
	else
		shca_ulp_run(t, shca_ulp_cases, ARRAY_SIZE(shca_ulp_cases));
	shca_ulp_teardown(t);
	kfree(t);
	shca_ulp_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("results", 0444, shca_ulp_dir, NULL,
			    &shca_ulp_results_fops);
	return 0;

err:
	if (t)
		shca_ulp_teardown(t);
	kfree(t);
	kvfree(shca_ulp_out);
	shca_ulp_out = NULL;
	return ret;
}

static void __exit shca_ulp_exit(void)
{
	debugfs_remove_recursive(shca_ulp_dir);
	kvfree(shca_ulp_out);
}

module_init(shca_ulp_init);
module_exit(shca_ulp_exit);

MODULE_AUTHOR("shca developers");
MODULE_DESCRIPTION("shca: FRWR and invalidation as kernel ULPs use them (selftest module)");
MODULE_LICENSE("GPL");
