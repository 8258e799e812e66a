// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_abifuzz_test: random creation and query calls with random and
 * boundary arguments (QPs are in shca_abifuzz_qp.c).  A create or query
 * must not succeed with arguments past what the device reports, nor an
 * MR registration over memory the access asked for cannot reach.
 */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "shca_abifuzz.h"

static struct fz_obj *new_obj(struct fz_pool *p, int kind, int i, void *obj,
			      int dev)
{
	struct fz_obj *o = &p->o[kind][i];

	memset(o, 0, sizeof(*o));
	o->p = obj;
	o->dev = dev;
	o->pd = o->cq = o->rcq = o->ch = o->srq = o->pd2 = -1;
	return o;
}

/* ---- create --------------------------------------------------------- */

void op_alloc_pd(struct fz_pool *p)
{
	int i = pick_free(p, K_PD), d = rnd(&p->rng, G.ndev);
	struct ibv_pd *pd;

	if (i < 0)
		return;
	fz_doing("alloc_pd");
	pd = ibv_alloc_pd(G.dev[d].ctx);
	p->calls++;
	fz_tr(p, "alloc_pd dev%d -> pd%d %s", d, i, pd ? "ok" : "fail");
	if (pd)
		new_obj(p, K_PD, i, pd, d);
}

/* Where an MR goes: in this pool's arena part or somewhere it cannot */
enum { MA_ALIGNED, MA_UNALIGNED, MA_ZERO, MA_NONE, MA_RO, MA_NULL,
       MA_KERNEL, MA_HUGE, MA_WRAP, MA_N };

static unsigned int rnd_access(struct fz_rng *r)
{
	static const unsigned int sane[] = {
		IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND,
		IBV_ACCESS_REMOTE_READ,
		0,
		IBV_ACCESS_REMOTE_WRITE,	/* invalid: no LOCAL_WRITE */
		IBV_ACCESS_REMOTE_ATOMIC,	/* invalid: no LOCAL_WRITE */
	};

	if (chance(r, 85))
		return sane[rnd(r, ARRAY_SIZE(sane))];
	return (unsigned int)rnd64(r) & (chance(r, 50) ? 0x1f : 0xffffffffU);
}

static bool access_invalid(unsigned int acc)
{
	return (acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	       !(acc & IBV_ACCESS_LOCAL_WRITE);
}

static bool access_writes(unsigned int acc)
{
	return acc & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		      IBV_ACCESS_REMOTE_ATOMIC);
}

/* An address and length for an MR; true when no registration may work. */
static bool mr_place(struct fz_pool *p, int how, unsigned int acc,
		     uint8_t **addr, size_t *len)
{
	struct fz_rng *r = &p->rng;
	size_t room = p->arena_len;

	switch (how) {
	case MA_ALIGNED:
		*len = 4096 * (1 + rnd(r, (uint32_t)(room / 4096 / 4)));
		*addr = G.arena + p->arena_off +
			4096 * rnd(r, (uint32_t)((room - *len) / 4096 + 1));
		return false;
	case MA_UNALIGNED:
		*len = 1 + rnd(r, (uint32_t)(room / 4));
		*addr = G.arena + p->arena_off + rnd(r, (uint32_t)(room - *len));
		return false;
	case MA_ZERO:
		*addr = G.arena + p->arena_off + rnd(r, 4096);
		*len = 0;
		return false;		/* either answer is fine */
	case MA_NONE:
		/* pinned with FOLL_FORCE when nothing may write it */
		*addr = G.none_page + rnd(r, 64);
		*len = 1 + rnd(r, 4000);
		return access_writes(acc);
	case MA_RO:
		*addr = G.ro_page + rnd(r, 2048);
		*len = 1 + rnd(r, 2048);
		return access_writes(acc);
	case MA_NULL:
		*addr = NULL;
		*len = 4096;
		return true;
	case MA_KERNEL:
		*addr = (uint8_t *)0xffff888000000000ULL;
		*len = 4096;
		return true;
	case MA_HUGE:
		*addr = G.arena + p->arena_off;
		*len = (size_t)1 << (40 + rnd(r, 8));
		return true;
	default:
		*addr = (uint8_t *)(uintptr_t)(0ULL - 4096 * (1 + rnd(r, 4)));
		*len = 1 << 20;
		return true;
	}
}

