/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shca tracepoints (system "shca"): one event at each stage a work
 * request, a packet or a completion passes through, for ftrace, trace-cmd
 * and perf (Documentation/tracing.md).  Disabled, each is a patched-out
 * branch; the arguments are pointers and plain values, and everything an
 * event records is read in its assign step, which runs only when the
 * event is enabled.
 *
 * Every event names its device (`dev`); packet events carry the QPN, PSN
 * and BTH opcode, work-request events the ring index.  The definitions are
 * made once, in shca_trace.c.  Any layer but kernel/mech/ may call them
 * (pure code makes no kernel calls).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM shca

#if !defined(SHCA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SHCA_TRACE_H

#include <linux/tracepoint.h>
#include <linux/version.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>
#include "shca_hdr.h"
#include "shca_doorbell.h"

#ifndef SHCA_TRACE_ONCE
#define SHCA_TRACE_ONCE

/*
 * Fill the device name field from the event's @ibdev argument:
 * __assign_str() lost its source argument in 6.10.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
#define shca_trace_dev()	__assign_str(dev, dev_name(&ibdev->dev))
#else
#define shca_trace_dev()	__assign_str(dev)
#endif

/* why the requester replays (shca_trace_retry) */
enum shca_trace_retry_why {
	SHCA_RETRY_NAK_SEQ,	/* a sequence NAK */
	SHCA_RETRY_IMPLICIT,	/* an ACK passed a READ/ATOMIC unanswered */
	SHCA_RETRY_RSP_GAP,	/* a READ response or ATOMIC ACK skipped one */
	SHCA_RETRY_RNR,		/* an RNR NAK's wait */
	SHCA_RETRY_TIMEOUT,	/* the ACK timeout */
};

/* where a packet left for (shca_trace_wire_tx) */
enum shca_trace_path {
	SHCA_PATH_IP,		/* the IP stack */
	SHCA_PATH_HELD,		/* held until qp->lock was dropped, then IP */
	SHCA_PATH_LOCAL,	/* a device of this host (wire/shca_loop.c) */
};

#endif /* SHCA_TRACE_ONCE */

/*
 * The enum constants the tables below print by name: TRACE_DEFINE_ENUM()
 * puts their values into the events' format files, so trace-cmd and perf
 * print the names too (they cannot evaluate a C enum).
 */
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_SEND);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_CMP_AND_SWP);
TRACE_DEFINE_ENUM(IB_WR_ATOMIC_FETCH_AND_ADD);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_INV);
TRACE_DEFINE_ENUM(IB_WR_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WR_REG_MR);
TRACE_DEFINE_ENUM(IB_WR_BIND_MW);
TRACE_DEFINE_ENUM(IB_WC_SEND);
TRACE_DEFINE_ENUM(IB_WC_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WC_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WC_COMP_SWAP);
TRACE_DEFINE_ENUM(IB_WC_FETCH_ADD);
TRACE_DEFINE_ENUM(IB_WC_BIND_MW);
TRACE_DEFINE_ENUM(IB_WC_LOCAL_INV);
TRACE_DEFINE_ENUM(IB_WC_REG_MR);
TRACE_DEFINE_ENUM(IB_WC_RECV);
TRACE_DEFINE_ENUM(IB_WC_RECV_RDMA_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WC_SUCCESS);
TRACE_DEFINE_ENUM(IB_WC_LOC_LEN_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_QP_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_PROT_ERR);
TRACE_DEFINE_ENUM(IB_WC_WR_FLUSH_ERR);
TRACE_DEFINE_ENUM(IB_WC_MW_BIND_ERR);
TRACE_DEFINE_ENUM(IB_WC_BAD_RESP_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_RNR_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_GENERAL_ERR);
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
TRACE_DEFINE_ENUM(SHCA_RETRY_NAK_SEQ);
TRACE_DEFINE_ENUM(SHCA_RETRY_IMPLICIT);
TRACE_DEFINE_ENUM(SHCA_RETRY_RSP_GAP);
TRACE_DEFINE_ENUM(SHCA_RETRY_RNR);
TRACE_DEFINE_ENUM(SHCA_RETRY_TIMEOUT);
TRACE_DEFINE_ENUM(SHCA_PATH_IP);
TRACE_DEFINE_ENUM(SHCA_PATH_HELD);
TRACE_DEFINE_ENUM(SHCA_PATH_LOCAL);
TRACE_DEFINE_ENUM(SHCA_DB_IDLE);
TRACE_DEFINE_ENUM(SHCA_DB_OWED);
TRACE_DEFINE_ENUM(SHCA_DB_WATCHED);
TRACE_DEFINE_ENUM(SHCA_DB_LINGERING);

