/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca receive stage (shca_rx.c), and the engine's entry point from the
 * wire.
 */
#ifndef SHCA_RX_H
#define SHCA_RX_H

#include <linux/skbuff.h>

struct shca_dev;
struct shca_engine;

/*
 * shca_rx() - the one call from the wire into the engine.  The wire has
 * checked IP/UDP and the BTH version and made skb->data point at the BTH
 * (network header still set, so shca_pkt_src_av() can read the
 * addresses).  The ICRC is still in the packet: the receive drain checks
 * and trims it with shca_net_rx_verify() before anything else reads the
 * packet beyond its BTH and opcode headers.  Packets failing validation
 * are counted and dropped.  Consumes the skb.
 *
 * Called in softirq context under rcu_read_lock(), from the time the
 * device joins its namespace's sockets (before ib_register_device) until
 * shca_net_detach() returns.  skb->dev is the device's own netdev (held
 * by the device); skb->skb_iif the interface it arrived on.
 */
void shca_rx(struct shca_dev *sdev, struct sk_buff *skb);

/*
 * shca_rx_local() - the wire's other call into the engine, for a packet
 * a device of this host built for @sdev (wire/shca_loop.c): as shca_rx(),
 * but the packet never left memory, so its ICRC was not computed and is
 * not checked (its 4 bytes are at the end, as on the wire); and the
 * drain is not run from the caller, which may hold a QP's lock, but from
 * the engine's tasklet once BHs run.  BHs off.  Consumes the skb.
 */
void shca_rx_local(struct shca_dev *sdev, struct sk_buff *skb);

int shca_rx_init(void);
void shca_rx_exit(void);
void shca_rx_stage_init(struct shca_engine *eng);
void shca_rx_stage_stop(struct shca_engine *eng);
void shca_rx_copy(struct shca_engine *eng, u32 qpn, struct sk_buff *skb,
		  u64 tag);

#endif /* SHCA_RX_H */
