// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: block IO.  Each RNBD_MSG_IO becomes one bio submitted
 * straight from the transport chunk (physically contiguous, one multi-page
 * bvec, no copy); the bio's completion answers the request.  A request to
 * a regular file goes to rnbd-srv-file.c instead, after the same checks.
 *
 * Bios are submitted from the connection's completion work, which must not
 * sleep on one device: with REQ_NOWAIT a device out of tags (or frozen, or
 * a suspended dm device) ends the bio with BLK_STS_AGAIN at once, and the
 * bio is submitted again, allowed to wait, from rnbd_srv_submit_wq.  The
 * connection goes on serving the session's other devices and heartbeats.
 *
 * Such bios wait in order: tags are not handed out in order (a new
 * allocation takes the tag a sleeping one was woken for, and the loser
 * goes back to the end of a wait queue), so under a steady stream one bio
 * left to compete with newer ones could wait as long as the stream lasts,
 * past the client's request timeout.  Each device has a FIFO per CPU,
 * filled on the CPU that got the refusal and submitted there, one bio per
 * run, by that FIFO's work; while any bio of the device waits, its new
 * bios join their CPU's FIFO instead of trying REQ_NOWAIT.  The bios that
 * compete for a tag are then the FIFOs' heads only, one per CPU, all of
 * them waiting in the tag's wait queue; and the stream stays spread over
 * the CPUs its connections run on (one FIFO for the device would move the
 * whole of it onto one worker).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/ioprio.h>
#include <linux/mm.h>
#include <linux/percpu.h>

#include "rnbd-srv.h"
#include "rnbd-srv-trace.h"

/**
 * struct rnbd_srv_io - one IO in flight
 * @req: the request to answer
 * @dev: device, referenced until the answer
 * @read_len: bytes to return on success
 * @opf: the bio's op and flags
 * @wait_entry: in a FIFO of its device while it waits to be submitted
 *	again (struct rnbd_srv_dev_waitq)
 * @bio: the bio; the bioset's front_pad holds the fields above
 */
struct rnbd_srv_io {
	struct trs_srv_req	*req;
	struct rnbd_srv_dev	*dev;
	u32			read_len;
	blk_opf_t		opf;
	struct list_head	wait_entry;
	struct bio		bio;
};

static struct bio_set rnbd_srv_bio_set;
/* Submits the bios a device refused without waiting; may block. */
static struct workqueue_struct *rnbd_srv_submit_wq;

static void rnbd_srv_bio_end_io(struct bio *bio);

/*
 * The IO priority to serve a request with: see rnbd_srv_io_prio().  Always
 * inlined, as the other checks: the block path makes no call for them.
 */
static __always_inline u16 __rnbd_srv_io_prio(const struct trs_srv_req *req,
					      const struct rnbd_msg_io *msg)
{
	u16 prio = le16_to_cpu(msg->prio);
	u16 class = IOPRIO_PRIO_CLASS(prio);

	if (unlikely(class == IOPRIO_CLASS_RT) &&
	    !READ_ONCE(rnbd_srv_allow_rt_prio)) {
		pr_info_once("session %s: real-time IO priority served as best-effort (allow_rt_prio=0); logged once\n",
			     trs_srv_sess_name(req->sess));
		class = IOPRIO_CLASS_BE;
	}
	return IOPRIO_PRIO_VALUE(class, IOPRIO_PRIO_LEVEL(prio));
}

/* Point @io's bio at its request's sectors and data. */
static void rnbd_srv_io_fill(struct rnbd_srv_io *io)
{
	const struct rnbd_msg_io *msg = io->req->usr_hdr;
	struct trs_srv_req *req = io->req;
	struct bio *bio = &io->bio;
	u32 len = le32_to_cpu(msg->len);

	bio->bi_end_io = rnbd_srv_bio_end_io;
	bio->bi_ioprio = __rnbd_srv_io_prio(req, msg);
	if (msg->op != RNBD_OP_FLUSH)
		bio->bi_iter.bi_sector = le64_to_cpu(msg->sector);
	if (req->dir == DMA_NONE)
		bio->bi_iter.bi_size = len;
	else
		__bio_add_page(bio, virt_to_page(req->data), len,
			       offset_in_page(req->data));
}

/**
 * rnbd_srv_dev_waitq_work() - submit the first bio of a FIFO of a device
 * @work: the FIFO's work; a run holds a reference of the device
 *
 * The bio may wait for the device (a tag) here, without REQ_NOWAIT.  One
 * bio per run: a device that takes bios without a sleep (null_blk copies
 * each one in its submit) would otherwise hold this CPU's worker pool, and
 * the works queued behind this one would wait for the whole FIFO.
 */