#define shca_show_transport(op)						\
	__print_symbolic((op) >> 5,					\
			 { 0, "RC" }, { 1, "UC" }, { 3, "UD" },		\
			 { 4, "CNP" })

#define shca_show_op(op)						\
	__print_symbolic((op) & 0x1f,					\
			 { 0x00, "SEND_FIRST" }, { 0x01, "SEND_MIDDLE" },	\
			 { 0x02, "SEND_LAST" }, { 0x03, "SEND_LAST_IMM" },	\
			 { 0x04, "SEND_ONLY" }, { 0x05, "SEND_ONLY_IMM" },	\
			 { 0x06, "WRITE_FIRST" }, { 0x07, "WRITE_MIDDLE" },	\
			 { 0x08, "WRITE_LAST" }, { 0x09, "WRITE_LAST_IMM" },	\
			 { 0x0a, "WRITE_ONLY" }, { 0x0b, "WRITE_ONLY_IMM" },	\
			 { 0x0c, "READ_REQ" }, { 0x0d, "READ_RSP_FIRST" },	\
			 { 0x0e, "READ_RSP_MIDDLE" },			\
			 { 0x0f, "READ_RSP_LAST" },			\
			 { 0x10, "READ_RSP_ONLY" }, { 0x11, "ACK" },	\
			 { 0x12, "ATOMIC_ACK" }, { 0x13, "CMP_SWAP" },	\
			 { 0x14, "FETCH_ADD" }, { 0x16, "SEND_LAST_INV" },	\
			 { 0x17, "SEND_ONLY_INV" })

#define shca_show_wr(op)						\
	__print_symbolic(op,						\
			 { IB_WR_RDMA_WRITE, "WRITE" },			\
			 { IB_WR_RDMA_WRITE_WITH_IMM, "WRITE_IMM" },	\
			 { IB_WR_SEND, "SEND" },			\
			 { IB_WR_SEND_WITH_IMM, "SEND_IMM" },		\
			 { IB_WR_RDMA_READ, "READ" },			\
			 { IB_WR_ATOMIC_CMP_AND_SWP, "CMP_SWAP" },	\
			 { IB_WR_ATOMIC_FETCH_AND_ADD, "FETCH_ADD" },	\
			 { IB_WR_SEND_WITH_INV, "SEND_INV" },		\
			 { IB_WR_LOCAL_INV, "LOCAL_INV" },		\
			 { IB_WR_REG_MR, "REG_MR" },			\
			 { IB_WR_BIND_MW, "BIND_MW" },			\
			 { 14, "FLUSH" },	/* SHCA_WR_FLUSH */	\
			 { 15, "ATOMIC_WRITE" })

#define shca_show_wc(op)						\
	__print_symbolic(op,						\
			 { IB_WC_SEND, "SEND" },			\
			 { IB_WC_RDMA_WRITE, "WRITE" },			\
			 { IB_WC_RDMA_READ, "READ" },			\
			 { IB_WC_COMP_SWAP, "CMP_SWAP" },		\
			 { IB_WC_FETCH_ADD, "FETCH_ADD" },		\
			 { IB_WC_BIND_MW, "BIND_MW" },			\
			 { IB_WC_LOCAL_INV, "LOCAL_INV" },		\
			 { IB_WC_REG_MR, "REG_MR" },			\
			 { 8, "FLUSH" },	/* SHCA_WC_FLUSH */	\
			 { 9, "ATOMIC_WRITE" },				\
			 { IB_WC_RECV, "RECV" },			\
			 { IB_WC_RECV_RDMA_WITH_IMM, "RECV_WRITE_IMM" })