void op_reg_mr(struct fz_pool *p)
{
	int i = pick_free(p, K_MR), pd = pick(p, K_PD, -1);
	unsigned int acc = rnd_access(&p->rng);
	int how = chance(&p->rng, 60) ? (int)rnd(&p->rng, 2) :
		  (int)rnd(&p->rng, MA_N);
	bool must_fail;
	struct ibv_mr *mr;
	uint8_t *addr;
	size_t len;

	if (i < 0 || pd < 0)
		return;
	must_fail = mr_place(p, how, acc, &addr, &len) ||
		    access_invalid(acc);
	fz_doing("reg_mr");
	mr = ibv_reg_mr(p->o[K_PD][pd].p, addr, len, (int)acc);
	p->calls++;
	fz_tr(p, "reg_mr pd%d addr %p len %#zx access %#x -> %s", pd,
	      (void *)addr, len, acc, mr ? "ok" : strerror(errno));
	if (!mr)
		return;
	if (must_fail)
		fz_bad("reg_mr(addr %p, len %#zx, access %#x, case %d) succeeded",
		       (void *)addr, len, acc, how);
	if (mr->addr != addr || mr->length != len)
		fz_bad("reg_mr: MR says addr %p len %#zx, asked %p %#zx",
		       mr->addr, mr->length, (void *)addr, len);
	new_obj(p, K_MR, i, mr, p->o[K_PD][pd].dev)->pd = pd;
}

void op_rereg_mr(struct fz_pool *p)
{
	int i = pick(p, K_MR, -1), pd, flags, how, ret;
	unsigned int acc = rnd_access(&p->rng);
	struct fz_obj *o;
	bool bad;
	uint8_t *addr;
	size_t len;

	if (i < 0)
		return;
	o = &p->o[K_MR][i];
	pd = pick(p, K_PD, o->dev);
	flags = (int)rnd(&p->rng, 8);
	if (chance(&p->rng, 5))
		flags |= 1 << rnd(&p->rng, 31);
	how = chance(&p->rng, 70) ? (int)rnd(&p->rng, 2) :
	      (int)rnd(&p->rng, MA_N);
	bad = mr_place(p, how, acc, &addr, &len);
	if ((flags & IBV_REREG_MR_CHANGE_PD) && pd < 0)
		return;
	fz_doing("rereg_mr");
	ret = ibv_rereg_mr(o->p, flags, pd >= 0 ? p->o[K_PD][pd].p : NULL,
			   addr, len, (int)acc);
	p->calls++;
	fz_tr(p, "rereg_mr mr%d flags %#x pd%d addr %p len %#zx acc %#x -> %d",
	      i, flags, pd, (void *)addr, len, acc, ret);
	if (!(flags & IBV_REREG_MR_CHANGE_PD))
		return;
	if (ret == 0 && !(flags & ~7)) {
		if (bad && (flags & IBV_REREG_MR_CHANGE_TRANSLATION))
			fz_bad("rereg_mr to addr %p len %#zx succeeded",
			       (void *)addr, len);
		o->pd = pd;
		o->pd2 = -1;
	} else if (o->pd != pd) {
		/* a failed re-registration: either PD, as far as we know */
		o->pd2 = pd;
	}
}

void op_alloc_mw(struct fz_pool *p)
{
	static const int types[] = { IBV_MW_TYPE_1, IBV_MW_TYPE_2, 0, 3, 255 };
	int i = pick_free(p, K_MW), pd = pick(p, K_PD, -1);
	int type = chance(&p->rng, 85) ? 1 + (int)rnd(&p->rng, 2) :
		   types[rnd(&p->rng, ARRAY_SIZE(types))];
	struct ibv_mw *mw;

	if (i < 0 || pd < 0)
		return;
	fz_doing("alloc_mw");
	mw = ibv_alloc_mw(p->o[K_PD][pd].p, type);
	p->calls++;
	fz_tr(p, "alloc_mw pd%d type %d -> %s", pd, type, mw ? "ok" : "fail");
	if (!mw)
		return;
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		fz_bad("alloc_mw of type %d succeeded", type);
	new_obj(p, K_MW, i, mw, p->o[K_PD][pd].dev)->pd = pd;
	p->o[K_MW][i].type = type;
}

