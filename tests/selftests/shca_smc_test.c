// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_smc_test: SMC-R (the kernel's AF_SMC sockets) over an RDMA device.
 *
 *   shca_smc_test -u add|del
 *   shca_smc_test -s ADDR [-m MIB] [-L FILE]	(server: one connection)
 *   shca_smc_test -c ADDR [-m MIB] [-l]		(client)
 *
 * SMC-R over RoCE v2 GIDs is SMC-Rv2, which needs an enterprise ID both
 * ends share: a machine without ISM has no system EID, so a user EID it
 * is.  -u adds this test's user EID to the kernel's table (one for the
 * whole machine) or removes it, as smc-tools' smc_ueid does, through
 * SMC's generic netlink family.
 *
 * The client connects to ADDR port 18640 and sends MIB MiB (default
 * 32), then receives MIB MiB; the server the other way round.  Each end
 * checks every byte and, while connected, that SMC's socket diagnostics
 * (sock_diag for AF_SMC) show its socket in SMC-R mode, not fallen back
 * to TCP.  Each prints TAP.
 *
 * With -L and -l (the device-loss case), the client sends until a send
 * fails and the server receives until the connection ends, creating FILE
 * once it has received MIB MiB; the caller then takes a device away.
 * The client passes when its connection ended with an error, the server
 * when its connection ended (with an error, or the end of the stream:
 * SMC closes the TCP connection under a link group it had to give up),
 * each within 120 s (scaled, not the socket's timeout) and with no byte
 * wrong before.  Exits 0 or 1.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/smc.h>
#include <linux/smc_diag.h>
#include <linux/sock_diag.h>

#include "shca_test.h"

#ifndef AF_SMC
#define AF_SMC		43
#endif
#define SMCPROTO_SMC	0
#define SMC_PORT	18640
#define CHUNK		(256 << 10)
/* 32 characters: upper case, digits, '.' and '-', blank padded */
#define TEST_UEID	"SHCA-SELFTEST                   "

struct nlbuf {
	struct nlmsghdr h;
	char data[1024];
};

/* the attribute after the ones already in @m */
static struct nlattr *nla_next(struct nlbuf *m)
{
	return (struct nlattr *)((char *)m + NLMSG_ALIGN(m->h.nlmsg_len));
}

static void nla_add(struct nlbuf *m, int type, const void *v, int len)
{
	struct nlattr *a = nla_next(m);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, v, len);
	m->h.nlmsg_len = NLMSG_ALIGN(m->h.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* send @m on @fd and read the answer into it; the netlink error or 0 */
static int nl_talk(int fd, struct nlbuf *m)
{
	struct nlmsgerr *e;
	ssize_t r;

	m->h.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	m->h.nlmsg_seq = 1;
	if (send(fd, m, m->h.nlmsg_len, 0) < 0)
		return -errno;
	do {
		r = recv(fd, m, sizeof(*m), 0);
		if (r < (ssize_t)sizeof(m->h))
			return r < 0 ? -errno : -EIO;
		if (m->h.nlmsg_type == NLMSG_ERROR) {
			e = NLMSG_DATA(&m->h);
			return e->error;
		}
	} while (m->h.nlmsg_type == NLMSG_NOOP);
	return 0;
}

/* the generic netlink family id of @name, or a negative errno */
static int genl_family(int fd, const char *name)
{
	struct nlbuf m = {};
	struct genlmsghdr *g = NLMSG_DATA(&m.h);
	struct nlattr *a;
	int left, ret;

	m.h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m.h.nlmsg_type = GENL_ID_CTRL;
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	nla_add(&m, CTRL_ATTR_FAMILY_NAME, name, strlen(name) + 1);
	ret = nl_talk(fd, &m);
	if (ret)
		return ret;
	a = (struct nlattr *)((char *)NLMSG_DATA(&m.h) + GENL_HDRLEN);
	left = m.h.nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN) {
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(uint16_t *)((char *)a + NLA_HDRLEN);
		left -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return -ENOENT;
}

/* add or remove this test's user EID */
static int ueid(const char *what)
{
	struct nlbuf m = {};
	struct genlmsghdr *g = NLMSG_DATA(&m.h);
	int fd, fam, ret;

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	fam = genl_family(fd, SMC_GENL_FAMILY_NAME);
	if (fam < 0) {
		close(fd);
		return fam;
	}
	m.h.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m.h.nlmsg_type = fam;
	g->cmd = strcmp(what, "add") ? SMC_NETLINK_REMOVE_UEID :
				       SMC_NETLINK_ADD_UEID;
	g->version = 1;
	nla_add(&m, SMC_NLA_EID_TABLE_ENTRY, TEST_UEID, sizeof(TEST_UEID));
	ret = nl_talk(fd, &m);
	close(fd);
	return ret;
}

/* the SMC mode (SMC_DIAG_MODE_*) of this namespace's SMC socket with
 * local port @lport and remote port @rport, or -1 */
static int smc_mode(uint16_t lport, uint16_t rport)
{
	struct {
		struct nlmsghdr h;
		struct smc_diag_req r;
	} q = {};
	static char buf[16384];
	struct smc_diag_msg *d;
	struct nlmsghdr *h;
	int fd, mode = -1;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -1;
	q.h.nlmsg_len = sizeof(q);
	q.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	q.r.diag_family = AF_SMC;
	if (send(fd, &q, sizeof(q), 0) < 0)
		goto out;
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (h = (void *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE ||
			    h->nlmsg_type == NLMSG_ERROR)
				goto out;
			d = NLMSG_DATA(h);
			if (ntohs(d->id.idiag_sport) == lport &&
			    ntohs(d->id.idiag_dport) == rport)
				mode = d->diag_mode;
		}
	}
out:
	close(fd);
	return mode;
}

/* the connection is in SMC-R mode */
static void check_mode(int fd)
{
	struct sockaddr_in l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r);
	int mode;

	if (getsockname(fd, (struct sockaddr *)&l, &ll) ||
	    getpeername(fd, (struct sockaddr *)&r, &rl)) {
		failf("getsockname/getpeername: %s", strerror(errno));
		return;
	}
	mode = smc_mode(ntohs(l.sin_port), ntohs(r.sin_port));
	if (mode != SMC_DIAG_MODE_SMCR)
		failf("SMC diagnostics: mode %d (%s)", mode,
		      mode == SMC_DIAG_MODE_FALLBACK_TCP ? "fallback to TCP" :
		      mode < 0 ? "socket not listed" : "not SMC-R");
}

