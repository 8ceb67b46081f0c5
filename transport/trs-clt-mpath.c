// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport client: which path a request goes to.
 *
 * A request goes to a connected path picked by the session's policy
 * (trs_clt_pick_path(), under RCU); the life of a path is trs-clt-path.c.
 */
#include "trs-clt.h"

/* The @n-th connected path (from 0), or NULL. */
static struct trs_clt_path *trs_clt_nth_up(struct trs_clt_sess *sess, u32 n)
{
	struct trs_clt_path *path;

	list_for_each_entry_rcu(path, &sess->paths, entry) {
		if (trs_clt_path_state(path) != TRS_CLT_PATH_CONNECTED)
			continue;
		if (!n--)
			return path;
	}
	return NULL;
}

/* Connected path whose connection @conn has the lowest @val. */
static struct trs_clt_path *trs_clt_min_path(struct trs_clt_sess *sess,
					     unsigned int conn, bool latency)
{
	struct trs_clt_path *path, *best = NULL;
	u64 val, best_val = U64_MAX;

	list_for_each_entry_rcu(path, &sess->paths, entry) {
		if (trs_clt_path_state(path) != TRS_CLT_PATH_CONNECTED)
			continue;
		val = latency ? READ_ONCE(path->conns[conn].lat_ns) :
		      READ_ONCE(path->conns[conn].inflight);
		if (!best || val < best_val) {
			best = path;
			best_val = val;
		}
	}
	return best;
}

/**
 * trs_clt_pick_path() - the path a request goes to
 * @sess: the session; rcu_read_lock() held
 * @conn: the connection index of the request (its CPU's)
 *
 * With one path, that path, whatever its state: the caller checks it
 * under the connection's lock.  With several, a connected one by the
 * session's policy (see enum trs_clt_mp_policy), or NULL if none is.
 *
 * Return: the path, valid until rcu_read_unlock().
 */
struct trs_clt_path *trs_clt_pick_path(struct trs_clt_sess *sess,
				       unsigned int conn)
{
	int policy = READ_ONCE(sess->mp_policy);
	u32 n, up = 0;
	struct trs_clt_path *path;

	if (likely(READ_ONCE(sess->nr_paths) <= 1))
		return list_first_or_null_rcu(&sess->paths,
					      struct trs_clt_path, entry);

	if (policy == TRS_CLT_MP_MIN_LATENCY &&
	    this_cpu_inc_return(*sess->rr_seq) % TRS_CLT_ML_PROBE)
		return trs_clt_min_path(sess, conn, true);
	if (policy == TRS_CLT_MP_MIN_INFLIGHT)
		return trs_clt_min_path(sess, conn, false);

	list_for_each_entry_rcu(path, &sess->paths, entry)
		if (trs_clt_path_state(path) == TRS_CLT_PATH_CONNECTED)
			up++;
	if (!up)
		return NULL;
	n = this_cpu_inc_return(*sess->rr_seq) % up;
	return trs_clt_nth_up(sess, n) ?: trs_clt_nth_up(sess, 0);
}

