// SPDX-License-Identifier: GPL-2.0
/*
 * shca device attributes: what query_device and query_port report, the
 * P_Key table, port events, the hardware counters and the sysfs files.
 */
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <linux/version.h>
#include "shca.h"
#include "shca_attr.h"
#include "shca_dev.h"
#include "shca_dmw.h"
#include "shca_engine.h"
#include "shca_func.h"
#include "shca_net.h"
#include "shca_mem.h"
#include "shca_qpc.h"

/*
 * ATOMIC WRITE needs nothing of the RDMA core (user QPs post it through
 * their rings), so it is reported from Linux 6.1 on: before 6.2 with the
 * value 6.2's uapi gives IB_UVERBS_DEVICE_ATOMIC_WRITE, which the core
 * passes on in device_cap_flags_ex.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SHCA_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define SHCA_DEVICE_ATOMIC_WRITE	BIT_ULL(40)
#endif

/**
 * shca_query_device - report the device's attributes and limits
 * @ibdev: the device
 * @attr: filled in whole
 * @udata: must carry no input and expect no output (none is defined)
 *
 * The QP, CQ, MR and AH counts follow the max_qp, max_cq, max_mr and
 * max_ah module parameters, so they say exactly what creation will allow;
 * the other limits are the SHCA_MAX_* constants the verbs enforce.
 *
 * Return: 0, or -EINVAL when @udata carries data.
 */
int shca_query_device(struct ib_device *ibdev,
		      struct ib_device_attr *attr,
		      struct ib_udata *udata)
{
	struct shca_dev *sdev = to_sdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = SHCA_FW_VER;
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->vendor_id = SHCA_VENDOR_ID;
	attr->vendor_part_id = SHCA_VENDOR_PART_ID;
	attr->hw_ver = SHCA_HW_VER;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_mr_size = SHCA_MAX_MR_SIZE;
	attr->max_pd = SHCA_MAX_PD;
	attr->max_pkeys = SHCA_PKEY_TBL_LEN;
	attr->max_qp = shca_max_qp - SHCA_FIRST_QPN;
	attr->max_qp_wr = SHCA_MAX_QP_WR;
	attr->max_send_sge = SHCA_MAX_SGE;
	attr->max_recv_sge = SHCA_MAX_SGE;
	attr->max_sge_rd = SHCA_MAX_SGE;
	attr->max_cq = shca_max_cq;
	attr->max_cqe = SHCA_MAX_CQE;
	attr->max_mr = shca_max_mr;
	attr->max_mw = shca_max_mr;
	attr->max_dm_size = shca_dmw_max_size();
	attr->max_fast_reg_page_list_len = SHCA_MAX_FAST_REG_PAGES;
	attr->max_qp_rd_atom = SHCA_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SHCA_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SHCA_MAX_RD_ATOMIC * shca_max_qp;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_srq = SHCA_MAX_SRQ;
	attr->max_srq_wr = SHCA_MAX_SRQ_WR;
	attr->max_srq_sge = SHCA_MAX_SGE;
	attr->max_ah = shca_max_ah;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	/* IBA 1.5: ATOMIC WRITE; FLUSH to global visibility (not persistence) */
	attr->device_cap_flags |= SHCA_DEVICE_ATOMIC_WRITE;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	attr->device_cap_flags |= IB_DEVICE_FLUSH_GLOBAL;
#endif
	attr->max_mcast_grp = SHCA_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SHCA_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SHCA_MAX_TOTAL_MCAST_QP_ATTACH;
	attr->local_ca_ack_delay = 15;
	/* completion timestamps: CLOCK_MONOTONIC nanoseconds, 64 bits */
	attr->hca_core_clock = SHCA_CORE_CLOCK_KHZ;
	attr->timestamp_mask = U64_MAX;
	/* user space may delete the device with `rdma link delete` */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG |
				 IBK_BLOCK_MULTICAST_LOOPBACK;
	return 0;
}

/**
 * shca_query_port - report the port's state, MTUs and capabilities
 * @ibdev: the device
 * @port: the port (always 1; the RDMA core checks it)
 * @attr: zeroed by the caller, filled in here
 *
 * The state follows the netdev (shca_net_port_state()); the active MTU
 * is the largest IB MTU that fits the netdev's current MTU, at least
 * 256.  Speed and width are the netdev's, as ib_get_eth_speed() reads
 * them.
 *
 * Return: 0, or the error of ib_get_eth_speed().
 */
int shca_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr)
{
	struct shca_dev *sdev = to_sdev(ibdev);
	struct net_device *ndev = sdev->ndev;
	int ret;

	/* the caller zeroed *attr */
	attr->state = shca_net_port_state(sdev);
	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (dev_get_flags(ndev) & IFF_UP)
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;

	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = iboe_get_mtu(READ_ONCE(ndev->mtu));
	if (!attr->active_mtu)
		attr->active_mtu = IB_MTU_256;
	attr->gid_tbl_len = SHCA_GID_TBL_LEN;
	attr->pkey_tbl_len = SHCA_PKEY_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SHCA_MAX_MSG_SIZE;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->ip_gids = true;

	ret = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	return ret;
}