/* send @mib MiB of pattern @seed; with @mib 0, until a send fails */
static int send_all(int fd, unsigned int mib, uint32_t seed, uint8_t *buf)
{
	uint32_t x = pattern_start(seed);
	size_t total = (size_t)mib << 20, done = 0, i, n;
	ssize_t r;

	while (!mib || done < total) {
		n = mib && total - done < CHUNK ? total - done : CHUNK;
		for (i = 0; i < n; i++)
			buf[i] = pattern_next(&x);
		for (i = 0; i < n; i += r) {
			r = send(fd, buf + i, n - i, MSG_NOSIGNAL);
			if (r <= 0) {
				if (r < 0 && errno == EINTR) {
					r = 0;
					continue;
				}
				diag("send ended after %zu bytes: %s", done + i,
				     r < 0 ? strerror(errno) : "0");
				return r < 0 ? -errno : -EIO;
			}
		}
		done += n;
	}
	return 0;
}

/* receive @mib MiB and compare them with pattern @seed; with @mib 0,
 * until the connection ends, creating @mark (if any) once @mark_mib MiB
 * arrived */
static int recv_all(int fd, unsigned int mib, uint32_t seed, uint8_t *buf,
		    const char *mark, unsigned int mark_mib)
{
	uint32_t x = pattern_start(seed);
	size_t total = (size_t)mib << 20, done = 0, i;
	ssize_t r;

	while (!mib || done < total) {
		r = recv(fd, buf, mib && total - done < CHUNK ?
			 total - done : CHUNK, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			diag("receive ended after %zu bytes: %s", done,
			     r < 0 ? strerror(errno) : "end of stream");
			return r < 0 ? -errno : -EPIPE;
		}
		for (i = 0; i < (size_t)r; i++)
			if (buf[i] != pattern_next(&x)) {
				failf("byte %zu differs", done + i);
				return -EBADMSG;
			}
		done += r;
		if (mark && done >= ((size_t)mark_mib << 20)) {
			close(open(mark, O_CREAT | O_WRONLY, 0644));
			mark = NULL;
		}
	}
	return 0;
}