void rnbd_srv_dev_waitq_work(struct work_struct *work)
{
	struct rnbd_srv_dev_waitq *q = container_of(work,
						    struct rnbd_srv_dev_waitq,
						    work);
	struct rnbd_srv_dev *dev = q->dev;
	struct rnbd_srv_io *io;
	bool more;

	spin_lock_irq(&q->lock);
	io = list_first_entry_or_null(&q->list, struct rnbd_srv_io,
				      wait_entry);
	if (io)
		list_del(&io->wait_entry);
	more = !list_empty(&q->list);
	spin_unlock_irq(&q->lock);
	if (io) {
		io->opf &= ~REQ_NOWAIT;
		bio_reset(&io->bio, dev->bdev, io->opf);
		rnbd_srv_io_fill(io);
		submit_bio(&io->bio);
		/* counted until now: no new bio tries for a tag before it */
		atomic_dec(&dev->waiting);
	}
	/*
	 * The next run, behind the works queued meanwhile, takes our
	 * reference; a bio queued after our look is queued with its own.
	 */
	if (!more || !queue_work(rnbd_srv_submit_wq, &q->work))
		rnbd_srv_dev_put(dev);
}

/*
 * Queue @io's bio at the end of its device's FIFO of this CPU.
 * Context: any (a bio's completion, the connection's completion work).
 */
static void rnbd_srv_io_defer(struct rnbd_srv_io *io)
{
	struct rnbd_srv_dev *dev = io->dev;
	struct rnbd_srv_dev_waitq *q;
	unsigned long flags;

	/*
	 * The run's reference, taken while @io's keeps @dev: once @io is on
	 * the list a run may submit it, and its end drops that reference.
	 */
	refcount_inc(&dev->ref);
	atomic_inc(&dev->waiting);
	/* any CPU's FIFO would do: the work runs where it is queued */
	q = per_cpu_ptr(dev->waitq, raw_smp_processor_id());
	spin_lock_irqsave(&q->lock, flags);
	list_add_tail(&io->wait_entry, &q->list);
	spin_unlock_irqrestore(&q->lock, flags);
	if (!queue_work(rnbd_srv_submit_wq, &q->work))
		rnbd_srv_dev_put(dev);
}

static void rnbd_srv_bio_end_io(struct bio *bio)
{
	struct rnbd_srv_io *io = container_of(bio, struct rnbd_srv_io, bio);
	int err = blk_status_to_errno(bio->bi_status);
	struct trs_srv_req *req = io->req;
	struct rnbd_srv_dev *dev = io->dev;
	u32 len = err ? 0 : io->read_len;

	if (unlikely(bio->bi_status == BLK_STS_AGAIN &&
		     (io->opf & REQ_NOWAIT))) {
		rnbd_srv_io_defer(io);
		return;
	}
	trace_rnbd_srv_io_complete(req, dev->id, err, len);
	bio_put(bio);
	/*
	 * The device before the answer: a client that got every answer and
	 * closes the device finds it idle, closed at once, free for its
	 * next open.
	 */
	rnbd_srv_dev_put(dev);
	trs_srv_resp(req, err, len);
}

/* Validate @msg for the block device of @dev; build the bio's op and flags. */
static int rnbd_srv_io_bdev_check(const struct rnbd_srv_dev *dev,
				  const struct trs_srv_req *req,
				  const struct rnbd_msg_io *msg, blk_opf_t *opf)
{
	int err;

	err = rnbd_srv_io_check(req, msg, bdev_logical_block_size(dev->bdev),
				bdev_nr_sectors(dev->bdev), opf);
	if (err)
		return err;
	/* set read-only since the open: the block layer would only warn */
	if (rnbd_srv_io_writes(msg) &&
	    (!(dev->mode & BLK_OPEN_WRITE) || bdev_read_only(dev->bdev)))
		return -EROFS;
	return rnbd_srv_io_flags(msg, opf);
}

/**
 * rnbd_srv_io() - execute an RNBD_MSG_IO request
 * @sess: session it arrived on
 * @req: the request; its header is checked already
 *
 * Context: process context.
 * Return: 0 if a bio (or a file's IO) was started (its completion answers
 * @req), else the errno to answer @req with: -EPROTO for a malformed
 * request, -ENODEV for an unknown dev_id, -EOPNOTSUPP for an unknown op or
 * flag, -EINVAL for a bad length, sector range, priority or flag
 * combination, -EROFS for a write to a device opened read-only or
 * read-only now.
 */