/**
 * shca_get_port_immutable - the port's fixed properties: RoCEv2 only
 * @ibdev: the device
 * @port: the port; only port 1 exists
 * @immutable: filled in
 *
 * Return: 0, or -EINVAL for a port other than 1.
 */
int shca_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable)
{
	if (port != 1)
		return -EINVAL;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SHCA_PKEY_TBL_LEN;
	immutable->gid_tbl_len = SHCA_GID_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/**
 * shca_query_pkey - read the P_Key table, which holds only the default
 * @ibdev: the device
 * @port: the port
 * @index: table index
 * @pkey: the P_Key at @index
 *
 * Return: 0, or -EINVAL for an index past the table.
 */
int shca_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
		    u16 *pkey)
{
	if (index >= SHCA_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = SHCA_DEFAULT_PKEY;
	return 0;
}

/**
 * shca_get_link_layer - the port's link layer: always Ethernet
 * @ibdev: the device
 * @port: the port
 *
 * Return: IB_LINK_LAYER_ETHERNET.
 */
enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev,
					 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/**
 * shca_get_netdev - the port's netdev, for the core's legacy device op
 * @ibdev: the device
 * @port: the port
 *
 * The core keeps the netdev shca gave ib_device_set_netdev() and asks
 * this op first when a driver has it.  6.1's SMC-R looks for the RDMA
 * port of a netdev that has no PNET ID through this op alone (later
 * kernels ask ib_device_get_netdev()), as hardware HCAs offer it; without
 * it an SMC connection over shca falls back to TCP there.  The device
 * holds its netdev until it is freed, so the reference taken here is
 * always on a live netdev; the core drops a netdev that is unregistering.
 *
 * Return: the netdev with a reference the caller puts.
 */
struct net_device *shca_get_netdev(struct ib_device *ibdev, u32 port)
{
	struct net_device *ndev = to_sdev(ibdev)->ndev;

	dev_hold(ndev);
	return ndev;
}

/**
 * shca_modify_device - change the node description
 * @ibdev: the device
 * @mask: what to change
 * @attr: the new values
 *
 * A new system image GUID is accepted but changes nothing: the device
 * reports its node GUID as the system image GUID.
 *
 * Return: 0, or -EOPNOTSUPP for any other bit in @mask.
 */
int shca_modify_device(struct ib_device *ibdev, int mask,
		       struct ib_device_modify *attr)
{
	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, attr->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

/**
 * shca_dev_port_event - tell RDMA core users about a port change
 * @sdev: device
 * @type: IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR
 */
void shca_dev_port_event(struct shca_dev *sdev, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

static const struct rdma_stat_desc shca_counter_descs[] = {
	[SHCA_CNT_RX_PKTS] = { .name = "rx_pkts" },
	[SHCA_CNT_RX_BYTES] = { .name = "rx_bytes" },
	[SHCA_CNT_TX_PKTS] = { .name = "tx_pkts" },
	[SHCA_CNT_TX_BYTES] = { .name = "tx_bytes" },
	[SHCA_CNT_TX_DROP] = { .name = "tx_drop" },
	[SHCA_CNT_RX_DROP_BAD_HDR] = { .name = "rx_drop_bad_hdr" },
	[SHCA_CNT_RX_DROP_BAD_ICRC] = { .name = "rx_drop_bad_icrc" },
	[SHCA_CNT_RX_DROP_NO_QP] = { .name = "rx_drop_no_qp" },
	[SHCA_CNT_RX_DROP_QP_STATE] = { .name = "rx_drop_qp_state" },
	[SHCA_CNT_RX_DROP_BAD_KEY] = { .name = "rx_drop_bad_key" },
	[SHCA_CNT_RX_DROP_OPCODE] = { .name = "rx_drop_opcode" },
	[SHCA_CNT_RX_DROP_PSN] = { .name = "rx_drop_psn" },
	[SHCA_CNT_RX_DROP_QUEUE_FULL] = { .name = "rx_drop_queue_full" },
	[SHCA_CNT_RX_DROP_TOO_LONG] = { .name = "rx_drop_too_long" },
	[SHCA_CNT_RX_DROP_NOT_PEER] = { .name = "rx_drop_not_peer" },
	[SHCA_CNT_ACK_SENT] = { .name = "ack_sent" },
	[SHCA_CNT_ACK_RCVD] = { .name = "ack_rcvd" },
	[SHCA_CNT_NAK_SEQ_SENT] = { .name = "nak_seq_sent" },
	[SHCA_CNT_NAK_SEQ_RCVD] = { .name = "nak_seq_rcvd" },
	[SHCA_CNT_NAK_OTHER_SENT] = { .name = "nak_other_sent" },
	[SHCA_CNT_NAK_OTHER_RCVD] = { .name = "nak_other_rcvd" },
	[SHCA_CNT_RNR_NAK_SENT] = { .name = "rnr_nak_sent" },
	[SHCA_CNT_RNR_NAK_RCVD] = { .name = "rnr_nak_rcvd" },
	[SHCA_CNT_RETRANSMIT_PKTS] = { .name = "retransmit_pkts" },
	[SHCA_CNT_TIMEOUTS] = { .name = "timeouts" },
	[SHCA_CNT_DUP_REQ] = { .name = "dup_req" },
	[SHCA_CNT_DUP_RD_ATOMIC] = { .name = "dup_rd_atomic" },
	[SHCA_CNT_HIST_REPLAYS] = { .name = "hist_replays" },
	[SHCA_CNT_COMPLETIONS] = { .name = "completions" },
	[SHCA_CNT_LLQ_REFUSED] = { .name = "llq_refused" },
	[SHCA_CNT_LLQ_ENTRIES_HWM] = { .name = "llq_entries_hwm" },
	[SHCA_CNT_LLQ_RX_ENTRIES] = { .name = "llq_rx_entries" },
	[SHCA_CNT_LLQ_TX_ENTRIES] = { .name = "llq_tx_entries" },
	[SHCA_CNT_LLQ_LISTS] = { .name = "llq_lists" },
	[SHCA_CNT_DB_RINGS] = { .name = "db_rings" },
	[SHCA_CNT_DB_POLL_HITS] = { .name = "db_poll_hits" },
	[SHCA_CNT_DB_IDLE] = { .name = "db_idle" },
	[SHCA_CNT_DB_POLLS] = { .name = "db_polls" },
	[SHCA_CNT_DB_DIRECT] = { .name = "db_direct" },
	[SHCA_CNT_DB_DIRECT_ENDS] = { .name = "db_direct_ends" },
	[SHCA_CNT_TX_INLINE] = { .name = "tx_inline" },
	[SHCA_CNT_TX_HELD] = { .name = "tx_held" },
	[SHCA_CNT_RX_HELD] = { .name = "rx_held" },
	[SHCA_CNT_TX_QP_CREDIT_WAITS] = { .name = "tx_qp_credit_waits" },
	[SHCA_CNT_TX_CTX_CREDIT_WAITS] = { .name = "tx_ctx_credit_waits" },
	[SHCA_CNT_TX_USER_ENTRIES] = { .name = "tx_user_entries" },
	[SHCA_CNT_ACK_DEFERRED] = { .name = "ack_deferred" },
	[SHCA_CNT_RSP_CPU_WAITS] = { .name = "rsp_cpu_waits" },
	[SHCA_CNT_TX_ROUTE_CACHED] = { .name = "tx_route_cached" },
	[SHCA_CNT_RX_HANDOFFS] = { .name = "rx_handoffs" },
	[SHCA_CNT_PAYLOAD_COPY_BYTES] = { .name = "payload_copy_bytes" },
	[SHCA_CNT_PAYLOAD_RX_BYTES] = { .name = "payload_rx_bytes" },
	[SHCA_CNT_TX_FRAG_BYTES] = { .name = "tx_frag_bytes" },
	[SHCA_CNT_RKEY_SWEEPS] = { .name = "rkey_sweeps" },
	[SHCA_CNT_RKEY_SLOTS_CLEARED] = { .name = "rkey_slots_cleared" },
	[SHCA_CNT_RKEY_SETS_VISITED] = { .name = "rkey_sets_visited" },
	[SHCA_CNT_RKEY_SWEPT_REFUSED] = { .name = "rkey_swept_refused" },
	[SHCA_CNT_RKEY_SLOT_HITS] = { .name = "rkey_slot_hits" },
	[SHCA_CNT_RKEY_REFUSED_KEY] = { .name = "rkey_refused_key" },
	[SHCA_CNT_RKEY_REFUSED_ACCESS] = { .name = "rkey_refused_access" },
	[SHCA_CNT_INV_REFUSED] = { .name = "inv_refused" },
	[SHCA_CNT_MC_RX_PKTS] = { .name = "mcast_rx_pkts" },
	[SHCA_CNT_MC_TX_PKTS] = { .name = "mcast_tx_pkts" },
	[SHCA_CNT_MC_COPIES] = { .name = "mcast_copies" },
	[SHCA_CNT_MC_DROP_NO_GROUP] = { .name = "mcast_drop_no_group" },
	[SHCA_CNT_MC_DROP_THRESHOLD] = { .name = "mcast_drop_threshold" },
	[SHCA_CNT_MC_DROP_QUEUE] = { .name = "mcast_drop_queue" },
	[SHCA_CNT_MC_CREDIT_STALLS] = { .name = "mcast_credit_stalls" },
	[SHCA_CNT_MC_GROUPS] = { .name = "mcast_groups" },
	[SHCA_CNT_MC_ATTACHED] = { .name = "mcast_attached" },
	[SHCA_CNT_LLQ_CREDIT_REFUSED] = { .name = "llq_credit_refused" },
	[SHCA_CNT_DM_RANGES] = { .name = "dm_ranges" },
	[SHCA_CNT_DM_WRITES] = { .name = "dm_drdma_writes" },
	[SHCA_CNT_DM_TX_BYTES] = { .name = "dm_tx_frag_bytes" },
	[SHCA_CNT_DM_READ_BYTES] = { .name = "dm_drdma_read_bytes" },
	[SHCA_CNT_DM_WAITING] = { .name = "dm_wqes_waiting" },
	[SHCA_CNT_TX_LOCAL] = { .name = "tx_local_pkts" },
	[SHCA_CNT_KPOST_INLINE] = { .name = "kpost_inline" },
	[SHCA_CNT_KPOST_STAGED] = { .name = "kpost_staged" },
	[SHCA_CNT_FLUSH_RXE_ICRC] = { .name = "flush_rxe_icrc" },
	[SHCA_CNT_RX_DROP_FLUSH_RES] = { .name = "rx_drop_flush_res" },
};

/**
 * shca_alloc_hw_port_stats - allocate the port's hardware counters
 * @ibdev: the device
 * @port: the port
 *
 * The counters are the device's (Documentation/counters.md) and are
 * read afresh on every query.
 *
 * Return: the counter set, or NULL when out of memory.
 */
struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	BUILD_BUG_ON(ARRAY_SIZE(shca_counter_descs) != SHCA_NUM_COUNTERS);
	return rdma_alloc_hw_stats_struct(shca_counter_descs,
					  ARRAY_SIZE(shca_counter_descs),
					  0);	/* always fresh: reading is cheap */
}

/**
 * shca_get_hw_stats - read every hardware counter
 * @ibdev: the device
 * @stats: where the values go
 * @port: the port
 * @index: the counter asked for; all are read anyway
 *
 * Counters kept by the engine (the linked-list queues' state) are
 * brought up to date first.
 *
 * Return: the number of counters.
 */
int shca_get_hw_stats(struct ib_device *ibdev,
		      struct rdma_hw_stats *stats, u32 port, int index)
{
	struct shca_dev *sdev = to_sdev(ibdev);
	int i;

	if (sdev->eng)
		shca_engine_update_stats(sdev);
	for (i = 0; i < SHCA_NUM_COUNTERS; i++)
		stats->value[i] = atomic64_read(&sdev->stats[i]);
	return SHCA_NUM_COUNTERS;
}

static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SHCA_HCA_TYPE);
}

