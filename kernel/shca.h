/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca - software RDMA host channel adapter: the definitions every layer
 * shares: the device, its counters, the protection domain and the user
 * context.
 */
#ifndef SHCA_H
#define SHCA_H

#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/refcount.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/shca-abi.h>

struct shca_dmw;
struct shca_engine;
struct shca_mr_table;

#define SHCA_DRV_NAME		"shca"
#define SHCA_VENDOR_ID		0xffffff	/* no OUI: a software device */
#define SHCA_VENDOR_PART_ID	0x5343
#define SHCA_HW_VER		1
#define SHCA_FW_VER		((u64)1 << 32)
/* the completion timestamp clock: CLOCK_MONOTONIC nanoseconds (1 GHz) */
#define SHCA_CORE_CLOCK_KHZ	1000000
#define SHCA_MAX_PD		0x10000
#define SHCA_GID_TBL_LEN	1024
#define SHCA_PKEY_TBL_LEN	1
#define SHCA_DEFAULT_PKEY	0xffff

/*
 * Device counters, exported as `rdma statistic` hw counters (names in
 * shca_attr.c, meanings in Documentation/counters.md).
 */
enum shca_counter {
	SHCA_CNT_RX_PKTS,
	SHCA_CNT_RX_BYTES,
	SHCA_CNT_TX_PKTS,
	SHCA_CNT_TX_BYTES,
	SHCA_CNT_TX_DROP,		/* no route, netdev down, xmit error */
	SHCA_CNT_RX_DROP_BAD_HDR,	/* IP/UDP/BTH malformed or unsupported */
	SHCA_CNT_RX_DROP_BAD_ICRC,
	SHCA_CNT_RX_DROP_NO_QP,		/* unknown destination QPN */
	SHCA_CNT_RX_DROP_QP_STATE,	/* QP cannot receive in its state */
	SHCA_CNT_RX_DROP_BAD_KEY,	/* P_Key or Q_Key mismatch */
	SHCA_CNT_RX_DROP_OPCODE,	/* opcode not valid for the QP type */
	SHCA_CNT_RX_DROP_PSN,		/* out of sequence, silently dropped */
	SHCA_CNT_RX_DROP_QUEUE_FULL,	/* engine queue refused the packet */
	SHCA_CNT_RX_DROP_TOO_LONG,	/* UD datagram longer than the next WQE */
	SHCA_CNT_RX_DROP_NOT_PEER,	/* RC/UC: not from the connection's peer */
	SHCA_CNT_ACK_SENT,
	SHCA_CNT_ACK_RCVD,
	SHCA_CNT_NAK_SEQ_SENT,
	SHCA_CNT_NAK_SEQ_RCVD,
	SHCA_CNT_NAK_OTHER_SENT,	/* invalid request, access, operational */
	SHCA_CNT_NAK_OTHER_RCVD,
	SHCA_CNT_RNR_NAK_SENT,
	SHCA_CNT_RNR_NAK_RCVD,
	SHCA_CNT_RETRANSMIT_PKTS,
	SHCA_CNT_TIMEOUTS,
	SHCA_CNT_DUP_REQ,		/* duplicate requests (re-acked/answered) */
	SHCA_CNT_DUP_RD_ATOMIC,		/* of those, READ/ATOMIC from resources */
	SHCA_CNT_HIST_REPLAYS,		/* go-back-N replays from the history */
	SHCA_CNT_COMPLETIONS,
	SHCA_CNT_LLQ_REFUSED,		/* LLQ pushes refused (entry/list/credit) */
	SHCA_CNT_LLQ_ENTRIES_HWM,	/* LLQ entries in use, high-water mark */
	SHCA_CNT_LLQ_RX_ENTRIES,	/* receive LLQ entries in use now */
	SHCA_CNT_LLQ_TX_ENTRIES,	/* transmit LLQ entries in use now */
	SHCA_CNT_LLQ_LISTS,		/* per-QP lists allocated now (both) */
	SHCA_CNT_DB_RINGS,		/* send doorbells rung by system call */
	SHCA_CNT_DB_POLL_HITS,		/* posts the engine found by polling */
	SHCA_CNT_DB_IDLE,		/* send rings that went idle */
	SHCA_CNT_DB_POLLS,		/* poller passes over watched rings */
	SHCA_CNT_DB_DIRECT,		/* QPs made direct: lone posts found late */
	SHCA_CNT_DB_DIRECT_ENDS,	/* direct QPs watched again: a stream */
	SHCA_CNT_TX_INLINE,		/* posts transmitted by the poster */
	SHCA_CNT_TX_HELD,		/* poster's packets sent after unlock */
	SHCA_CNT_RX_HELD,		/* receive path's ACKs sent after unlock */
	SHCA_CNT_TX_QP_CREDIT_WAITS,	/* fetch stopped at a QP's own limit */
	SHCA_CNT_TX_CTX_CREDIT_WAITS,	/* ... at its user context's or users' */
	SHCA_CNT_TX_USER_ENTRIES,	/* TX LLQ entries user contexts hold now */
	SHCA_CNT_ACK_DEFERRED,		/* of those, ACKs built after unlock */
	SHCA_CNT_RSP_CPU_WAITS,		/* responses held back by another CPU's */
	SHCA_CNT_TX_ROUTE_CACHED,	/* packets sent by a QP's cached route */
	SHCA_CNT_RX_HANDOFFS,		/* receive stage moved to another CPU */
	SHCA_CNT_PAYLOAD_COPY_BYTES,	/* payload bytes copied by the CPU */
	SHCA_CNT_PAYLOAD_RX_BYTES,	/* bytes placed in receive buffers/MRs */
	SHCA_CNT_TX_FRAG_BYTES,		/* payload bytes sent by page reference */
	SHCA_CNT_RKEY_SWEEPS,		/* invalidations that swept the QPs */
	SHCA_CNT_RKEY_SLOTS_CLEARED,	/* R_Key slots those sweeps cleared */
	SHCA_CNT_RKEY_SETS_VISITED,	/* QPs' slot sets those sweeps walked */
	SHCA_CNT_RKEY_SWEPT_REFUSED,	/* packets refused: their slot swept */
	SHCA_CNT_RKEY_SLOT_HITS,	/* packets passed on their slot alone */
	SHCA_CNT_RKEY_REFUSED_KEY,	/* R_Key unknown or stale generation */
	SHCA_CNT_RKEY_REFUSED_ACCESS,	/* R_Key's PD, QP, rights or bounds */
	SHCA_CNT_INV_REFUSED,		/* LOCAL_INV / SEND_WITH_INV refused */
	SHCA_CNT_MC_RX_PKTS,		/* packets for the multicast QPN */
	SHCA_CNT_MC_TX_PKTS,		/* packets sent to the multicast QPN */
	SHCA_CNT_MC_COPIES,		/* copies handed to member QPs */
	SHCA_CNT_MC_DROP_NO_GROUP,	/* no QP here in the packet's group */
	SHCA_CNT_MC_DROP_THRESHOLD,	/* replication queue at its threshold */
	SHCA_CNT_MC_DROP_QUEUE,		/* copies the receive LLQ refused */
	SHCA_CNT_MC_CREDIT_STALLS,	/* packets that waited for credit */
	SHCA_CNT_MC_GROUPS,		/* groups with members now */
	SHCA_CNT_MC_ATTACHED,		/* QP attachments now */
	SHCA_CNT_LLQ_CREDIT_REFUSED,	/* of llq_refused: function's credit */
	SHCA_CNT_DM_RANGES,		/* device-memory ranges handed out now */
	SHCA_CNT_DM_WRITES,		/* DRDMA WRITEs triggered by their producer */
	SHCA_CNT_DM_TX_BYTES,		/* bytes sent from device memory by reference */
	SHCA_CNT_DM_READ_BYTES,		/* bytes landed in ranges armed for READ */
	SHCA_CNT_DM_WAITING,		/* send WQEs waiting for a range now */
	SHCA_CNT_TX_LOCAL,		/* delivered to a device of this host */
	SHCA_CNT_KPOST_INLINE,		/* kernel posts run by the poster */
	SHCA_CNT_KPOST_STAGED,		/* kernel posts left to the stage */
	SHCA_CNT_FLUSH_RXE_ICRC,	/* FLUSHes with rdma_rxe's ICRC */
	SHCA_CNT_RX_DROP_FLUSH_RES,	/* FLUSH with no responder resource */
	SHCA_NUM_COUNTERS
};