#define shca_show_status(st)						\
	__print_symbolic(st,						\
			 { IB_WC_SUCCESS, "SUCCESS" },			\
			 { IB_WC_LOC_LEN_ERR, "LOC_LEN_ERR" },		\
			 { IB_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR" },	\
			 { IB_WC_LOC_PROT_ERR, "LOC_PROT_ERR" },	\
			 { IB_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR" },	\
			 { IB_WC_MW_BIND_ERR, "MW_BIND_ERR" },		\
			 { IB_WC_BAD_RESP_ERR, "BAD_RESP_ERR" },	\
			 { IB_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR" },	\
			 { IB_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR" },	\
			 { IB_WC_REM_OP_ERR, "REM_OP_ERR" },		\
			 { IB_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR" },	\
			 { IB_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR" },	\
			 { IB_WC_GENERAL_ERR, "GENERAL_ERR" })

#define shca_show_aeth(syn)						\
	__print_symbolic((syn) >> 5,					\
			 { 0, "ACK" }, { 1, "RNR_NAK" }, { 3, "NAK" })

#define shca_show_qps(s)						\
	__print_symbolic(s,						\
			 { IB_QPS_RESET, "RESET" }, { IB_QPS_INIT, "INIT" },	\
			 { IB_QPS_RTR, "RTR" }, { IB_QPS_RTS, "RTS" },	\
			 { IB_QPS_SQD, "SQD" }, { IB_QPS_SQE, "SQE" },	\
			 { IB_QPS_ERR, "ERR" })

#define shca_show_db(s)							\
	__print_symbolic(s,						\
			 { SHCA_DB_IDLE, "IDLE" }, { SHCA_DB_OWED, "OWED" },	\
			 { SHCA_DB_WATCHED, "WATCHED" },			\
			 { SHCA_DB_LINGERING, "LINGERING" })

#define shca_show_why(w)						\
	__print_symbolic(w,						\
			 { SHCA_RETRY_NAK_SEQ, "nak_seq" },		\
			 { SHCA_RETRY_IMPLICIT, "implicit_nak" },	\
			 { SHCA_RETRY_RSP_GAP, "response_gap" },	\
			 { SHCA_RETRY_RNR, "rnr" },			\
			 { SHCA_RETRY_TIMEOUT, "timeout" })

#define shca_show_path(p)						\
	__print_symbolic(p,						\
			 { SHCA_PATH_IP, "ip" }, { SHCA_PATH_HELD, "held" },	\
			 { SHCA_PATH_LOCAL, "local" })

/* ---- work requests ---------------------------------------------------- */

/*
 * A kernel ULP posted send work requests into a kernel QP's ring (the
 * verb); @prod is the ring's producer index after them.
 */
TRACE_EVENT(shca_post_send,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 prod, u32 n),
	TP_ARGS(ibdev, qpn, prod, n),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, prod)
		__field(u32, n)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->prod = prod;
		__entry->n = n;
	),
	TP_printk("dev=%s qpn=%u prod=%u posted=%u", __get_str(dev),
		  __entry->qpn, __entry->prod, __entry->n)
);

/*
 * A process rang a user QP's send doorbell (its post_send system call);
 * @prod is the producer index the engine reads from the ring then.
 */
TRACE_EVENT(shca_doorbell,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 prod, u8 state),
	TP_ARGS(ibdev, qpn, prod, state),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, prod)
		__field(u8, state)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->prod = prod;
		__entry->state = state;
	),
	TP_printk("dev=%s qpn=%u prod=%u ring=%s", __get_str(dev),
		  __entry->qpn, __entry->prod, shca_show_db(__entry->state))
);

