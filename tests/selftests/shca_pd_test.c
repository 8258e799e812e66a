// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_pd_test: basic control path of a shca device through libibverbs.
 *
 *   shca_pd_test [DEVICE] [--mr]
 *
 * DEVICE defaults to the first device whose name starts with "shca".
 * --mr adds the memory registration checks.  Prints TAP 13; exits 0 when
 * every check passes, 1 when one fails, 4 (kselftest skip) when no device
 * was named and no shca device exists.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "shca_test.h"

#define PD_LOOPS	1000
#define MR_SIZE		(1 << 20)
#define MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_WRITE)

struct test_state {
	const char *dev_name;
	bool with_mr;
	struct ibv_device **list;
	struct ibv_device *dev;
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	bool port_ok;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	void *buf;
};

enum result { PASS, FAIL, SKIP };

static unsigned int test_nr;
static unsigned int failures;

static void report(enum result res, const char *desc, const char *why)
{
	test_nr++;
	switch (res) {
	case PASS:
		printf("ok %u - %s\n", test_nr, desc);
		break;
	case SKIP:
		printf("ok %u - %s # SKIP %s\n", test_nr, desc, why);
		break;
	case FAIL:
		failures++;
		printf("not ok %u - %s\n", test_nr, desc);
		if (why)
			printf("# %s\n", why);
		break;
	}
	fflush(stdout);
}

/* Bytes of an IBV_MTU_* value, or 0 if it is not one */
static int mtu_bytes(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256:
		return 256;
	case IBV_MTU_512:
		return 512;
	case IBV_MTU_1024:
		return 1024;
	case IBV_MTU_2048:
		return 2048;
	case IBV_MTU_4096:
		return 4096;
	}
	return 0;
}

static enum result fail_errno(const char *call, int err, char *why,
			      size_t len)
{
	snprintf(why, len, "%s: %s", call, strerror(err));
	return FAIL;
}

static struct ibv_device *find_device(struct ibv_device **list,
				      const char *name)
{
	if (name)
		return dev_find(list, name);
	for (; list && *list; list++)
		if (!strncmp(ibv_get_device_name(*list), "shca", 4))
			return *list;
	return NULL;
}

static enum result test_open(struct test_state *t, char *why, size_t len)
{
	t->ctx = ibv_open_device(t->dev);
	if (!t->ctx)
		return fail_errno("ibv_open_device", errno, why, len);
	return PASS;
}

static enum result test_query_device(struct test_state *t, char *why,
				     size_t len)
{
	struct ibv_device_attr attr;
	int ret;

	ret = ibv_query_device(t->ctx, &attr);
	if (ret)
		return fail_errno("ibv_query_device", ret, why, len);

	printf("# fw_ver %s vendor_id 0x%x max_qp %d max_cq %d max_mr %d max_pd %d\n",
	       attr.fw_ver, attr.vendor_id, attr.max_qp, attr.max_cq,
	       attr.max_mr, attr.max_pd);
	if (attr.phys_port_cnt != 1) {
		snprintf(why, len, "phys_port_cnt %u", attr.phys_port_cnt);
		return FAIL;
	}
	return PASS;
}

static enum result test_port_state(struct test_state *t, char *why,
				   size_t len)
{
	int ret;

	ret = ibv_query_port(t->ctx, 1, &t->port);
	if (ret)
		return fail_errno("ibv_query_port", ret, why, len);
	t->port_ok = true;

	printf("# port 1: state %s, active_mtu %d, max_mtu %d, gid_tbl_len %d\n",
	       ibv_port_state_str(t->port.state),
	       mtu_bytes(t->port.active_mtu),
	       mtu_bytes(t->port.max_mtu), t->port.gid_tbl_len);
	if (t->port.state != IBV_PORT_ACTIVE) {
		snprintf(why, len, "state %s",
			 ibv_port_state_str(t->port.state));
		return FAIL;
	}
	return PASS;
}

static enum result test_link_layer(struct test_state *t, char *why,
				   size_t len)
{
	if (t->port.link_layer != IBV_LINK_LAYER_ETHERNET) {
		snprintf(why, len, "link_layer %u", t->port.link_layer);
		return FAIL;
	}
	return PASS;
}