/**
 * struct shca_dev - one shca RDMA device
 * @ibdev: the RDMA core device (must stay first, see ib_alloc_device())
 * @ndev: the Ethernet netdev the device carries RoCEv2 on (reference held)
 * @ndev_tracker: tracks that reference (netdev reference debugging)
 * @net: namespace the device sends and receives in: its netdev's (it
 *	follows the netdev to another namespace; read without locks)
 * @list: entry in shca_dev_list, protected by shca_dev_mutex
 * @net_node: entry in shca_net.devs (writers under shca_net_mutex, RCU)
 * @unreg_work: deferred unregistration when the netdev goes away
 * @move_work: follows the netdev into another namespace (shca_dev.c)
 * @ndev_gone: the netdev is being unregistered (under shca_dev_mutex)
 * @unreg_queued: @unreg_work was queued; it is never queued again (under
 *	shca_dev_mutex)
 * @pd_ida: protection domain numbers
 * @cq_ida: completion queue numbers (shca_cq.c)
 * @srq_ida: shared receive queue numbers (shca_srq.c)
 * @mrt: MR/MW key table (shca_memreg.c)
 * @pd_xa: the PDs by number, where an invalidation's sweep finds the
 *	R_Key slot sets of the key's PD (shca_rkey.c)
 * @ah_xa: address handles by handle (shca_av.c)
 * @max_ah: AH handles run from 1 to this (the max_ah module parameter)
 * @eng: the engine that moves this device's packets, shared with the
 *	other functions (devices) on the same netdev (shca_engine.c)
 * @fn: the device's function number on @eng
 * @credit_pct: percent of each of @eng's queues the device may hold while
 *	it shares @eng (shca_func.c; under its mutex)
 * @dmw: device-memory window, created by the first ibv_alloc_dm
 *	(shca_dmw.c; published with a release store, read with an acquire)
 * @stats: device counters, updated without locks
 */