void op_create_ch(struct fz_pool *p)
{
	int i = pick_free(p, K_CH), d = rnd(&p->rng, G.ndev);
	struct ibv_comp_channel *ch;

	if (i < 0)
		return;
	fz_doing("create_comp_channel");
	ch = ibv_create_comp_channel(G.dev[d].ctx);
	p->calls++;
	if (!ch)
		return;
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	new_obj(p, K_CH, i, ch, d);
}

void op_create_cq(struct fz_pool *p)
{
	struct fz_rng *r = &p->rng;
	int i = pick_free(p, K_CQ), d = rnd(r, G.ndev), ch = -1;
	const struct fz_dev *dv = &G.dev[d];
	int cqe = (int)boundary(r, (uint32_t)dv->attr.max_cqe, 256);
	int nvec = dv->ctx->num_comp_vectors;
	int vec = chance(r, 80) ? (int)rnd(r, (uint32_t)nvec) :
		  (chance(r, 50) ? nvec : (int)rnd64(r));
	bool must_fail = cqe < 0 || cqe > dv->attr.max_cqe || vec < 0 ||
			 vec >= nvec;
	bool ex = chance(r, 25);
	struct ibv_cq *cq;

	if (i < 0)
		return;
	/* the largest CQ costs max_cqe * 64 bytes: rarely */
	if (cqe == dv->attr.max_cqe && !chance(r, 3))
		cqe = 4096;
	if (chance(r, 30))
		ch = pick(p, K_CH, d);
	fz_doing("create_cq");
	if (ex) {
		struct ibv_cq_init_attr_ex a = {
			.cqe = (uint32_t)cqe,
			.channel = ch >= 0 ? p->o[K_CH][ch].p : NULL,
			.comp_vector = (uint32_t)vec,
			.wc_flags = rnd64(r) & (chance(r, 80) ? 0x7f : ~0ULL),
			.comp_mask = chance(r, 90) ? 0 : (uint32_t)rnd64(r),
		};
		struct ibv_cq_ex *cx = ibv_create_cq_ex(dv->ctx, &a);

		cq = cx ? ibv_cq_ex_to_cq(cx) : NULL;
	} else {
		cq = ibv_create_cq(dv->ctx, cqe, NULL,
				   ch >= 0 ? p->o[K_CH][ch].p : NULL, vec);
	}
	p->calls++;
	fz_tr(p, "create_cq%s dev%d cqe %d ch%d vec %d -> %s", ex ? "_ex" : "",
	      d, cqe, ch, vec, cq ? "ok" : strerror(errno));
	if (!cq)
		return;
	if (must_fail)
		fz_bad("create_cq(cqe %d, comp_vector %d) succeeded (max_cqe %d, %d vectors)",
		       cqe, vec, dv->attr.max_cqe, nvec);
	if (cq->cqe < cqe)
		fz_bad("create_cq(%d) gave a CQ of %d", cqe, cq->cqe);
	new_obj(p, K_CQ, i, cq, d)->ch = ch;
	/* a huge one goes at once */
	if (cqe > 65536) {
		fz_doing("destroy_cq");
		if (ibv_destroy_cq(cq))
			fz_bad("destroy of an unused CQ failed: %s",
			       strerror(errno));
		p->calls++;
		p->o[K_CQ][i].p = NULL;
	}
}

void op_resize_cq(struct fz_pool *p)
{
	int i = pick(p, K_CQ, -1), cqe, ret;
	const struct fz_dev *dv;
	struct ibv_cq *cq;

	if (i < 0)
		return;
	cq = p->o[K_CQ][i].p;
	dv = &G.dev[p->o[K_CQ][i].dev];
	cqe = (int)boundary(&p->rng, (uint32_t)dv->attr.max_cqe, 512);
	if (cqe == dv->attr.max_cqe)
		cqe = 2048;
	fz_doing("resize_cq");
	ret = ibv_resize_cq(cq, cqe);
	p->calls++;
	fz_tr(p, "resize_cq cq%d %d -> %d", i, cqe, ret);
	if (ret)
		return;
	if (cqe < 0 || cqe > dv->attr.max_cqe)
		fz_bad("resize_cq(%d) succeeded (max_cqe %d)", cqe,
		       dv->attr.max_cqe);
	if (cq->cqe < cqe)
		fz_bad("resize_cq(%d) gave a CQ of %d", cqe, cq->cqe);
}

