// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the inline-or-staged choice for kernel QP posts
 * (kernel/mech/shca_kpost.c), with a model of a poster at a queue depth.
 */
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "shca_kpost.h"

#define MAXQ	64

/*
 * A poster keeping up to @depth requests in flight, one tick per post
 * when it may post; the peer answers in order.  An inline post runs the
 * request's round trip in the poster's context, @lat * 2 / 5 ticks (a
 * staged request takes @lat): when it returns its WQE is completed and,
 * unless an older request is still in flight, its answer has arrived.  A
 * staged one has its WQE completed @lat / 2 ticks later and its answer
 * @lat ticks later (or after the older ones).  The poster counts a
 * request done at its answer (without @answers, at its completion).
 */
struct poster {
	struct shca_kpost kp;
	unsigned int depth;
	unsigned int lat;
	bool answers;
	u32 recvs;
	u32 busy;
	unsigned int nq;
	unsigned long comp_at[MAXQ];
	unsigned long done_at[MAXQ];
	unsigned long posts;
	unsigned long staged;
	unsigned long until;
	unsigned long last_done;
	unsigned long t;
};

static void poster_init(struct poster *p, unsigned int depth,
			unsigned int lat, bool answers)
{
	memset(p, 0, sizeof(*p));
	p->depth = depth;
	p->lat = lat;
	p->answers = answers;
}

/* what finished by tick @t */
static void poster_settle(struct poster *p, unsigned long t)
{
	unsigned int i = 0;

	while (i < p->nq) {
		if (p->comp_at[i] && p->comp_at[i] <= t) {
			p->comp_at[i] = 0;
			p->busy--;
		}
		if (p->done_at[i] <= t && !p->comp_at[i]) {
			if (p->answers)
				p->recvs++;
			p->nq--;
			p->comp_at[i] = p->comp_at[p->nq];
			p->done_at[i] = p->done_at[p->nq];
			continue;
		}
		i++;
	}
}

static void poster_post(struct poster *p, unsigned long t)
{
	bool staged = shca_kpost_pick(&p->kp, p->busy, p->recvs);
	unsigned long comp, done;

	p->posts++;
	if (staged) {
		p->staged++;
		comp = t + p->lat / 2;
		done = t + p->lat;
	} else {
		comp = t + p->lat * 2 / 5;
		done = comp;
		p->until = comp;
	}
	if (p->nq && done <= p->last_done)
		done = p->last_done + 1;
	p->last_done = done;
	p->busy++;
	p->comp_at[p->nq] = comp;
	p->done_at[p->nq] = done;
	p->nq++;
	/* an inline round trip that nothing delays is over when it returns */
	if (!staged && done == comp)
		poster_settle(p, comp);
}

/* run for @posts posts; the share of them that went to the stage, in % */
static unsigned int poster_run(struct poster *p, unsigned long posts)
{
	unsigned long end = p->posts + posts, staged = p->staged;

	while (p->posts < end) {
		p->t++;
		poster_settle(p, p->t);
		if (p->t >= p->until && p->nq < p->depth)
			poster_post(p, p->t);
	}
	return (unsigned int)((p->staged - staged) * 100 / posts);
}

static void test_start(void)
{
	struct shca_kpost kp = {};
	int i, staged = 0;

	for (i = 0; i < SHCA_KPOST_PROBE_EVERY - 1; i++)
		staged += shca_kpost_pick(&kp, 0, (u32)i);
	ok_eq(staged, 0, "the first %d posts are inline",
	      SHCA_KPOST_PROBE_EVERY - 1);
	ok(shca_kpost_pick(&kp, 0, (u32)i), "the next one is a probe");
	ok(!shca_kpost_pick(&kp, 0, (u32)i + 1),
	   "answered before the next post: inline again");
	ok(!kp.staged, "the QP stays inline");
}

static void test_lone(void)
{
	struct poster p;
	unsigned int pct;

	poster_init(&p, 1, 10, true);
	pct = poster_run(&p, 64000);
	ok_eq(p.staged, 1000UL,
	      "queue depth 1, answered: only the probes are staged (%u %%)",
	      pct);
	poster_init(&p, 1, 10, false);
	poster_run(&p, 64000);
	ok_eq(p.staged, 1000UL,
	      "queue depth 1, completions only: only the probes are staged");
}