int rnbd_srv_io(struct rnbd_srv_sess *sess, struct trs_srv_req *req)
{
	const struct rnbd_msg_io *msg = req->usr_hdr;
	struct rnbd_srv_dev *dev;
	struct rnbd_srv_io *io;
	struct bio *bio;
	blk_opf_t opf;
	int err;

	if (req->usr_len != sizeof(*msg))
		return -EPROTO;
	dev = rnbd_srv_dev_get(sess, le32_to_cpu(msg->dev_id));
	if (!dev) {
		trace_rnbd_srv_io_complete(req, le32_to_cpu(msg->dev_id),
					   -ENODEV, 0);
		return -ENODEV;
	}
	/* the one branch the block path pays for files */
	if (unlikely(dev->file))
		return rnbd_srv_file_io(dev, req);
	err = rnbd_srv_io_bdev_check(dev, req, msg, &opf);
	if (err) {
		trace_rnbd_srv_io_complete(req, dev->id, err, 0);
		rnbd_srv_dev_put(dev);
		return err;
	}

	if (bdev_nowait(dev->bdev))
		opf |= REQ_NOWAIT;
	bio = bio_alloc_bioset(dev->bdev, req->dir == DMA_NONE ? 0 : 1, opf,
			       GFP_NOIO, &rnbd_srv_bio_set);
	io = container_of(bio, struct rnbd_srv_io, bio);
	io->req = req;
	io->dev = dev;
	io->read_len = msg->op == RNBD_OP_READ ? le32_to_cpu(msg->len) : 0;
	io->opf = opf;
	rnbd_srv_io_fill(io);
	trace_rnbd_srv_io_submit(req, msg);
	/* behind the device's bios that wait for it: see the top */
	if (unlikely(atomic_read(&dev->waiting)))
		rnbd_srv_io_defer(io);
	else
		submit_bio(bio);
	return 0;
}

/**
 * rnbd_srv_io_prio() - the IO priority to serve a request with
 * @req: the request
 * @msg: its IO message, checked already
 *
 * The client's class and level (any other bits, such as hints, are
 * dropped), except that the real-time class, which goes before all
 * best-effort IO of the device and locally needs CAP_SYS_NICE, becomes
 * best-effort of the same level unless allow_rt_prio.  Logged once, never
 * per IO.
 *
 * Return: an ioprio value for a bio or a kiocb.
 */
u16 rnbd_srv_io_prio(const struct trs_srv_req *req,
		     const struct rnbd_msg_io *msg)
{
	return __rnbd_srv_io_prio(req, msg);
}

/**
 * rnbd_srv_dev_waitq_init() - make the FIFOs of a device being opened
 * @dev: the device; its kobject release frees them
 *
 * Return: 0 or -ENOMEM.
 */
int rnbd_srv_dev_waitq_init(struct rnbd_srv_dev *dev)
{
	int cpu;

	dev->waitq = TRS_FI(alloc_percpu(struct rnbd_srv_dev_waitq), NULL);
	if (!dev->waitq)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct rnbd_srv_dev_waitq *q = per_cpu_ptr(dev->waitq, cpu);

		spin_lock_init(&q->lock);
		INIT_LIST_HEAD(&q->list);
		INIT_WORK(&q->work, rnbd_srv_dev_waitq_work);
		q->dev = dev;
	}
	return 0;
}

/**
 * rnbd_srv_io_init() - create the bio set and the workqueue of the IO path
 *
 * Return: 0 or a negative errno.
 */
int rnbd_srv_io_init(void)
{
	int err;

	/* it submits IO: it must make progress under memory pressure */
	rnbd_srv_submit_wq = alloc_workqueue("rnbd_srv_submit",
					     WQ_MEM_RECLAIM, 0);
	if (!rnbd_srv_submit_wq)
		return -ENOMEM;
	err = bioset_init(&rnbd_srv_bio_set, BIO_POOL_SIZE,
			  offsetof(struct rnbd_srv_io, bio), BIOSET_NEED_BVECS);
	if (err)
		destroy_workqueue(rnbd_srv_submit_wq);
	return err;
}

/**
 * rnbd_srv_io_exit() - free the bio set and the workqueue
 *
 * Context: after trs_srv_close(), so every bio has ended; destroying the
 * workqueue waits for a resubmission still returning from submit_bio().
 */
void rnbd_srv_io_exit(void)
{
	destroy_workqueue(rnbd_srv_submit_wq);
	bioset_exit(&rnbd_srv_bio_set);
}