/* A user QP's send ring changed state with the engine (shca_doorbell.c). */
TRACE_EVENT(shca_db_state,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u8 from, u8 to, bool direct,
		 u32 window),
	TP_ARGS(ibdev, qpn, from, to, direct, window),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, window)
		__field(u8, from)
		__field(u8, to)
		__field(bool, direct)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->window = window;
		__entry->from = from;
		__entry->to = to;
		__entry->direct = direct;
	),
	TP_printk("dev=%s qpn=%u from=%s to=%s direct=%d window_ns=%u",
		  __get_str(dev), __entry->qpn, shca_show_db(__entry->from),
		  shca_show_db(__entry->to), __entry->direct, __entry->window)
);

/*
 * The fetch stage copied and checked the send WQE at ring index @idx
 * (@status: SUCCESS, or the error it completes with).
 */
TRACE_EVENT(shca_fetch,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 idx, u64 wr_id, u8 opcode,
		 u32 len, u8 status),
	TP_ARGS(ibdev, qpn, idx, wr_id, opcode, len, status),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u64, wr_id)
		__field(u32, qpn)
		__field(u32, idx)
		__field(u32, len)
		__field(u8, opcode)
		__field(u8, status)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->wr_id = wr_id;
		__entry->qpn = qpn;
		__entry->idx = idx;
		__entry->len = len;
		__entry->opcode = opcode;
		__entry->status = status;
	),
	TP_printk("dev=%s qpn=%u idx=%u wr_id=0x%llx op=%s len=%u status=%s",
		  __get_str(dev), __entry->qpn, __entry->idx, __entry->wr_id,
		  shca_show_wr(__entry->opcode), __entry->len,
		  shca_show_status(__entry->status))
);

/* ---- packets ---------------------------------------------------------- */

/*
 * The requester built the packet at @psn of the message of send WQE @idx
 * (@off: its first payload byte in the message); @retrans: sent before.
 */
TRACE_EVENT(shca_req_pkt,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 dqpn, u32 psn, u8 opcode,
		 u32 idx, u32 off, u32 len, bool retrans, bool ack_req),
	TP_ARGS(ibdev, qpn, dqpn, psn, opcode, idx, off, len, retrans, ack_req),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, idx)
		__field(u32, off)
		__field(u32, len)
		__field(u8, opcode)
		__field(bool, retrans)
		__field(bool, ack_req)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->dqpn = dqpn;
		__entry->psn = psn;
		__entry->idx = idx;
		__entry->off = off;
		__entry->len = len;
		__entry->opcode = opcode;
		__entry->retrans = retrans;
		__entry->ack_req = ack_req;
	),
	TP_printk("dev=%s qpn=%u dqpn=%u psn=%u op=%s_%s idx=%u off=%u len=%u retrans=%d ack_req=%d",
		  __get_str(dev), __entry->qpn, __entry->dqpn, __entry->psn,
		  shca_show_transport(__entry->opcode),
		  shca_show_op(__entry->opcode), __entry->idx, __entry->off,
		  __entry->len, __entry->retrans, __entry->ack_req)
);

DECLARE_EVENT_CLASS(shca_pkt_class,
	TP_PROTO(struct ib_device *ibdev, const struct sk_buff *skb),
	TP_ARGS(ibdev, skb),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->dqpn = shca_bth_dest_qpn(skb->data);
		__entry->psn = shca_bth_psn(skb->data);
		__entry->len = skb->len;
		__entry->opcode = shca_bth_opcode(skb->data);
	),
	TP_printk("dev=%s dqpn=%u psn=%u op=%s_%s len=%u", __get_str(dev),
		  __entry->dqpn, __entry->psn,
		  shca_show_transport(__entry->opcode),
		  shca_show_op(__entry->opcode), __entry->len)
);

/*
 * The wire layer took a packet a QP built (skb->data at its BTH; @len:
 * from the BTH to the end of the ICRC).
 */
