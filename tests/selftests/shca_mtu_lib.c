// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Helpers of shca_mtu_test (declared in shca_mtu.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>
#include <infiniband/verbs.h>

#include "shca_mtu.h"

void nap(void)
{
	struct timespec ts = { 0, 200000 };

	nanosleep(&ts, NULL);
}

/* ---- counters and loss -------------------------------------------- */

long long counter(int dev, const char *name)
{
	unsigned long long v;

	if (!ctr_read(g.dev[dev].name, name, &v)) {
		failf("cannot read counter %s of %s", name, g.dev[dev].name);
		return -1;
	}
	return (long long)v;
}

/*
 * Loss is switched with route netlink messages on sockets opened in each
 * side's namespace: spawning tc takes seconds on a loaded emulated guest,
 * longer than the ACK timeouts the link may stay down.
 */
static int nl_fd[2] = { -1, -1 };
static int nl_ifindex[2];
static uint32_t nl_seq;

/* A route netlink socket in side @i's namespace, and its interface. */
bool netem_open(int i)
{
	char path[256];
	int self, fd;
	bool ok;

	snprintf(path, sizeof(path), "/run/netns/%s", g.ns[i]);
	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (self < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "cannot enter netns %s: %s\n", g.ns[i],
			strerror(errno));
		return false;
	}
	nl_fd[i] = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
			  NETLINK_ROUTE);
	nl_ifindex[i] = (int)if_nametoindex(g.ifname[i]);
	if (setns(self, CLONE_NEWNET)) {
		fprintf(stderr, "cannot return to the first netns: %s\n",
			strerror(errno));
		exit(KSFT_FAIL);
	}
	close(fd);
	close(self);
	ok = nl_fd[i] >= 0 && nl_ifindex[i] > 0;
	if (!ok)
		fprintf(stderr, "no netlink socket or no %s in %s\n",
			g.ifname[i], g.ns[i]);
	return ok;
}