void op_create_srq(struct fz_pool *p)
{
	struct fz_rng *r = &p->rng;
	int i = pick_free(p, K_SRQ), pd = pick(p, K_PD, -1);
	struct ibv_srq_init_attr a = {};
	const struct fz_dev *dv;
	struct ibv_srq *srq;
	uint32_t wr, sge;

	if (i < 0 || pd < 0)
		return;
	dv = &G.dev[p->o[K_PD][pd].dev];
	wr = boundary(r, (uint32_t)dv->attr.max_srq_wr, 64);
	sge = boundary(r, (uint32_t)dv->attr.max_srq_sge, 4);
	if (wr == (uint32_t)dv->attr.max_srq_wr && chance(r, 80))
		wr = 128;
	a.attr.max_wr = wr;
	a.attr.max_sge = sge;
	a.attr.srq_limit = boundary(r, wr, 16);
	fz_doing("create_srq");
	srq = ibv_create_srq(p->o[K_PD][pd].p, &a);
	p->calls++;
	fz_tr(p, "create_srq pd%d wr %u sge %u limit %u -> %s", pd, wr, sge,
	      a.attr.srq_limit, srq ? "ok" : strerror(errno));
	if (!srq)
		return;
	if (wr > (uint32_t)dv->attr.max_srq_wr ||
	    sge > (uint32_t)dv->attr.max_srq_sge)
		fz_bad("create_srq(max_wr %u, max_sge %u) succeeded (max %d, %d)",
		       wr, sge, dv->attr.max_srq_wr, dv->attr.max_srq_sge);
	if (a.attr.max_wr < wr || a.attr.max_sge < sge)
		fz_bad("create_srq(%u, %u) granted %u, %u", wr, sge,
		       a.attr.max_wr, a.attr.max_sge);
	new_obj(p, K_SRQ, i, srq, dv - G.dev)->pd = pd;
	p->o[K_SRQ][i].srq_wr = a.attr.max_wr;
	p->o[K_SRQ][i].srq_sge = a.attr.max_sge;
}

void op_srq_misc(struct fz_pool *p)
{
	int i = pick(p, K_SRQ, -1), mask, ret;
	struct ibv_srq_attr a = {};
	const struct fz_dev *dv;

	if (i < 0)
		return;
	dv = &G.dev[p->o[K_SRQ][i].dev];
	if (chance(&p->rng, 40)) {
		fz_doing("query_srq");
		ret = ibv_query_srq(p->o[K_SRQ][i].p, &a);
		p->calls++;
		if (!ret && (a.max_wr > (uint32_t)dv->attr.max_srq_wr ||
			     a.srq_limit > a.max_wr))
			fz_bad("query_srq: max_wr %u limit %u (device max %d)",
			       a.max_wr, a.srq_limit, dv->attr.max_srq_wr);
		return;
	}
	mask = (int)rnd(&p->rng, 4);
	if (chance(&p->rng, 5))
		mask = (int)rnd64(&p->rng);
	a.max_wr = boundary(&p->rng, (uint32_t)dv->attr.max_srq_wr, 256);
	if (a.max_wr == (uint32_t)dv->attr.max_srq_wr)
		a.max_wr = 512;
	a.srq_limit = boundary(&p->rng, p->o[K_SRQ][i].srq_wr, 32);
	fz_doing("modify_srq");
	ret = ibv_modify_srq(p->o[K_SRQ][i].p, &a, mask);
	p->calls++;
	fz_tr(p, "modify_srq srq%d mask %#x wr %u limit %u -> %d", i, mask,
	      a.max_wr, a.srq_limit, ret);
	if (!ret && (mask & IBV_SRQ_MAX_WR) &&
	    a.max_wr > (uint32_t)dv->attr.max_srq_wr)
		fz_bad("modify_srq resize to %u succeeded (max %d)", a.max_wr,
		       dv->attr.max_srq_wr);
}

