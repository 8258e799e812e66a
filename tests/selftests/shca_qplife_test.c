// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_qplife_test: the kernel paths that look QPs up by number, driven
 * against QPs that are being created and destroyed.
 *
 *   shca_qplife_test walk DEVICE COUNT
 *   shca_qplife_test churn DEVICE SECONDS QPNFILE
 *   shca_qplife_test spray DEVICE DEST_IPV4 SECONDS QPNFILE
 *   shca_qplife_test qpns DEVICE COUNT
 *   shca_qplife_test ackwait DEVICE PEER_DEVICE HOLD_MS
 *
 * walk: COUNT times, create an address handle in a PD and destroy it;
 * each destroy makes the driver look up every QP of the engine (it
 * fetches what the PD's UD QPs have posted).  churn: for SECONDS, create
 * a UD QP, bring it to RTS, write its number to QPNFILE, post a few
 * receives, destroy it; and an RC QP to INIT and back.  spray: for
 * SECONDS, UD SENDs to DEST_IPV4 at the QP number in QPNFILE and its two
 * neighbours, so that packets arrive for QPs as they are created and
 * destroyed.  The shared Q_Key is 0x11111111.  qpns: create COUNT UD
 * QPs, print "qpns FIRST LAST" (the first and last one's numbers) and
 * destroy them.  ackwait: reset a QP while the ACK it owes is held
 * (shca_qplife_ack.c).
 *
 * Each prints what it did ("walks N", "qps N", "sends N") and exits 0,
 * or 1 when a verb failed (said on stderr).  The races themselves are for
 * the kernel log to show (KASAN on the debug kernel, the dmesg check).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_qplife.h"
#include "shca_test.h"

#define QKEY	0x11111111
#define DEPTH	16
#define BUF	256

static struct test_dev dev;

static int usage(void)
{
	fprintf(stderr,
		"usage: shca_qplife_test walk DEVICE COUNT\n"
		"       shca_qplife_test churn DEVICE SECONDS QPNFILE\n"
		"       shca_qplife_test spray DEVICE DEST_IPV4 SECONDS QPNFILE\n"
		"       shca_qplife_test qpns DEVICE COUNT\n"
		"       shca_qplife_test ackwait DEVICE PEER_DEVICE HOLD_MS\n");
	return 2;
}

/* an AH on @pd towards @dgid from the device's IPv4 GID */
static struct ibv_ah *ah_make(struct ibv_pd *pd, const union ibv_gid *dgid)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = dev.gidx,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &a);
}

static int walk(long count)
{
	struct ibv_ah *ah;
	long i;

	for (i = 0; i < count; i++) {
		ah = ah_make(dev.pd, &dev.gid);
		if (!ah) {
			fprintf(stderr, "ibv_create_ah: %s\n", strerror(errno));
			return 1;
		}
		if (ibv_destroy_ah(ah)) {
			fprintf(stderr, "ibv_destroy_ah: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("walks %ld\n", i);
	return 0;
}

static void qpn_write(const char *file, uint32_t qpn)
{
	char tmp[256];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", file);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%u\n", qpn);
	if (fclose(f) == 0)
		rename(tmp, file);
}

static uint32_t qpn_read(const char *file)
{
	unsigned int qpn = 0;
	FILE *f = fopen(file, "r");

	if (!f)
		return 0;
	if (fscanf(f, "%u", &qpn) != 1)
		qpn = 0;
	fclose(f);
	return qpn;
}

static struct ibv_qp *qp_new(struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(dev.pd, &ia);
}

/* one UD QP through its life: RTS, published, receives posted, destroyed */
static int churn_ud(struct ibv_cq *cq, struct ibv_mr *mr, const char *file)
{
	struct ibv_qp *qp = qp_new(cq, IBV_QPT_UD);
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr, .length = BUF, .lkey = mr->lkey,
	};
	struct ibv_wc wc[DEPTH];
	int i, rc = 0;

	if (!qp) {
		fprintf(stderr, "ibv_create_qp UD: %s\n", strerror(errno));
		return 1;
	}
	if (ud_to_rts(qp, QKEY)) {
		fprintf(stderr, "UD QP to RTS: %s\n", strerror(errno));
		rc = 1;
	}
	qpn_write(file, qp->qp_num);
	for (i = 0; !rc && i < 4; i++)
		if (post_recv1(qp, NULL, i, &sge, 1)) {
			fprintf(stderr, "ibv_post_recv: %s\n", strerror(errno));
			rc = 1;
		}
	if (ibv_destroy_qp(qp)) {
		fprintf(stderr, "ibv_destroy_qp UD: %s\n", strerror(errno));
		rc = 1;
	}
	while (ibv_poll_cq(cq, DEPTH, wc) > 0)
		;
	return rc;
}

static int churn_rc(struct ibv_cq *cq)
{
	static const struct rc_path p = { .access = IBV_ACCESS_REMOTE_WRITE };
	struct ibv_qp *qp = qp_new(cq, IBV_QPT_RC);
	int rc = 0;

	if (!qp) {
		fprintf(stderr, "ibv_create_qp RC: %s\n", strerror(errno));
		return 1;
	}
	if (rc_modify(qp, IBV_QPS_INIT, &p)) {
		fprintf(stderr, "RC QP to INIT: %s\n", strerror(errno));
		rc = 1;
	}
	if (ibv_destroy_qp(qp)) {
		fprintf(stderr, "ibv_destroy_qp RC: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}

static int churn(int secs, const char *file)
{
	double end = now_ms() + secs * 1000.0;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	void *buf;
	long n = 0;
	int rc = 0;

	buf = zalloc(BUF);
	cq = ibv_create_cq(dev.ctx, 4 * DEPTH, NULL, NULL, 0);
	mr = buf ? ibv_reg_mr(dev.pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!cq || !mr) {
		fprintf(stderr, "CQ or MR: %s\n", strerror(errno));
		rc = 1;
	}
	while (!rc && now_ms() < end) {
		rc = churn_ud(cq, mr, file) || churn_rc(cq);
		n += 2;
	}
	printf("qps %ld\n", n);
	if (mr)
		mr_dereg(mr);
	if (cq)
		ibv_destroy_cq(cq);
	free(buf);
	return rc;
}

/* a burst of UD SENDs at QPN - 1, QPN and QPN + 1; completions reaped */
static int spray_burst(struct ibv_qp *qp, struct ibv_cq *cq,
		       struct ibv_ah *ah, struct ibv_mr *mr, uint32_t qpn)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr, .length = 64, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qkey = QKEY },
	}, *bad;
	struct ibv_wc wc[3];
	int i, got = 0, n;

	for (i = 0; i < 3; i++) {
		wr.wr.ud.remote_qpn = (qpn + i - 1) & 0xffffff;
		if (ibv_post_send(qp, &wr, &bad)) {
			fprintf(stderr, "ibv_post_send: %s\n", strerror(errno));
			return -1;
		}
	}
	while (got < 3) {
		n = poll_wait(cq, wc, 3 - got, SCALED_MS(5000));
		if (n <= 0) {
			fprintf(stderr, "UD SEND completions: %d of 3\n", got);
			return -1;
		}
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "UD SEND: %s\n",
					st_str(wc[i].status));
				return -1;
			}
		got += n;
	}
	return 3;
}