static enum result test_active_mtu(struct test_state *t, char *why,
				   size_t len)
{
	if (!mtu_bytes(t->port.active_mtu) ||
	    t->port.active_mtu > t->port.max_mtu) {
		snprintf(why, len, "active_mtu %d max_mtu %d",
			 t->port.active_mtu, t->port.max_mtu);
		return FAIL;
	}
	return PASS;
}

static bool gid_is_zero(const union ibv_gid *gid)
{
	static const union ibv_gid zero;

	return !memcmp(gid, &zero, sizeof(zero));
}

static enum result test_gid(struct test_state *t, char *why, size_t len)
{
	char str[INET6_ADDRSTRLEN];
	union ibv_gid gid;
	int i;

	for (i = 0; i < t->port.gid_tbl_len; i++) {
		if (ibv_query_gid(t->ctx, 1, i, &gid) || gid_is_zero(&gid))
			continue;
		inet_ntop(AF_INET6, gid.raw, str, sizeof(str));
		printf("# gid[%d] %s\n", i, str);
		return PASS;
	}
	snprintf(why, len, "no non-zero GID in %d entries",
		 t->port.gid_tbl_len);
	return FAIL;
}

static enum result test_pd_loop(struct test_state *t, char *why, size_t len)
{
	struct ibv_pd *pd;
	int i, ret;

	for (i = 0; i < PD_LOOPS; i++) {
		pd = ibv_alloc_pd(t->ctx);
		if (!pd) {
			snprintf(why, len, "ibv_alloc_pd #%d: %s", i,
				 strerror(errno));
			return FAIL;
		}
		ret = ibv_dealloc_pd(pd);
		if (ret) {
			snprintf(why, len, "ibv_dealloc_pd #%d: %s", i,
				 strerror(ret));
			return FAIL;
		}
	}
	return PASS;
}

static enum result test_reg_mr(struct test_state *t, char *why, size_t len)
{
	t->pd = ibv_alloc_pd(t->ctx);
	if (!t->pd)
		return fail_errno("ibv_alloc_pd", errno, why, len);

	t->buf = malloc(MR_SIZE);
	if (!t->buf)
		return fail_errno("malloc", errno, why, len);
	memset(t->buf, 0x5a, MR_SIZE);

	t->mr = ibv_reg_mr(t->pd, t->buf, MR_SIZE, MR_ACCESS);
	if (!t->mr)
		return fail_errno("ibv_reg_mr", errno, why, len);

	printf("# mr lkey 0x%x rkey 0x%x\n", t->mr->lkey, t->mr->rkey);
	if (!t->mr->lkey || !t->mr->rkey) {
		snprintf(why, len, "zero key");
		return FAIL;
	}
	return PASS;
}

static enum result test_dereg_mr(struct test_state *t, char *why, size_t len)
{
	int ret;

	ret = ibv_dereg_mr(t->mr);
	t->mr = NULL;
	if (ret)
		return fail_errno("ibv_dereg_mr", ret, why, len);

	ret = ibv_dealloc_pd(t->pd);
	t->pd = NULL;
	if (ret)
		return fail_errno("ibv_dealloc_pd", ret, why, len);
	return PASS;
}

/* Drop what a failed --mr check left behind */
static void release_mr(struct test_state *t)
{
	if (t->mr)
		ibv_dereg_mr(t->mr);
	t->mr = NULL;
	if (t->pd)
		ibv_dealloc_pd(t->pd);
	t->pd = NULL;
}

static enum result test_close(struct test_state *t, char *why, size_t len)
{
	int ret;

	release_mr(t);
	ret = ibv_close_device(t->ctx);
	t->ctx = NULL;
	if (ret) {
		snprintf(why, len, "ibv_close_device returned %d", ret);
		return FAIL;
	}
	return PASS;
}

/* What a test needs from the ones before it */
enum need { NEED_DEV, NEED_CTX, NEED_PORT, NEED_MR };

struct test_case {
	const char *desc;
	enum result (*fn)(struct test_state *t, char *why, size_t len);
	enum need need;
	bool mr_only;		/* run only with --mr */
};

