// SPDX-License-Identifier: GPL-2.0
/*
 * shca_dm_producer - a kernel producer of shca device memory: acts as an
 * I/O device writing into an address range of a shca device's window
 * through the functions shca exports (kernel/verbs/shca_kdm.h).
 *
 * Loaded only by tests/selftests/dm.sh, with dev= (a shca device) and
 * gid= (its RoCEv2 GID index).  Module init connects two RC QPs of that
 * device to each other (loopback through the device), then:
 *  - DRDMA WRITE: a range armed for 64 KiB; an RDMA WRITE from an MR over
 *    it to the peer's memory (a second range, with remote rights) is
 *    posted before the data exists and must not complete; the "device" (a work item) writes the data into the
 *    range's pages in four pieces and commits each; the WRITE then
 *    completes and the peer's memory holds the data; a commit past the total
 *    and freeing the range under its MR are refused;
 *  - DRDMA READ: a range armed for 20000 bytes; an RDMA READ into it
 *    lands, read_len and both valid bits say so, the pages hold the data.
 * Each case prints one TAP line; init fails (-EIO) if any case failed,
 * after releasing everything.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include "shca_kdm.h"

static char *dev;
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "the shca device");

static uint gid;
module_param(gid, uint, 0444);
MODULE_PARM_DESC(gid, "its RoCEv2 GID index (port 1)");

#define WLEN	(64 * 1024)
#define PIECES	4
#define RLEN	20000
#define PORT	1

struct dmp {
	struct ib_device *dev;
	const struct ib_gid_attr *gattr;
	u8 mac[ETH_ALEN];
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp[2];
	struct shca_kdm *tgt;
	struct ib_mr *tmr;
	int failed;
	int n;
	struct work_struct produce;
	struct shca_kdm *kdm;
	int produce_err;
};

static void dmp_result(struct dmp *t, bool ok, const char *what)
{
	t->n++;
	if (!ok)
		t->failed++;
	pr_info("%sok %d - %s\n", ok ? "" : "not ", t->n, what);
}

static u8 dmp_byte(u32 seed, u32 off)
{
	return (u8)((off * 2654435761U + seed) >> 13);
}

static int dmp_qp_rts(struct dmp *t, struct ib_qp *qp, struct ib_qp *peer)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = PORT,
		.qp_access_flags = IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_WRITE,
	};
	int ret;

	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = peer->qp_num;
	a.rq_psn = 7;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.type = rdma_ah_find_type(t->dev, PORT);
	rdma_ah_set_port_num(&a.ah_attr, PORT);
	rdma_ah_set_grh(&a.ah_attr, (union ib_gid *)&t->gattr->gid, 0,
			t->gattr->index, 64, 0);
	ether_addr_copy(a.ah_attr.roce.dmac, t->mac);
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 17;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 7;
	a.max_rd_atomic = 4;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static int dmp_setup(struct dmp *t)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct net_device *ndev;
	int i, ret;

	t->dev = ib_device_get_by_name(dev ? dev : "", RDMA_DRIVER_UNKNOWN);
	if (!t->dev)
		return -ENODEV;
	t->gattr = rdma_get_gid_attr(t->dev, PORT, gid);
	if (IS_ERR(t->gattr)) {
		ret = PTR_ERR(t->gattr);
		t->gattr = NULL;
		return ret;
	}
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(t->gattr);
	if (!IS_ERR(ndev))
		ether_addr_copy(t->mac, ndev->dev_addr);
	rcu_read_unlock();
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	t->pd = ib_alloc_pd(t->dev, 0);
	if (IS_ERR(t->pd)) {
		ret = PTR_ERR(t->pd);
		t->pd = NULL;
		return ret;
	}
	t->cq = ib_alloc_cq(t->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(t->cq)) {
		ret = PTR_ERR(t->cq);
		t->cq = NULL;
		return ret;
	}
	init.send_cq = t->cq;
	init.recv_cq = t->cq;
	for (i = 0; i < 2; i++) {
		t->qp[i] = ib_create_qp(t->pd, &init);
		if (IS_ERR(t->qp[i])) {
			ret = PTR_ERR(t->qp[i]);
			t->qp[i] = NULL;
			return ret;
		}
	}
	ret = dmp_qp_rts(t, t->qp[0], t->qp[1]);
	if (!ret)
		ret = dmp_qp_rts(t, t->qp[1], t->qp[0]);
	if (ret)
		return ret;
	/* the peer's memory: device memory too, with remote rights */
	t->tgt = shca_kdm_alloc(t->dev, WLEN);
	if (IS_ERR(t->tgt)) {
		ret = PTR_ERR(t->tgt);
		t->tgt = NULL;
		return ret;
	}
	t->tmr = shca_kdm_reg_mr(t->pd, t->tgt, 0, WLEN,
				 IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
				 IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(t->tmr)) {
		ret = PTR_ERR(t->tmr);
		t->tmr = NULL;
		return ret;
	}
	return 0;
}