static int spray(const char *dest, int secs, const char *file)
{
	double end = now_ms() + secs * 1000.0;
	union ibv_gid dgid;
	struct ibv_ah *ah = NULL;
	struct ibv_cq *cq;
	struct ibv_qp *qp = NULL;
	struct ibv_mr *mr = NULL;
	void *buf;
	long sent = 0;
	int n = 0;

	if (gid_of_addr(&dgid, dest))
		return usage();
	buf = zalloc(BUF);
	cq = ibv_create_cq(dev.ctx, 4 * DEPTH, NULL, NULL, 0);
	if (cq)
		qp = qp_new(cq, IBV_QPT_UD);
	if (buf)
		mr = ibv_reg_mr(dev.pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	ah = ah_make(dev.pd, &dgid);
	if (!qp || !mr || !ah || ud_to_rts(qp, QKEY)) {
		fprintf(stderr, "UD sender: %s\n", strerror(errno));
		n = -1;
	}
	while (n >= 0 && now_ms() < end) {
		n = spray_burst(qp, cq, ah, mr, qpn_read(file));
		if (n > 0)
			sent += n;
	}
	printf("sends %ld\n", sent);
	if (ah)
		ibv_destroy_ah(ah);
	if (qp)
		ibv_destroy_qp(qp);
	if (mr)
		mr_dereg(mr);
	if (cq)
		ibv_destroy_cq(cq);
	free(buf);
	return n < 0;
}

static int qpns(int count)
{
	struct ibv_qp **qp = calloc(count, sizeof(*qp));
	struct ibv_cq *cq;
	int i, n = 0, rc = 0;

	cq = ibv_create_cq(dev.ctx, 4 * DEPTH, NULL, NULL, 0);
	if (!cq || !qp) {
		fprintf(stderr, "CQ: %s\n", strerror(errno));
		rc = 1;
	}
	for (; !rc && n < count; n++) {
		qp[n] = qp_new(cq, IBV_QPT_UD);
		if (!qp[n]) {
			fprintf(stderr, "ibv_create_qp UD: %s\n",
				strerror(errno));
			rc = 1;
			break;
		}
	}
	if (!rc && n)
		printf("qpns %u %u\n", qp[0]->qp_num, qp[n - 1]->qp_num);
	for (i = 0; i < n; i++)
		if (ibv_destroy_qp(qp[i])) {
			fprintf(stderr, "ibv_destroy_qp: %s\n", strerror(errno));
			rc = 1;
		}
	if (cq)
		ibv_destroy_cq(cq);
	free(qp);
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 4)
		return usage();
	if (!strcmp(argv[1], "ackwait"))
		return argc == 5 ? ack_wait(argv[2], argv[3], atoi(argv[4])) :
				   usage();
	dev.name = argv[2];
	dev.gidx = -1;
	rc = tdev_open(&dev);
	if (rc)
		return rc;
	if (!strcmp(argv[1], "walk") && argc == 4)
		rc = walk(atol(argv[3]));
	else if (!strcmp(argv[1], "churn") && argc == 5)
		rc = churn(atoi(argv[3]), argv[4]);
	else if (!strcmp(argv[1], "spray") && argc == 6)
		rc = spray(argv[3], atoi(argv[4]), argv[5]);
	else if (!strcmp(argv[1], "qpns") && argc == 4 && atoi(argv[3]) > 0)
		rc = qpns(atoi(argv[3]));
	else
		rc = usage();
	tdev_close(&dev);
	return rc;
}