DEFINE_EVENT(shca_pkt_class, shca_xmit,
	TP_PROTO(struct ib_device *ibdev, const struct sk_buff *skb),
	TP_ARGS(ibdev, skb)
);

/*
 * A packet arrived for the device (the engine's entry, skb->data at its
 * BTH, the ICRC not checked yet; @len includes it).
 */
DEFINE_EVENT(shca_pkt_class, shca_rx,
	TP_PROTO(struct ib_device *ibdev, const struct sk_buff *skb),
	TP_ARGS(ibdev, skb)
);

/*
 * The packet left the wire layer (@bth: its BTH; @len: from the BTH to
 * the end of the ICRC): to the IP stack, after a hold, or to a device of
 * this host.
 */
TRACE_EVENT(shca_wire_tx,
	TP_PROTO(const void *bth, u32 len, u8 path),
	TP_ARGS(bth, len, path),
	TP_STRUCT__entry(
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
		__field(u8, path)
	),
	TP_fast_assign(
		__entry->dqpn = shca_bth_dest_qpn(bth);
		__entry->psn = shca_bth_psn(bth);
		__entry->len = len;
		__entry->opcode = shca_bth_opcode(bth);
		__entry->path = path;
	),
	TP_printk("dqpn=%u psn=%u op=%s_%s len=%u path=%s", __entry->dqpn,
		  __entry->psn, shca_show_transport(__entry->opcode),
		  shca_show_op(__entry->opcode), __entry->len,
		  shca_show_path(__entry->path))
);

/*
 * The receive drain took a packet for QP @qpn, its ICRC checked, and
 * hands it to the responder, the completer or UD receive.
 */
TRACE_EVENT(shca_rx_handle,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, const struct sk_buff *skb),
	TP_ARGS(ibdev, qpn, skb),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->psn = shca_bth_psn(skb->data);
		__entry->len = skb->len;
		__entry->opcode = shca_bth_opcode(skb->data);
	),
	TP_printk("dev=%s qpn=%u psn=%u op=%s_%s len=%u", __get_str(dev),
		  __entry->qpn, __entry->psn,
		  shca_show_transport(__entry->opcode),
		  shca_show_op(__entry->opcode), __entry->len)
);

/*
 * A packet's payload was placed: @len bytes at @off of the message (a
 * SEND's receive buffer, a WRITE's remote buffer, a READ response's
 * local one, a UD datagram's buffer after its GRH).
 */
TRACE_EVENT(shca_place,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 psn, u8 opcode, u32 off,
		 u32 len),
	TP_ARGS(ibdev, qpn, psn, opcode, off, len),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, off)
		__field(u32, len)
		__field(u8, opcode)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->off = off;
		__entry->len = len;
		__entry->opcode = opcode;
	),
	TP_printk("dev=%s qpn=%u psn=%u op=%s_%s off=%u len=%u",
		  __get_str(dev), __entry->qpn, __entry->psn,
		  shca_show_transport(__entry->opcode),
		  shca_show_op(__entry->opcode), __entry->off, __entry->len)
);

DECLARE_EVENT_CLASS(shca_aeth_class,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 psn, u8 syndrome,
		 u32 msn),
	TP_ARGS(ibdev, qpn, psn, syndrome, msn),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, msn)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->msn = msn;
		__entry->syndrome = syndrome;
	),
	TP_printk("dev=%s qpn=%u psn=%u type=%s value=%u msn=%u", __get_str(dev),
		  __entry->qpn, __entry->psn, shca_show_aeth(__entry->syndrome),
		  __entry->syndrome & 0x1f, __entry->msn)
);

/*
 * The responder of QP @qpn built an ACKNOWLEDGE packet: an ACK, an RNR
 * NAK or a NAK (value: credits, RNR timer code or NAK code).
 */
DEFINE_EVENT(shca_aeth_class, shca_ack_send,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 psn, u8 syndrome,
		 u32 msn),
	TP_ARGS(ibdev, qpn, psn, syndrome, msn)
);