static void dmp_teardown(struct dmp *t)
{
	int i;

	for (i = 0; i < 2; i++)
		if (t->qp[i])
			ib_destroy_qp(t->qp[i]);
	if (t->cq)
		ib_free_cq(t->cq);
	if (t->tmr)
		ib_dereg_mr(t->tmr);
	if (t->tgt)
		shca_kdm_free(t->tgt);
	if (t->pd)
		ib_dealloc_pd(t->pd);
	if (t->gattr)
		rdma_put_gid_attr(t->gattr);
	if (t->dev)
		ib_device_put(t->dev);
}

/* One completion within @ms: its status, or -ETIMEDOUT. */
static int dmp_poll(struct dmp *t, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct ib_wc wc;

	do {
		if (ib_poll_cq(t->cq, 1, &wc) == 1)
			return wc.status;
		usleep_range(200, 400);
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

static int dmp_post(struct dmp *t, enum ib_wr_opcode op, u32 lkey, u32 len)
{
	struct ib_sge sge = { .addr = 0, .length = len, .lkey = lkey };
	struct ib_rdma_wr wr = {
		.wr = { .opcode = op, .sg_list = &sge, .num_sge = 1,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0,
		.rkey = t->tmr->rkey,
	};

	return ib_post_send(t->qp[0], &wr.wr, NULL);
}

/* Write @len bytes of pattern @seed at @off of @kdm's pages. */
static void dmp_write_pages(struct shca_kdm *kdm, u32 off, u32 len, u32 seed)
{
	struct page **pages;
	u32 npages, i;

	pages = shca_kdm_pages(kdm, &npages);
	for (i = off; i < off + len; i++) {
		u8 *p = kmap_local_page(pages[i >> PAGE_SHIFT]);

		p[offset_in_page(i)] = dmp_byte(seed, i);
		kunmap_local(p);
	}
}

/* @kdm's first @len bytes hold pattern @seed (0: zeros). */
static bool dmp_pages_are(struct shca_kdm *kdm, u32 len, u32 seed)
{
	struct page **pages;
	u32 npages, i;
	bool same = true;

	pages = shca_kdm_pages(kdm, &npages);
	for (i = 0; i < len && same; i++) {
		u8 *p = kmap_local_page(pages[i >> PAGE_SHIFT]);

		same = p[offset_in_page(i)] == (seed ? dmp_byte(seed, i) : 0);
		kunmap_local(p);
	}
	return same;
}

/* The I/O device: the data in four pieces, each committed. */
static void dmp_produce(struct work_struct *work)
{
	struct dmp *t = container_of(work, struct dmp, produce);
	u32 piece = WLEN / PIECES, off;

	for (off = 0; off < WLEN && !t->produce_err; off += piece) {
		dmp_write_pages(t->kdm, off, piece, 1);
		t->produce_err = shca_kdm_commit(t->kdm, piece, NULL);
		msleep(20);
	}
}

static void dmp_case_write(struct dmp *t)
{
	struct shca_arr_reg r;
	struct ib_mr *mr;
	u32 count = 0;
	int st;

	t->kdm = shca_kdm_alloc(t->dev, WLEN);
	if (IS_ERR(t->kdm)) {
		dmp_result(t, false, "DRDMA WRITE: a range for the producer");
		t->kdm = NULL;
		return;
	}
	mr = shca_kdm_reg_mr(t->pd, t->kdm, 0, WLEN, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(mr) || shca_kdm_arm(t->kdm, SHCA_ARR_DIR_WRITE, 0, WLEN) ||
	    dmp_post(t, IB_WR_RDMA_WRITE, mr->lkey, WLEN)) {
		dmp_result(t, false, "DRDMA WRITE: MR, arm and post");
		goto out;
	}
	st = dmp_poll(t, 200);
	shca_kdm_regs(t->kdm, &r);
	dmp_result(t, st == -ETIMEDOUT && r.waiting == 1 &&
		   dmp_pages_are(t->tgt, WLEN, 0),
		   "the WRITE waits for the producer, nothing sent");
	dmp_result(t, shca_kdm_free(t->kdm) == -EBUSY,
		   "freeing the range under its MR is EBUSY");

	INIT_WORK(&t->produce, dmp_produce);
	schedule_work(&t->produce);
	st = dmp_poll(t, 20000);
	flush_work(&t->produce);
	shca_kdm_regs(t->kdm, &r);
	dmp_result(t, !t->produce_err && st == IB_WC_SUCCESS &&
		   dmp_pages_are(t->tgt, WLEN, 1) && r.write_count == WLEN &&
		   r.flags == SHCA_ARR_F_PKT_VALID,
		   "the device's four commits send it; the data is at the peer");
	dmp_result(t, shca_kdm_commit(t->kdm, 4, &count) == -EINVAL &&
		   count == WLEN, "a commit past the total is EINVAL");
out:
	if (!IS_ERR_OR_NULL(mr))
		ib_dereg_mr(mr);
	if (shca_kdm_free(t->kdm))
		dmp_result(t, false, "the range is freed after its MR");
	t->kdm = NULL;
}

static void dmp_case_read(struct dmp *t)
{
	struct shca_arr_reg r;
	struct ib_mr *mr;
	int st = -1;

	dmp_write_pages(t->tgt, 0, RLEN, 2);
	t->kdm = shca_kdm_alloc(t->dev, RLEN);
	if (IS_ERR(t->kdm)) {
		dmp_result(t, false, "DRDMA READ: a range");
		t->kdm = NULL;
		return;
	}
	mr = shca_kdm_reg_mr(t->pd, t->kdm, 0, RLEN, IB_ACCESS_LOCAL_WRITE);
	if (!IS_ERR(mr) && !shca_kdm_arm(t->kdm, SHCA_ARR_DIR_READ, 0, RLEN) &&
	    !dmp_post(t, IB_WR_RDMA_READ, mr->lkey, RLEN))
		st = dmp_poll(t, 20000);
	shca_kdm_regs(t->kdm, &r);
	dmp_result(t, st == IB_WC_SUCCESS && dmp_pages_are(t->kdm, RLEN, 2) &&
		   r.read_len == RLEN &&
		   r.flags == (SHCA_ARR_F_BUS_VALID | SHCA_ARR_F_PKT_VALID),
		   "a DRDMA READ lands in the range: read_len, valid bits, data");
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	shca_kdm_free(t->kdm);
	t->kdm = NULL;
}

static int __init dmp_init(void)
{
	struct dmp *t = kzalloc(sizeof(*t), GFP_KERNEL);
	int ret;

	if (!t)
		return -ENOMEM;
	ret = dmp_setup(t);
	if (ret) {
		pr_err("setup on %s failed: %d\n", dev ? dev : "(none)", ret);
		goto out;
	}
	dmp_case_write(t);
	dmp_case_read(t);
	pr_info("1..%d\n", t->n);
	ret = t->failed ? -EIO : 0;
out:
	dmp_teardown(t);
	kfree(t);
	return ret;
}

static void __exit dmp_exit(void)
{
}

module_init(dmp_init);
module_exit(dmp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("shca selftest: a kernel producer of device memory (DRDMA)");
