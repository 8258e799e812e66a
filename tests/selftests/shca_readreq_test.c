// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_readreq_test: an RC QP that reads from its client, for
 * bad_packets.sh, whose injector (roce_inject.py) plays the client and
 * the responder.
 *
 *   shca_readreq_test DEVICE GID_INDEX PORT LENGTH
 *
 * Serves ibv_rc_pingpong's address exchange on TCP PORT (one client: its
 * "LID:QPN:PSN:GID" first, then ours, then its "done"), connects an RC QP
 * of DEVICE (path MTU 1024, ACK timeout 17, about 0.5 s, retry 7) to the
 * client's QPN and PSN and, 3 s later (the injector is watching by then),
 * posts one RDMA READ of LENGTH bytes from address 0x10000, R_Key 0x1234
 * of the client.  Prints the READ's completion status ("status: remote
 * access error", say) and exits 0 when it came within 20 s, 1 otherwise.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define MY_PSN		0x123456
#define RADDR		0x10000
#define RKEY		0x1234
/* "LID:QPN:PSN:GID" and its NUL, as ibv_rc_pingpong sends it */
#define ADDR_LEN	(4 + 1 + 6 + 1 + 6 + 1 + 32 + 1)

static int tcp_accept(int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int one = 1, ls, s;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 ||
	    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1)) {
		perror("listen");
		return -1;
	}
	s = accept(ls, NULL, NULL);
	close(ls);
	if (s < 0)
		perror("accept");
	return s;
}

/* Read exactly @len bytes; false on EOF or error. */
static bool read_all(int s, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(s, buf + got, len - got);
		if (n <= 0)
			return false;
		got += n;
	}
	return true;
}

/* "LID:QPN:PSN:GID" (GID as 32 hex digits) into @p's dest_qpn, rq_psn, dgid */
static bool parse_addr(const char *msg, struct rc_path *p)
{
	unsigned int lid, qpn, psn, i, b;
	char gid[33];

	if (sscanf(msg, "%x:%x:%x:%32s", &lid, &qpn, &psn, gid) != 4 ||
	    strlen(gid) != 32)
		return false;
	for (i = 0; i < 16; i++) {
		if (sscanf(gid + 2 * i, "%2x", &b) != 1)
			return false;
		p->dgid.raw[i] = b;
	}
	p->dest_qpn = qpn;
	p->rq_psn = psn;
	return true;
}

static void fmt_addr(char *out, const struct ibv_qp *qp,
		     const union ibv_gid *gid)
{
	int i;

	sprintf(out, "%04x:%06x:%06x:", 0, qp->qp_num, MY_PSN);
	for (i = 0; i < 16; i++)
		sprintf(out + 19 + 2 * i, "%02x", gid->raw[i]);
}

static int exchange(int port, struct ibv_qp *qp, const struct test_dev *d,
		    struct rc_path *p)
{
	char in[ADDR_LEN + 1] = "", out[ADDR_LEN], done[5];
	int s = tcp_accept(port);

	if (s < 0)
		return -1;
	fmt_addr(out, qp, &d->gid);
	if (!read_all(s, in, ADDR_LEN) || !parse_addr(in, p) ||
	    rc_connect(qp, p, NULL) || write(s, out, ADDR_LEN) != ADDR_LEN ||
	    !read_all(s, done, sizeof(done))) {
		fprintf(stderr, "address exchange failed (got \"%s\")\n", in);
		close(s);
		return -1;
	}
	close(s);
	return 0;
}

int main(int argc, char **argv)
{
	struct test_dev d = { .gidx = -1 };
	struct qp_spec spec = qp_spec_simple(16, 4);
	struct rc_path p = {
		.mtu = IBV_MTU_1024, .sq_psn = MY_PSN, .rd_atomic = 1,
		.min_rnr_timer = 12, .timeout = 17, .retry_cnt = 7,
		.rnr_retry = 7,
	};
	struct ibv_cq *scq = NULL, *rcq = NULL;
	struct ibv_sge sg;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_wc wc;
	unsigned int len;
	int n;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX PORT LENGTH\n",
			argv[0]);
		return 2;
	}
	d.name = argv[1];
	d.gidx = atoi(argv[2]);
	len = atoi(argv[4]);
	if (tdev_open(&d))
		return 1;
	p.sgid_index = d.gidx;
	mr = ibv_reg_mr(d.pd, zalloc(len), len, IBV_ACCESS_LOCAL_WRITE);
	qp = mr ? qp_create(&d, &spec, &scq, &rcq) : NULL;
	if (!qp || exchange(atoi(argv[3]), qp, &d, &p)) {
		why_flush();
		return 1;
	}
	sleep(3);
	sg = (struct ibv_sge){ (uintptr_t)mr->addr, len, mr->lkey };
	if (post_send1(qp, &(struct send_args){
			.op = IBV_WR_RDMA_READ, .sg = &sg, .nsge = 1,
			.flags = IBV_SEND_SIGNALED, .raddr = RADDR,
			.rkey = RKEY })) {
		perror("ibv_post_send");
		return 1;
	}
	n = poll_wait(scq, &wc, 1, 20000);
	if (n != 1) {
		printf("no completion within 20 s\n");
		return 1;
	}
	printf("status: %s\n", ibv_wc_status_str(wc.status));
	return 0;
}