static void test_ahead(void)
{
	static const unsigned int depths[] = { 2, 4, 32 };
	struct poster p;
	unsigned int i, pct;

	for (i = 0; i < ARRAY_SIZE(depths); i++) {
		poster_init(&p, depths[i], 10, true);
		pct = poster_run(&p, 64000);
		ok(pct >= 95, "queue depth %u, answered: %u %% staged",
		   depths[i], pct);
		poster_init(&p, depths[i], 10, false);
		pct = poster_run(&p, 64000);
		ok(pct >= 95, "queue depth %u, completions only: %u %% staged",
		   depths[i], pct);
	}
}

static void test_depth_change(void)
{
	struct poster p;
	unsigned long staged;
	unsigned int pct;
	int answers;

	for (answers = 0; answers < 2; answers++) {
		poster_init(&p, 32, 10, answers);
		pct = poster_run(&p, 10000);
		ok(pct >= 95, "queue depth 32 (%s): %u %% staged",
		   answers ? "answered" : "completions only", pct);
		/* in a staged run */
		while (!p.kp.staged)
			poster_run(&p, 1);
		p.depth = 1;
		staged = p.staged;
		poster_run(&p, SHCA_KPOST_STAGED_POSTS + 2);
		ok(!p.kp.staged && p.staged - staged <= SHCA_KPOST_STAGED_POSTS,
		   "then queue depth 1: inline again after %lu staged posts",
		   p.staged - staged);
		staged = p.staged;
		poster_run(&p, 6400);
		ok_eq(p.staged - staged, 100UL,
		      "and only the probes are staged from then on");
	}
}

static void test_cycle(void)
{
	struct shca_kpost kp = {};
	int i, staged = 0;
	u32 msn = 0;

	/* a probe the poster runs ahead of: its WQE is still busy */
	for (i = 0; i < SHCA_KPOST_PROBE_EVERY; i++)
		shca_kpost_pick(&kp, 0, msn++);
	ok(kp.probing, "probe sent");
	for (i = 0; i < SHCA_KPOST_STAGED_POSTS; i++)
		staged += shca_kpost_pick(&kp, 1, msn);
	ok_eq(staged, SHCA_KPOST_STAGED_POSTS,
	      "%d posts staged after a probe the poster ran ahead of",
	      SHCA_KPOST_STAGED_POSTS);
	ok(!kp.staged, "then inline again");
	ok(!shca_kpost_pick(&kp, 0, msn++), "one inline post");
	ok(shca_kpost_pick(&kp, 0, msn), "and a probe right after it");
	ok(kp.probing && kp.answered,
	   "the probe knows the QP's posts are answered");
	ok(shca_kpost_pick(&kp, 0, msn),
	   "no answer to the probe before the next post: staged");
	ok(kp.staged, "the QP is staged");
}

static void test_unanswered(void)
{
	struct shca_kpost kp = {};
	int i, staged = 0;

	for (i = 0; i < SHCA_KPOST_PROBE_EVERY - 1; i++)
		staged += shca_kpost_pick(&kp, 0, 7);
	ok_eq(staged, 0, "a QP nothing answers: inline posts");
	ok(shca_kpost_pick(&kp, 0, 7), "then a probe");
	ok(!kp.answered, "nothing came in before it: posts not answered");
	ok(!shca_kpost_pick(&kp, 0, 7), "its WQE completed: inline");
	for (i = 0; i < SHCA_KPOST_PROBE_EVERY - 2; i++)
		shca_kpost_pick(&kp, 0, 7);
	ok(shca_kpost_pick(&kp, 0, 7), "the next probe");
	ok(shca_kpost_pick(&kp, 1, 7), "the poster ran ahead of its WQE");
	ok(kp.staged, "staged");
}

static void test_wrap(void)
{
	struct shca_kpost kp = { .recvs_prev = UINT32_MAX - 2 };
	u32 msn = UINT32_MAX - 1;
	int i, staged = 0;

	for (i = 0; i < 4 * SHCA_KPOST_PROBE_EVERY; i++)
		staged += shca_kpost_pick(&kp, 0, msn++);
	ok_eq(staged, 4, "a message count that wraps: only the probes staged");
}

int main(void)
{
	tap_start();
	test_start();
	test_lone();
	test_ahead();
	test_cycle();
	test_unanswered();
	test_depth_change();
	test_wrap();
	return tap_done();
}