/* The completer of QP @qpn took an ACKNOWLEDGE packet's AETH. */
DEFINE_EVENT(shca_aeth_class, shca_ack_recv,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 psn, u8 syndrome,
		 u32 msn),
	TP_ARGS(ibdev, qpn, psn, syndrome, msn)
);

/* ---- recovery --------------------------------------------------------- */

/*
 * The requester decided to go back to @una_psn (the oldest PSN not
 * answered) for reason @why; @retry: retries left (RNR retries for an
 * RNR NAK).
 */
TRACE_EVENT(shca_retry,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 una_psn, u8 why,
		 int retry),
	TP_ARGS(ibdev, qpn, una_psn, why, retry),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, una_psn)
		__field(int, retry)
		__field(u8, why)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->una_psn = una_psn;
		__entry->retry = retry;
		__entry->why = why;
	),
	TP_printk("dev=%s qpn=%u una_psn=%u why=%s retries_left=%d",
		  __get_str(dev), __entry->qpn, __entry->una_psn,
		  shca_show_why(__entry->why), __entry->retry)
);

/*
 * The ACK timeout of QP @qpn expired with @una_psn unanswered; @retry:
 * retries left before it (0: the WQE fails with RETRY_EXC_ERR).
 */
TRACE_EVENT(shca_timeout,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 una_psn, int retry),
	TP_ARGS(ibdev, qpn, una_psn, retry),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, una_psn)
		__field(int, retry)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->una_psn = una_psn;
		__entry->retry = retry;
	),
	TP_printk("dev=%s qpn=%u una_psn=%u retries_left=%d", __get_str(dev),
		  __entry->qpn, __entry->una_psn, __entry->retry)
);

/*
 * An RNR NAK for @psn stopped QP @qpn's requester for @wait_us; @retry:
 * RNR retries left before it (7: infinite).
 */
TRACE_EVENT(shca_rnr,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 psn, u32 wait_us,
		 int retry),
	TP_ARGS(ibdev, qpn, psn, wait_us, retry),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, wait_us)
		__field(int, retry)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->psn = psn;
		__entry->wait_us = wait_us;
		__entry->retry = retry;
	),
	TP_printk("dev=%s qpn=%u psn=%u wait_us=%u rnr_retries_left=%d",
		  __get_str(dev), __entry->qpn, __entry->psn, __entry->wait_us,
		  __entry->retry)
);

/*
 * The requester moved its cursor back to @from_psn (go back N) and
 * resends up to @to_psn.
 */
TRACE_EVENT(shca_replay,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 from_psn, u32 to_psn),
	TP_ARGS(ibdev, qpn, from_psn, to_psn),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, from_psn)
		__field(u32, to_psn)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->from_psn = from_psn;
		__entry->to_psn = to_psn;
	),
	TP_printk("dev=%s qpn=%u from_psn=%u to_psn=%u", __get_str(dev),
		  __entry->qpn, __entry->from_psn, __entry->to_psn)
);

/* ---- completions, QPs ------------------------------------------------- */

/*
 * A completion was written into CQ @cqn at producer index @prod; @fire:
 * it raises the completion event.
 */
TRACE_EVENT(shca_cqe,
	TP_PROTO(struct ib_device *ibdev, u32 cqn, u32 prod, u32 qpn, u64 wr_id,
		 u8 opcode, u8 status, u32 len, bool fire),
	TP_ARGS(ibdev, cqn, prod, qpn, wr_id, opcode, status, len, fire),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u64, wr_id)
		__field(u32, cqn)
		__field(u32, prod)
		__field(u32, qpn)
		__field(u32, len)
		__field(u8, opcode)
		__field(u8, status)
		__field(bool, fire)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->wr_id = wr_id;
		__entry->cqn = cqn;
		__entry->prod = prod;
		__entry->qpn = qpn;
		__entry->len = len;
		__entry->opcode = opcode;
		__entry->status = status;
		__entry->fire = fire;
	),
	TP_printk("dev=%s cqn=%u prod=%u qpn=%u wr_id=0x%llx op=%s status=%s len=%u event=%d",
		  __get_str(dev), __entry->cqn, __entry->prod, __entry->qpn,
		  __entry->wr_id, shca_show_wc(__entry->opcode),
		  shca_show_status(__entry->status), __entry->len,
		  __entry->fire)
);