static void nl_attr(struct nlmsghdr *n, unsigned short type,
		    const void *data, unsigned short len)
{
	struct rtattr *rta = (struct rtattr *)((char *)n +
					       NLMSG_ALIGN(n->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

void netem_close(void)
{
	int i;

	for (i = 0; i < 2; i++)
		if (nl_fd[i] >= 0)
			close(nl_fd[i]);
}

/*
 * Drop @pct percent of the packets side @dev sends: change the loss of the
 * root netem qdisc of its interface; returns once the kernel applied it.
 */
bool set_loss(int dev, int pct)
{
	struct {
		struct nlmsghdr n;
		struct tcmsg t;
		char attrs[128];
	} req;
	struct tc_netem_qopt q = {
		.limit = 1000,
		.loss = pct >= 100 ? UINT32_MAX :
			(uint32_t)((uint64_t)UINT32_MAX * pct / 100),
	};
	char reply[4096];
	struct nlmsghdr *h;
	ssize_t len;
	int err = -EIO;

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
	req.n.nlmsg_type = RTM_NEWQDISC;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req.n.nlmsg_seq = ++nl_seq;
	req.t.tcm_family = AF_UNSPEC;
	req.t.tcm_ifindex = nl_ifindex[dev];
	req.t.tcm_parent = TC_H_ROOT;
	nl_attr(&req.n, TCA_KIND, "netem", sizeof("netem"));
	nl_attr(&req.n, TCA_OPTIONS, &q, sizeof(q));
	if (send(nl_fd[dev], &req, req.n.nlmsg_len, 0) < 0) {
		failf("netem change on %s: send: %s", g.ifname[dev],
		      strerror(errno));
		return false;
	}
	len = recv(nl_fd[dev], reply, sizeof(reply), 0);
	for (h = (struct nlmsghdr *)reply; len > 0 && NLMSG_OK(h, len);
	     h = NLMSG_NEXT(h, len)) {
		if (h->nlmsg_type == NLMSG_ERROR && h->nlmsg_seq == nl_seq) {
			err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			break;
		}
	}
	if (err) {
		failf("netem loss %d%% on %s in %s: %s", pct, g.ifname[dev],
		      g.ns[dev], strerror(-err));
		return false;
	}
	return true;
}

/* ---- buffers -------------------------------------------------------- */

bool area_get(struct area *a, int dev, int access)
{
	memset(a, 0, sizeof(*a));
	if (posix_memalign((void **)&a->p, 4096, AREA))
		return false;
	a->exp = malloc(AREA);
	if (!a->exp)
		return false;
	memset(a->p, GUARD_BYTE, AREA);
	memset(a->exp, GUARD_BYTE, AREA);
	a->mr = ibv_reg_mr(g.dev[dev].pd, a->p, AREA, access);
	if (!a->mr) {
		failf("ibv_reg_mr on %s: %s", g.dev[dev].name, strerror(errno));
		return false;
	}
	return true;
}

void area_put(struct area *a)
{
	mr_dereg(a->mr);
	free(a->p);
	free(a->exp);
	memset(a, 0, sizeof(*a));
}

bool area_verify(const struct area *a, const char *what)
{
	size_t i, bad = 0, first = 0;

	for (i = 0; i < AREA; i++) {
		if (a->p[i] == a->exp[i])
			continue;
		if (!bad++)
			first = i;
	}
	if (bad)
		failf("%s: %zu byte(s) wrong, first at offset %zu: 0x%02x, expected 0x%02x",
		      what, bad, first, a->p[first], a->exp[first]);
	return !bad;
}

/* ---- QPs -------------------------------------------------------------- */

int pair_create(struct pair *p)
{
	struct qp_spec spec = qp_spec_simple(CQ_DEPTH, 128);

	memset(p, 0, sizeof(*p));
	if (qp_pair_create(g.dev, &spec, p->qp, p->cq))
		return -1;
	p->psn[0] = (uint32_t)random() & 0xffffff;
	p->psn[1] = (uint32_t)random() & 0xffffff;
	return 0;
}

void pair_destroy(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		qp_cqs_destroy(p->qp[i], p->cq[i], NULL, g.dev[i].name);
	memset(p, 0, sizeof(*p));
}

int pair_connect(struct pair *p, const struct qopts *o)
{
	struct rc_path path[2];
	enum ibv_qp_state at;
	int i, ret;

	for (i = 0; i < 2; i++) {
		struct rc_path r = {
			.access = QP_ACC_ALL,
			.mtu = o->mtu,
			.dest_qpn = p->qp[!i]->qp_num,
			.rq_psn = p->psn[!i],
			.sq_psn = p->psn[i],
			.dgid = g.dev[!i].gid,
			.sgid_index = g.dev[i].gidx,
			.rd_atomic = 16,
			.min_rnr_timer = 12,
			.timeout = o->timeout,
			.retry_cnt = o->retry_cnt,
			.rnr_retry = 7,
		};

		path[i] = r;
	}
	ret = rc_connect_pair(p->qp, path, &i, &at);
	if (ret)
		failf("connecting the QPs: %s", strerror(ret));
	return ret ? -1 : 0;
}

int query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a)
{
	struct ibv_qp_init_attr init;

	return ibv_query_qp(qp, a, IBV_QP_STATE | IBV_QP_PATH_MTU, &init);
}

/* Path MTU of an RTS QP: must be accepted, stay RTS and read back. */
bool set_mtu(struct ibv_qp *qp, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = { .path_mtu = mtu };
	int ret = ibv_modify_qp(qp, &a, IBV_QP_PATH_MTU);

	if (ret) {
		failf("ibv_modify_qp(IBV_QP_PATH_MTU %d) on RTS QP %u: %s",
		      mtu, qp->qp_num, strerror(ret));
		return false;
	}
	if (query_qp(qp, &a) || a.qp_state != IBV_QPS_RTS ||
	    a.path_mtu != mtu) {
		failf("QP %u after the MTU change: state %d path_mtu %d",
		      qp->qp_num, a.qp_state, a.path_mtu);
		return false;
	}
	return true;
}

/* ---- messages -------------------------------------------------------- */

static bool consumes_recv(enum ibv_wr_opcode op)
{
	return op != IBV_WR_RDMA_WRITE;
}

/* Add a message and post what it needs on B (its receive). */
bool msg_add(struct run *r, enum ibv_wr_opcode op, uint32_t len)
{
	struct msg *m = &r->m[r->n];
	bool to_rbuf = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	struct area *dst = to_rbuf ? r->rbuf : r->wbuf;
	size_t *doff = to_rbuf ? &r->rbuf_off : &r->wbuf_off;
	struct ibv_recv_wr wr = {}, *bad;
	struct ibv_sge sge;
	int ret;

	if (r->n == MAX_MSGS || r->src_off + len > AREA ||
	    *doff + len + GUARD > AREA) {
		failf("test bug: message table full");
		return false;
	}
	m->op = op;
	m->len = len;
	m->src = r->src_off;
	m->dst = *doff;
	m->recv = -1;
	pattern(r->src->p + m->src, len, (uint32_t)(r->n * 7919 + len));
	r->src_off = align64(r->src_off + len);
	*doff = align64(*doff + len + GUARD);
	memcpy(dst->exp + m->dst, r->src->p + m->src, len);
	if (consumes_recv(op)) {
		/* a receive with room for the message and nothing more */
		m->recv = r->nrecv++;
		sge.addr = (uintptr_t)(r->rbuf->p + m->dst);
		sge.length = to_rbuf ? len : 0;
		sge.lkey = r->rbuf->mr->lkey;
		wr.wr_id = 1000 + m->recv;
		wr.sg_list = &sge;
		wr.num_sge = to_rbuf ? 1 : 0;
		ret = ibv_post_recv(r->p->qp[1], &wr, &bad);
		if (ret) {
			failf("ibv_post_recv: %s", strerror(ret));
			return false;
		}
	}
	r->n++;
	return true;
}

bool msg_post(struct run *r, int i)
{
	struct msg *m = &r->m[i];
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(r->src->p + m->src),
		.length = m->len,
		.lkey = r->src->mr->lkey,
	};
	int ret;

	wr.wr_id = i;
	wr.opcode = m->op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(IMM + i);
	wr.wr.rdma.remote_addr = (uintptr_t)(r->wbuf->p + m->dst);
	wr.wr.rdma.rkey = r->wbuf->mr->rkey;
	ret = ibv_post_send(r->p->qp[0], &wr, &bad);
	if (ret)
		failf("ibv_post_send(message %d): %s", i, strerror(ret));
	return !ret;
}

/*
 * Add messages from a mix of sizes and opcodes, at most @max_pkts packets
 * at @mtu, and post them.  Returns the packets they take.
 */
uint32_t batch(struct run *r, enum ibv_mtu mtu, uint32_t max_pkts,
	       uint32_t seed)
{
	static const struct {
		enum ibv_wr_opcode op;
		uint32_t len;
	} mix[] = {
		{ IBV_WR_SEND, 65536 }, { IBV_WR_RDMA_WRITE, 12289 },
		{ IBV_WR_SEND, 3000 }, { IBV_WR_SEND, 0 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 10000 },
		{ IBV_WR_SEND_WITH_IMM, 8192 }, { IBV_WR_RDMA_WRITE, 4097 },
		{ IBV_WR_SEND, 1 }, { IBV_WR_RDMA_WRITE, 49152 },
		{ IBV_WR_SEND, 20000 }, { IBV_WR_RDMA_WRITE, 1024 },
	};
	uint32_t pkts = 0, k, i, n;
	int first = r->n;

	for (k = 0; k < ARRAY_SIZE(mix); k++) {
		i = (k + seed) % ARRAY_SIZE(mix);
		n = npkts(mix[i].len, mtu);
		if (pkts + n > max_pkts)
			continue;
		if (!msg_add(r, mix[i].op, mix[i].len))
			return 0;
		pkts += n;
	}
	for (k = (uint32_t)first; k < (uint32_t)r->n; k++)
		if (!msg_post(r, (int)k))
			return 0;
	return pkts;
}

/*
 * Wait for every message's completion on A and every receive on B;
 * each exactly once, successful, with the right opcode and length.
 */
bool wait_all(struct run *r)
{
	int seen[MAX_MSGS] = { 0 }, rseen[MAX_MSGS] = { 0 };
	int got = 0, rgot = 0, i, k, n;
	double end = now_ms() + WAIT_MS;
	struct ibv_wc wc[16];

	while ((got < r->n || rgot < r->nrecv) && now_ms() < end) {
		for (k = 0; k < 2; k++) {
			n = ibv_poll_cq(r->p->cq[k], 16, wc);
			if (n < 0) {
				failf("ibv_poll_cq: %d", n);
				return false;
			}
			for (i = 0; i < n; i++) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					failf("%s completion wr_id %llu: %s",
					      k ? "B" : "A",
					      (unsigned long long)wc[i].wr_id,
					      ibv_wc_status_str(wc[i].status));
					return false;
				}
				if (!k && wc[i].wr_id < MAX_MSGS) {
					seen[wc[i].wr_id]++;
					got++;
					continue;
				}
				if (k && wc[i].wr_id >= 1000 &&
				    wc[i].wr_id < 1000 + MAX_MSGS) {
					int rv = (int)wc[i].wr_id - 1000;

					rseen[rv]++;
					rgot++;
					for (int j = 0; j < r->n; j++) {
						struct msg *m = &r->m[j];
						bool imm = m->op !=
							   IBV_WR_SEND;

						if (m->recv != rv)
							continue;
						if (wc[i].byte_len != m->len ||
						    !!(wc[i].wc_flags &
						       IBV_WC_WITH_IMM) != imm ||
						    (imm && ntohl(wc[i].imm_data) !=
						     IMM + (uint32_t)j))
							failf("receive %d (message %d, %u bytes): byte_len %u, flags 0x%x, imm 0x%x",
							      rv, j, m->len,
							      wc[i].byte_len,
							      wc[i].wc_flags,
							      ntohl(wc[i].imm_data));
					}
					continue;
				}
				failf("unexpected completion wr_id %llu on %s",
				      (unsigned long long)wc[i].wr_id,
				      k ? "B" : "A");
			}
		}
		if (!n)
			nap();
	}
	for (i = 0; i < r->n; i++)
		if (seen[i] != 1)
			failf("message %d (%u bytes, opcode %d): %d completions",
			      i, r->m[i].len, r->m[i].op, seen[i]);
	for (i = 0; i < r->nrecv; i++)
		if (rseen[i] != 1)
			failf("receive %d: %d completions", i, rseen[i]);
	return got == r->n && rgot == r->nrecv;
}

/* Nothing more may complete for a while. */
void expect_quiet(struct pair *p)
{
	double end = now_ms() + 300;
	struct ibv_wc wc;
	int k;

	while (now_ms() < end) {
		for (k = 0; k < 2; k++)
			if (ibv_poll_cq(p->cq[k], 1, &wc) > 0)
				failf("extra completion on %s: wr_id %llu %s",
				      k ? "B" : "A",
				      (unsigned long long)wc.wr_id,
				      ibv_wc_status_str(wc.status));
		nap();
	}
}

/* A's first transmissions (packets sent that were not retransmissions). */
long long first_tx(void)
{
	return counter(0, "tx_pkts") - counter(0, "retransmit_pkts");
}

bool wait_first_tx(long long base, uint32_t pkts)
{
	double end = now_ms() + 10000;
	long long d = 0;

	while (now_ms() < end) {
		d = first_tx() - base;
		if (d >= pkts)
			break;
		nap();
	}
	if (d != pkts) {
		failf("%lld packets first sent, expected %u at the old MTU",
		      d, pkts);
		return false;
	}
	return true;
}