static int smc_socket(void)
{
	int fd = socket(AF_SMC, SOCK_STREAM, SMCPROTO_SMC);
	struct timeval tv = { .tv_sec = SCALED_MS(120000) / 1000 };

	if (fd < 0) {
		failf("socket(AF_SMC): %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static int server(struct sockaddr_in *sa, unsigned int mib, const char *mark)
{
	int ls, fd = -1, one = 1, ret, ok;
	uint8_t *buf = malloc(CHUNK);

	printf("TAP version 13\n1..%d\n", mark ? 2 : 3);
	ls = smc_socket();
	if (ls >= 0 &&
	    (setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	     bind(ls, (struct sockaddr *)sa, sizeof(*sa)) || listen(ls, 1)))
		failf("bind/listen: %s", strerror(errno));
	/* the caller starts the client once this line is out */
	printf("# listening\n");
	fflush(stdout);
	if (!why[0]) {
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			failf("accept: %s", strerror(errno));
	}
	if (fd >= 0)
		check_mode(fd);
	ok = !why[0] && buf;
	case_result(ok, "a connection accepted, in SMC-R mode");
	/* not over SMC-R: nothing of what follows would test it */
	if (!ok)
		goto out;
	if (mark) {
		ret = recv_all(fd, 0, 1, buf, mark, mib);
		case_result(ret < 0 && ret != -EBADMSG && ret != -EAGAIN,
			    "the connection ended (an error or the end of the "
			    "stream), every byte before it right");
		goto out;
	}
	ret = recv_all(fd, mib, 1, buf, NULL, 0);
	if (ret)
		failf("receive: %s", strerror(-ret));
	case_result(!why[0], "the client's data arrived whole");
	check_mode(fd);
	if (!why[0] && send_all(fd, mib, 2, buf))
		failf("send failed");
	case_result(!why[0], "the server's data sent, still SMC-R");
out:
	if (fd >= 0)
		close(fd);
	if (ls >= 0)
		close(ls);
	free(buf);
	return n_failed ? 1 : 0;
}

static int client(struct sockaddr_in *sa, unsigned int mib, int loss)
{
	uint8_t *buf = malloc(CHUNK);
	int fd, ret, ok;

	printf("TAP version 13\n1..%d\n", loss ? 2 : 3);
	fd = smc_socket();
	if (fd >= 0 && connect(fd, (struct sockaddr *)sa, sizeof(*sa)))
		failf("connect: %s", strerror(errno));
	else if (fd >= 0)
		check_mode(fd);
	ok = !why[0] && buf;
	case_result(ok, "connected, in SMC-R mode");
	if (!ok)
		goto out;
	if (loss) {
		ret = send_all(fd, 0, 1, buf);
		case_result(ret < 0 && ret != -EAGAIN,
			    "the connection ended with an error");
		goto out;
	}
	if (send_all(fd, mib, 1, buf))
		failf("send failed");
	case_result(!why[0], "the client's data sent");
	ret = recv_all(fd, mib, 2, buf, NULL, 0);
	if (ret)
		failf("receive: %s", strerror(-ret));
	else
		check_mode(fd);
	case_result(!why[0], "the server's data arrived whole, still SMC-R");
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return n_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(SMC_PORT) };
	const char *addr = NULL, *mark = NULL, *u = NULL;
	unsigned int mib = 32;
	int opt, srv = -1, loss = 0, ret;

	while ((opt = getopt(argc, argv, "u:s:c:m:L:l")) != -1) {
		switch (opt) {
		case 'u':
			u = optarg;
			break;
		case 's':
		case 'c':
			srv = opt == 's';
			addr = optarg;
			break;
		case 'm':
			mib = strtoul(optarg, NULL, 0);
			break;
		case 'L':
			mark = optarg;
			/* fall through */
		case 'l':
			loss = 1;
			break;
		default:
			return 1;
		}
	}
	if (u) {
		ret = ueid(u);
		if (ret)
			fprintf(stderr, "user EID %s: %s\n", u, strerror(-ret));
		return ret ? 1 : 0;
	}
	if (srv < 0 || !mib || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: shca_smc_test -u add|del | "
			"-s ADDR [-m MIB] [-L FILE] | -c ADDR [-m MIB] [-l]\n");
		return 1;
	}
	if (srv && loss && !mark) {
		fprintf(stderr, "shca_smc_test: the server's -L needs a FILE\n");
		return 1;
	}
	return srv ? server(&sa, mib, loss ? mark : NULL) :
		     client(&sa, mib, loss);
}