static DEVICE_ATTR_RO(hca_type);

static ssize_t hw_rev_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", SHCA_HW_VER);
}

static DEVICE_ATTR_RO(hw_rev);

static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct shca_dev *sdev =
		rdma_device_to_drv_device(device, struct shca_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}

static DEVICE_ATTR_RO(parent);

/* "<function number> <the engine's netdev>" */
static ssize_t func_show(struct device *device,
			 struct device_attribute *attr, char *buf)
{
	struct shca_dev *sdev =
		rdma_device_to_drv_device(device, struct shca_dev, ibdev);

	return sysfs_emit(buf, "%u %s\n", sdev->fn,
			  netdev_name(sdev->eng->ndev));
}

static DEVICE_ATTR_RO(func);

static ssize_t func_credit_show(struct device *device,
				struct device_attribute *attr, char *buf)
{
	struct shca_dev *sdev =
		rdma_device_to_drv_device(device, struct shca_dev, ibdev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(sdev->credit_pct));
}

static ssize_t func_credit_store(struct device *device,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct shca_dev *sdev =
		rdma_device_to_drv_device(device, struct shca_dev, ibdev);
	u32 pct;
	int ret;

	ret = kstrtou32(buf, 0, &pct);
	if (!ret)
		ret = shca_func_set_credit(sdev, pct);
	return ret ? ret : count;
}

static DEVICE_ATTR_RW(func_credit);

static struct attribute *shca_dev_attrs[] = {
	&dev_attr_hca_type.attr,
	&dev_attr_hw_rev.attr,
	&dev_attr_parent.attr,
	&dev_attr_func.attr,
	&dev_attr_func_credit.attr,
	NULL
};

const struct attribute_group shca_dev_attr_group = {
	.attrs = shca_dev_attrs,
};