void op_create_ah(struct fz_pool *p)
{
	struct fz_rng *r = &p->rng;
	int i = pick_free(p, K_AH), pd = pick(p, K_PD, -1), d;
	struct ibv_ah_attr a = {};
	const struct fz_dev *dv;
	bool must_fail;
	struct ibv_ah *ah;

	if (i < 0 || pd < 0)
		return;
	d = p->o[K_PD][pd].dev;
	dv = &G.dev[d];
	a.is_global = chance(r, 90);
	a.port_num = chance(r, 90) ? 1 : (uint8_t)rnd(r, 256);
	a.grh.sgid_index = chance(r, 80) ? (uint8_t)dv->gidx :
			   (uint8_t)boundary(r, (uint32_t)dv->port.gid_tbl_len,
					     4);
	a.grh.hop_limit = (uint8_t)rnd(r, 256);
	a.grh.traffic_class = (uint8_t)rnd(r, 256);
	a.grh.flow_label = (uint32_t)rnd64(r);
	a.sl = (uint8_t)rnd(r, 256);
	a.static_rate = (uint8_t)rnd(r, 32);
	a.dlid = (uint16_t)rnd(r, 65536);
	switch (rnd(r, 6)) {
	case 0: case 1: case 2:
		a.grh.dgid = G.dev[rnd(r, G.ndev)].gid;
		break;
	case 3:
		break;			/* the zero GID */
	case 4:
		a.grh.dgid.raw[0] = 0xff;	/* multicast */
		a.grh.dgid.raw[1] = 0x02;
		a.grh.dgid.raw[15] = 1;
		break;
	default:
		/* an IPv6 address nothing routes to: refused without waiting */
		a.grh.dgid.raw[0] = 0x3f;
		a.grh.dgid.raw[1] = 0xfe;
		a.grh.dgid.raw[15] = (uint8_t)rnd(r, 256);
		break;
	}
	must_fail = a.port_num != 1 ||
		    (a.is_global && a.grh.sgid_index >= dv->port.gid_tbl_len);
	fz_doing("create_ah");
	ah = ibv_create_ah(p->o[K_PD][pd].p, &a);
	p->calls++;
	fz_tr(p, "create_ah pd%d port %u global %u sgid %u -> %s", pd,
	      a.port_num, a.is_global, a.grh.sgid_index,
	      ah ? "ok" : strerror(errno));
	if (!ah)
		return;
	if (must_fail)
		fz_bad("create_ah(port %u, sgid_index %u) succeeded", a.port_num,
		       a.grh.sgid_index);
	new_obj(p, K_AH, i, ah, d)->pd = pd;
}

void op_query(struct fz_pool *p)
{
	struct fz_rng *r = &p->rng;
	const struct fz_dev *dv = &G.dev[rnd(r, G.ndev)];
	struct ibv_device_attr_ex ax;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	uint8_t port = chance(r, 80) ? 1 : (uint8_t)rnd(r, 256);
	int idx = (int)boundary(r, (uint32_t)dv->port.gid_tbl_len, 8);
	uint16_t pkey;
	int ret;

	fz_doing("query");
	switch (rnd(r, 5)) {
	case 0:
		ret = ibv_query_device_ex(dv->ctx, NULL, &ax);
		if (!ret && memcmp(&ax.orig_attr, &dv->attr, sizeof(dv->attr)))
			fz_bad("query_device_ex: attributes changed");
		break;
	case 1:
		ret = ibv_query_port(dv->ctx, port, &pa);
		if (!ret && port != 1)
			fz_bad("query_port(%u) succeeded", port);
		break;
	case 2:
		ret = ibv_query_gid(dv->ctx, port, idx, &gid);
		if (!ret && (port != 1 || idx < 0 ||
			     idx >= dv->port.gid_tbl_len))
			fz_bad("query_gid(%u, %d) succeeded (%d GIDs)", port,
			       idx, dv->port.gid_tbl_len);
		break;
	case 3:
		ret = ibv_query_pkey(dv->ctx, port, idx, &pkey);
		if (!ret && (port != 1 || idx < 0 ||
			     idx >= dv->port.pkey_tbl_len))
			fz_bad("query_pkey(%u, %d) succeeded (%d P_Keys)",
			       port, idx, dv->port.pkey_tbl_len);
		break;
	default:
		pool_async_drain(p);
		break;
	}
	p->calls++;
}

void pool_async_drain(const struct fz_pool *p)
{
	if (!p->no_events)
		fz_async_drain();
}