struct shca_dev {
	struct ib_device ibdev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct net *net;
	struct list_head list;
	struct list_head net_node;
	struct work_struct unreg_work;
	struct work_struct move_work;
	bool ndev_gone;
	bool unreg_queued;
	struct ida pd_ida;
	struct ida cq_ida;
	struct ida srq_ida;
	struct shca_mr_table *mrt;
	struct xarray pd_xa;
	struct xarray ah_xa;
	u32 max_ah;
	struct shca_engine *eng;
	u32 fn;
	u32 credit_pct;
	struct shca_dmw *dmw;
	atomic64_t stats[SHCA_NUM_COUNTERS];
};

/**
 * struct shca_ucontext - per process (per open of the uverbs device)
 * @ibuc: RDMA core context
 * @tx_used: entries of the engine's transmit LLQ its QPs hold
 *	(shca_txcredit.c)
 */
struct shca_ucontext {
	struct ib_ucontext ibuc;
	atomic_t tx_used;
};

/**
 * struct shca_pd - protection domain
 * @ibpd: RDMA core PD
 * @pdn: number, unique within the device
 * @rkey_lock: protects @rkey_sets (shca_rkey.c); taken with BHs off, may
 *	nest inside a qp->lock
 * @rkey_sets: the R_Key slot sets of the PD's RC and UC QPs, walked by
 *	the sweep of every invalidation of a key of the PD: its cost does
 *	not depend on other PDs' QPs
 */
struct shca_pd {
	struct ib_pd ibpd;
	u32 pdn;
	spinlock_t rkey_lock;
	struct list_head rkey_sets;
};

static inline struct shca_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct shca_dev, ibdev);
}

static inline struct shca_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct shca_pd, ibpd);
}

static inline struct shca_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct shca_ucontext, ibuc);
}

static inline void shca_stat_inc(struct shca_dev *sdev, enum shca_counter c)
{
	atomic64_inc(&sdev->stats[c]);
}

static inline void shca_stat_add(struct shca_dev *sdev, enum shca_counter c,
				 u64 n)
{
	atomic64_add(n, &sdev->stats[c]);
}

#endif /* SHCA_H */