#define TEST(_fn, _need, _desc) \
	{ .desc = (_desc), .fn = (_fn), .need = (_need) }
#define MR_TEST(_fn, _need, _desc) \
	{ .desc = (_desc), .fn = (_fn), .need = (_need), .mr_only = true }

static const struct test_case tests[] = {
	TEST(test_open, NEED_DEV, "ibv_open_device"),
	TEST(test_query_device, NEED_CTX, "ibv_query_device, phys_port_cnt 1"),
	TEST(test_port_state, NEED_CTX, "ibv_query_port(1), state ACTIVE"),
	TEST(test_link_layer, NEED_PORT, "port 1 link_layer ETHERNET"),
	TEST(test_active_mtu, NEED_PORT, "port 1 active_mtu valid"),
	TEST(test_gid, NEED_PORT, "ibv_query_gid finds a non-zero GID"),
	TEST(test_pd_loop, NEED_CTX, "ibv_alloc_pd/ibv_dealloc_pd x1000"),
	MR_TEST(test_reg_mr, NEED_CTX, "ibv_reg_mr 1 MiB, lkey/rkey non-zero"),
	MR_TEST(test_dereg_mr, NEED_MR, "ibv_dereg_mr, ibv_dealloc_pd"),
	TEST(test_close, NEED_CTX, "ibv_close_device"),
};

#define NUM_TESTS (sizeof(tests) / sizeof(tests[0]))

/* Why a test cannot run, or NULL if it can */
static const char *missing(const struct test_state *t, enum need need)
{
	switch (need) {
	case NEED_DEV:
		return t->dev ? NULL : "no device";
	case NEED_CTX:
		return t->ctx ? NULL : "no device context";
	case NEED_PORT:
		if (!t->ctx)
			return "no device context";
		return t->port_ok ? NULL : "ibv_query_port failed";
	case NEED_MR:
		return t->mr ? NULL : "no MR";
	}
	return NULL;
}

static void run_tests(struct test_state *t)
{
	char why[256];
	const char *skip;
	enum result res;
	unsigned int i;

	for (i = 0; i < NUM_TESTS; i++) {
		const struct test_case *tc = &tests[i];

		if (tc->mr_only && !t->with_mr)
			continue;
		skip = missing(t, tc->need);
		if (skip) {
			report(SKIP, tc->desc, skip);
			continue;
		}
		why[0] = '\0';
		res = tc->fn(t, why, sizeof(why));
		report(res, tc->desc, why[0] ? why : NULL);
	}
}

static unsigned int planned_tests(const struct test_state *t)
{
	unsigned int i, n = 1;	/* "device is listed" */

	for (i = 0; i < NUM_TESTS; i++)
		if (!tests[i].mr_only || t->with_mr)
			n++;
	return n;
}

static void cleanup(struct test_state *t)
{
	if (t->ctx) {
		release_mr(t);
		ibv_close_device(t->ctx);
	}
	free(t->buf);
	if (t->list)
		ibv_free_device_list(t->list);
}

static int parse_args(struct test_state *t, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mr")) {
			t->with_mr = true;
		} else if (argv[i][0] != '-' && !t->dev_name) {
			t->dev_name = argv[i];
		} else {
			fprintf(stderr, "usage: %s [DEVICE] [--mr]\n", argv[0]);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct test_state t = {};
	char why[128];

	if (parse_args(&t, argc, argv))
		return KSFT_FAIL;

	printf("TAP version 13\n");
	t.list = ibv_get_device_list(NULL);
	t.dev = find_device(t.list, t.dev_name);
	if (!t.dev && !t.dev_name) {
		printf("1..0 # SKIP no shca device\n");
		cleanup(&t);
		return KSFT_SKIP;
	}

	printf("1..%u\n", planned_tests(&t));
	snprintf(why, sizeof(why), "device %s is listed",
		 t.dev ? ibv_get_device_name(t.dev) : t.dev_name);
	report(t.dev ? PASS : FAIL, why, t.dev ? NULL : "not found");
	run_tests(&t);

	cleanup(&t);
	return failures ? KSFT_FAIL : KSFT_PASS;
}