/* CQ @cqn's completion handler is called (from the CQ's tasklet). */
TRACE_EVENT(shca_comp_handler,
	TP_PROTO(struct ib_device *ibdev, u32 cqn),
	TP_ARGS(ibdev, cqn),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, cqn)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->cqn = cqn;
	),
	TP_printk("dev=%s cqn=%u", __get_str(dev), __entry->cqn)
);

/* QP @qpn moved from state @from to @to (modify_qp, or an error). */
TRACE_EVENT(shca_qp_state,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u8 from, u8 to),
	TP_ARGS(ibdev, qpn, from, to),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u8, from)
		__field(u8, to)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("dev=%s qpn=%u from=%s to=%s", __get_str(dev), __entry->qpn,
		  shca_show_qps(__entry->from), shca_show_qps(__entry->to))
);

/* ---- mechanisms ------------------------------------------------------- */

/*
 * A copy of a multicast packet (@psn) reached member QP @qpn (the
 * replication stage queued it, the receive drain took it).
 */
TRACE_EVENT(shca_mc_copy,
	TP_PROTO(struct ib_device *ibdev, u32 qpn, u32 psn),
	TP_ARGS(ibdev, qpn, psn),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, qpn)
		__field(u32, psn)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->qpn = qpn;
		__entry->psn = psn;
	),
	TP_printk("dev=%s qpn=%u psn=%u", __get_str(dev), __entry->qpn,
		  __entry->psn)
);

/*
 * An invalidation swept R_Key @rkey from the slots of PD @pdn's QPs:
 * @visited slot sets, @cleared slots.
 */
TRACE_EVENT(shca_rkey_sweep,
	TP_PROTO(struct ib_device *ibdev, u32 pdn, u32 rkey, u32 visited,
		 u32 cleared),
	TP_ARGS(ibdev, pdn, rkey, visited, cleared),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, pdn)
		__field(u32, rkey)
		__field(u32, visited)
		__field(u32, cleared)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->pdn = pdn;
		__entry->rkey = rkey;
		__entry->visited = visited;
		__entry->cleared = cleared;
	),
	TP_printk("dev=%s pdn=%u rkey=0x%08x sets=%u cleared=%u",
		  __get_str(dev), __entry->pdn, __entry->rkey,
		  __entry->visited, __entry->cleared)
);

/*
 * A producer committed @bytes into device-memory range @idx armed for a
 * DRDMA WRITE; @count: bytes committed so far, @total: the transfer's
 * (equal: the WRITE may leave), @ret: 0 or the commit's error.
 */
TRACE_EVENT(shca_drdma_commit,
	TP_PROTO(struct ib_device *ibdev, u32 idx, u32 bytes, u32 count,
		 u32 total, int ret),
	TP_ARGS(ibdev, idx, bytes, count, total, ret),
	TP_STRUCT__entry(
		__string(dev, dev_name(&ibdev->dev))
		__field(u32, idx)
		__field(u32, bytes)
		__field(u32, count)
		__field(u32, total)
		__field(int, ret)
	),
	TP_fast_assign(
		shca_trace_dev();
		__entry->idx = idx;
		__entry->bytes = bytes;
		__entry->count = count;
		__entry->total = total;
		__entry->ret = ret;
	),
	TP_printk("dev=%s range=%u bytes=%u count=%u total=%u ret=%d",
		  __get_str(dev), __entry->idx, __entry->bytes,
		  __entry->count, __entry->total, __entry->ret)
);

#endif /* SHCA_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE shca_trace
#include <trace/define_trace.h>
