// SPDX-License-Identifier: GPL-2.0-only
/*
 * rnbd server: regular files exported as block devices, the file IO mode
 * of the IBNBD design (an administrator's VM disk images).
 *
 * Geometry.  The logical block size is 512 bytes, or, when the file is
 * read and written with O_DIRECT, the logical block size of its file
 * system's block device (whose alignment O_DIRECT needs).  The size is the
 * file's, rounded down to a whole logical block; a size change (truncate)
 * reaches the client as a block device's does (rnbd-srv-size.c).  The
 * physical block size is the file system's block size, clamped to
 * [logical block size, 4096].  The client is told of a volatile write
 * cache and of FUA: written data is in the page cache, or, with O_DIRECT,
 * may need the file system's metadata (a newly allocated extent) written
 * before it survives a crash.  Discard and write-zeroes are advertised if
 * the file system has fallocate(); it may still refuse them
 * (-EOPNOTSUPP).
 *
 * IO.  Each READ and WRITE is one kiocb on the transport chunk (a bvec
 * iterator, no copy), with IOCB_DIRECT when the file system supports
 * O_DIRECT for the file (a direct read at OPEN tells) and buffered
 * otherwise (tmpfs, overlayfs over tmpfs); its ki_complete answers the
 * request.  Requests arrive in the connection's completion work (process
 * context, which serves every device of the session and its heartbeats),
 * so a file whose file system takes IOCB_NOWAIT (FMODE_NOWAIT: ext4, xfs)
 * is read or written from there with IOCB_NOWAIT, and only what would
 * block (-EAGAIN: a lock, a block allocation, pages to write back first;
 * -EOPNOTSUPP: ext4's buffered writes) is done again, allowed to block,
 * from rnbd_srv_file_wq; so are the files of other file systems, and FUA
 * writes (IOCB_DSYNC), writes with PREFLUSH (vfs_fsync() first), FLUSH
 * (vfs_fsync()), DISCARD (fallocate PUNCH_HOLE | KEEP_SIZE) and
 * WRITE_ZEROES (PUNCH_HOLE, or ZERO_RANGE with NOUNMAP).  No thread per
 * request: a concurrency managed workqueue.  Writes hold the file system's
 * freeze protection from submission to completion, and the kiocb lives
 * until both its submission has returned and its ki_complete has run
 * (ext4 looks at it after queueing it), as aio does.
 *
 * Exclusivity.  Sessions follow the rules of block devices with the file's
 * export keyed on its inode (rnbd-srv-dev.c).  Other users of the file are
 * the analogue of a block device's holders: a file another process (a VM,
 * a loop device) has open for writing, or a swap file, is busy: no open
 * but ro with allow_busy_devices.  Checked at OPEN only, as for devices:
 * nothing keeps a process from opening the file for writing later.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bvec.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/mempool.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "rnbd-srv.h"
#include "rnbd-srv-trace.h"

/* File IO structures kept for progress under memory pressure */
#define RNBD_SRV_FILE_POOL_MIN	16

/**
 * struct rnbd_srv_file_io - one request to a file in flight
 * @iocb: the kiocb of its READ or WRITE
 * @bvec: the transport chunk
 * @iter: over @bvec, from @done on
 * @work: serves it on rnbd_srv_file_wq
 * @req: the request to answer
 * @dev: the file's device, referenced until the answer
 * @pos: byte offset in the file
 * @len: bytes the request covers
 * @done: bytes read or written so far
 * @opf: REQ_FUA, REQ_PREFLUSH, REQ_NOUNMAP of the request
 * @ret: what @iocb's read or write returned, or its ki_complete got
 * @ref: two while @iocb is started: the file system may complete it (on
 *	another CPU) before its read_iter or write_iter returns, and still
 *	look at it then; the last of the two ends it
 * @prio: IO priority
 * @op: RNBD_OP_*
 * @nowait: @iocb was started with IOCB_NOWAIT
 */
struct rnbd_srv_file_io {
	struct kiocb		iocb;
	struct bio_vec		bvec;
	struct iov_iter		iter;
	struct work_struct	work;
	struct trs_srv_req	*req;
	struct rnbd_srv_dev	*dev;
	loff_t			pos;
	u32			len;
	u32			done;
	blk_opf_t		opf;
	long			ret;
	atomic_t		ref;
	u16			prio;
	u8			op;
	bool			nowait;
};

static struct kmem_cache *rnbd_srv_file_io_cache;
static mempool_t *rnbd_srv_file_io_pool;
/*
 * Serves the file IO that may block (see above).  Not rnbd_srv_submit_wq:
 * under memory pressure its rescuer alone would run both, and a long
 * fsync would hold up the block devices' resubmitted bios.
 */
static struct workqueue_struct *rnbd_srv_file_wq;

/* Pseudo file systems whose magic <uapi/linux/magic.h> does not have */
#define RNBD_CONFIGFS_MAGIC	0x62656570
#define RNBD_FUSECTL_MAGIC	0x65735543
#define RNBD_MQUEUE_MAGIC	0x19800202

/**
 * rnbd_srv_file_pseudo() - is @sb a pseudo file system
 * @sb: the super block of a regular file an OPEN names
 *
 * Its regular files are the kernel's state, not disk images: kernel memory
 * (/proc/kcore), a device's registers (PCI config space in sysfs and
 * procfs), knobs with side effects, and files with no read_iter.  proc and
 * the kernfs ones (sysfs, cgroup) mark themselves SB_I_NOEXEC; the others
 * are known by their magic.  Memory and network file systems (tmpfs, NFS,
 * FUSE, overlayfs) hold files, and are not refused.
 *
 * Return: true to refuse the file.
 */
bool rnbd_srv_file_pseudo(const struct super_block *sb)
{
	static const unsigned long magics[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, CGROUP_SUPER_MAGIC,
		CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC,
		SECURITYFS_MAGIC, SELINUX_MAGIC, SMACK_MAGIC, PSTOREFS_MAGIC,
		EFIVARFS_MAGIC, BPF_FS_MAGIC, BINFMTFS_MAGIC, DEVPTS_SUPER_MAGIC,
		RDTGROUP_SUPER_MAGIC, NSFS_MAGIC, HUGETLBFS_MAGIC,
		RNBD_CONFIGFS_MAGIC, RNBD_FUSECTL_MAGIC, RNBD_MQUEUE_MAGIC,
	};
	unsigned int i;

	if (sb->s_iflags & SB_I_NOEXEC)
		return true;
	for (i = 0; i < ARRAY_SIZE(magics); i++) {
		if (sb->s_magic == magics[i])
			return true;
	}
	return false;
}

/*
 * Read the first logical block of @dev's file into @page as its requests
 * would be (IOCB_DIRECT if @dev->direct), synchronously.  Return: bytes
 * read (0 for an empty file), or the errno of the read.
 */
static ssize_t rnbd_srv_file_probe(struct rnbd_srv_dev *dev,
				   struct page *page)
{
	struct bio_vec bvec = {
		.bv_page = page,
		.bv_len = dev->lbs,
	};
	struct iov_iter iter;
	struct kiocb kiocb;

	iov_iter_bvec(&iter, ITER_DEST, &bvec, 1, dev->lbs);
	init_sync_kiocb(&kiocb, dev->file);
	if (dev->direct)
		kiocb.ki_flags |= IOCB_DIRECT;
	return dev->file->f_op->read_iter(&kiocb, &iter);
}

/**
 * rnbd_srv_file_open() - open the regular file of a session's OPEN
 * @dev: the session device, its access mode and export set
 * @path: the file, found under dev_search_path
 *
 * dentry_open() leaves out the checks of open(2) that the lookup did
 * not make: permission (as the server's own root: a read-only mount or an
 * immutable file) and append-only files, refused for writing.
 *
 * Context: process context, sleeps.
 * A file whose file system cannot read it (or write it, for a writer)
 * from a kiocb is refused: its IO would call a NULL read_iter or
 * write_iter.
 *
 * Direct IO: a file system that has O_DIRECT may still refuse it for a
 * file (overlayfs, whose own file says it has O_DIRECT, over a tmpfs
 * upper layer fails every direct read and write with -EINVAL), so the
 * first block is read directly, and a file on which that fails is served
 * buffered, with a log line.  A file that cannot even be read buffered is
 * refused: every IO of its device would fail.
 *
 * Return: 0, @dev->file, @dev->lbs, @dev->direct and @dev->nsectors set,
 * or -EROFS (a read-only mount), -EPERM (immutable or append-only),
 * -ETXTBSY (a file being executed), -ENOTBLK (no read_iter or write_iter,
 * a log line), the errno of a buffered read of the first block (a log
 * line) or another errno of the open.
 */
int rnbd_srv_file_open(struct rnbd_srv_dev *dev, const struct path *path)
{
	struct inode *inode = d_inode(path->dentry);
	bool write = dev->mode & BLK_OPEN_WRITE;
	struct block_device *fs_bdev;
	struct page *page;
	struct file *file;
	ssize_t ret;
	int err;

	err = inode_permission(mnt_idmap(path->mnt), inode,
			       MAY_READ | (write ? MAY_WRITE : 0));
	if (err)
		return err;
	if (write && IS_APPEND(inode))
		return -EPERM;
	file = TRS_FI(dentry_open(path, (write ? O_RDWR : O_RDONLY) |
				  O_LARGEFILE, current_cred()),
		      ERR_PTR(-ENOMEM));
	if (IS_ERR(file))
		return PTR_ERR(file);
	dev->file = file;
	if (!file->f_op->read_iter || (write && !file->f_op->write_iter)) {
		pr_info_ratelimited("session %s: %s: its file system (%s) has no %s for it: refused\n",
				    trs_srv_sess_name(dev->sess->trs), dev->path,
				    inode->i_sb->s_type->name,
				    file->f_op->read_iter ? "write_iter" :
				    "read_iter");
		err = -ENOTBLK;
		goto close_file;
	}
	page = TRS_FI(alloc_page(GFP_KERNEL), NULL);
	if (!page) {
		err = -ENOMEM;
		goto close_file;
	}
	dev->lbs = SECTOR_SIZE;
	dev->direct = file->f_mode & FMODE_CAN_ODIRECT;
	fs_bdev = inode->i_sb->s_bdev;
	if (dev->direct && fs_bdev)
		dev->lbs = bdev_logical_block_size(fs_bdev);
	if (dev->direct) {
		ret = rnbd_srv_file_probe(dev, page);
		if (ret < 0) {
			pr_info_ratelimited("session %s: %s: direct IO fails on this file (%zd): buffered IO\n",
					    trs_srv_sess_name(dev->sess->trs),
					    dev->path, ret);
			dev->direct = false;
			dev->lbs = SECTOR_SIZE;
		}
	}
	if (!dev->direct) {
		ret = rnbd_srv_file_probe(dev, page);
		if (ret < 0) {
			pr_info_ratelimited("session %s: %s: reading the file fails (%zd): refused\n",
					    trs_srv_sess_name(dev->sess->trs),
					    dev->path, ret);
			err = ret;
		}
	}
	__free_page(page);
	if (err)
		goto close_file;
	dev->nsectors = rnbd_srv_file_nr_sectors(dev);
	return 0;

close_file:
	rnbd_srv_file_close(dev);
	dev->file = NULL;
	return err;
}

/**
 * rnbd_srv_file_check() - refuse a file that others use
 * @sess: session of the OPEN
 * @dev: the session device, its file just opened
 *
 * Busy: a swap file, or a file open for writing by more than the rnbd
 * sessions that write it (their count is read unlocked: a race can only
 * let an OPEN through, as a mount racing a block device's OPEN would).
 *
 * Return: 0 or -EBUSY, with a log line.
 */
int rnbd_srv_file_check(struct rnbd_srv_sess *sess,
			const struct rnbd_srv_dev *dev)
{
	struct inode *inode = file_inode(dev->file);
	int writers = atomic_read(&inode->i_writecount);
	unsigned int ours = READ_ONCE(dev->export->nr_writers);

	if (!IS_SWAPFILE(inode) && writers <= (int)ours)
		return 0;
	if (!(dev->mode & BLK_OPEN_WRITE) && READ_ONCE(rnbd_srv_allow_busy))
		return 0;
	pr_info_ratelimited("session %s: file %s is in use (%s): refused; allow_busy_devices=1 exports it read-only\n",
			    trs_srv_sess_name(sess->trs), dev->path,
			    IS_SWAPFILE(inode) ? "a swap file" :
			    "open for writing elsewhere, a VM or a loop device");
	return -EBUSY;
}

/**
 * rnbd_srv_file_close() - close a device's file
 * @dev: device whose IO has all ended, or whose open failed
 *
 * In a kernel thread (the admin and release workqueues) the file is
 * closed before this returns, so that its write count is down when the
 * export counts writers again; from a user's task (sysfs force_close), as
 * the task returns to user space.
 *
 * Context: process context, sleeps.
 */
void rnbd_srv_file_close(struct rnbd_srv_dev *dev)
{
	if (current->flags & PF_KTHREAD)
		__fput_sync(dev->file);
	else
		fput(dev->file);
}

/**
 * rnbd_srv_file_nr_sectors() - the size of a device's file now
 * @dev: device with its file open
 *
 * Return: 512-byte sectors, rounded down to the logical block size.
 */
sector_t rnbd_srv_file_nr_sectors(const struct rnbd_srv_dev *dev)
{
	loff_t size = i_size_read(file_inode(dev->file));

	return round_down(size, (loff_t)dev->lbs) >> SECTOR_SHIFT;
}

/**
 * rnbd_srv_file_fill_open_rsp() - describe a device's file for the client
 * @dev: device with its file open
 * @rsp: response to fill
 *
 * See the top of this file for the values.
 */
void rnbd_srv_file_fill_open_rsp(const struct rnbd_srv_dev *dev,
				 struct rnbd_msg_open_rsp *rsp)
{
	struct inode *inode = file_inode(dev->file);
	struct block_device *fs_bdev = inode->i_sb->s_bdev;
	u32 lbs = dev->lbs, limit;

	memset(rsp, 0, sizeof(*rsp));
	rsp->dev_id = cpu_to_le32(dev->id);
	rsp->nsectors = cpu_to_le64(rnbd_srv_file_nr_sectors(dev));
	/* what one read or write of a file can move */
	rsp->max_hw_sectors = cpu_to_le32(MAX_RW_COUNT >> SECTOR_SHIFT);
	if (dev->file->f_op->fallocate) {
		limit = round_down(U32_MAX, lbs) >> SECTOR_SHIFT;
		rsp->max_discard_sectors = cpu_to_le32(limit);
		rsp->max_write_zeroes_sectors = cpu_to_le32(limit);
		/* a hole frees whole file system blocks; the rest is zeroed */
		rsp->discard_granularity = cpu_to_le32(max(i_blocksize(inode),
							   lbs));
	}
	rsp->logical_block_size = cpu_to_le16(lbs);
	rsp->physical_block_size =
		cpu_to_le16(max_t(u32, lbs, min_t(u32, i_blocksize(inode),
						  SZ_4K)));
	rsp->max_segments = cpu_to_le16(USHRT_MAX);
	rsp->rotational = fs_bdev && bdev_rot(fs_bdev);
	rsp->cache_flags = RNBD_CACHE_WRITEBACK | RNBD_CACHE_FUA;
}

/* Answer @io's request with @err and free @io. */
static void rnbd_srv_file_end(struct rnbd_srv_file_io *io, int err)
{
	struct trs_srv_req *req = io->req;
	struct rnbd_srv_dev *dev = io->dev;
	u32 len = !err && io->op == RNBD_OP_READ ? io->len : 0;

	trace_rnbd_srv_io_complete(req, dev->id, err, len);
	mempool_free(io, rnbd_srv_file_io_pool);
	/* the device before the answer, as for a bio (rnbd-srv-io.c) */
	rnbd_srv_dev_put(dev);
	trs_srv_resp(req, err, len);
}

/*
 * A READ or WRITE is done (its submission returned, and it completed with
 * @ret): answer it, or go on from the workqueue.  Context: any (a bio's
 * completion).
 */
static void rnbd_srv_file_rw_end(struct rnbd_srv_file_io *io, long ret)
{
	struct kiocb *iocb = &io->iocb;

	if (io->op == RNBD_OP_WRITE)
		kiocb_end_write(iocb);
	if (io->nowait && (ret == -EAGAIN || ret == -EOPNOTSUPP)) {
		/* it would have blocked: again, from the workqueue */
		queue_work(rnbd_srv_file_wq, &io->work);
		return;
	}
	if (ret > 0) {
		io->done += min_t(u32, ret, io->len - io->done);
		if (io->done < io->len) {
			/* short: the rest from the workqueue */
			queue_work(rnbd_srv_file_wq, &io->work);
			return;
		}
	} else if (!ret && io->op == RNBD_OP_READ) {
		/* the file shrank below the request since its check */
		memset(io->req->data + io->done, 0, io->len - io->done);
		io->done = io->len;
	}
	rnbd_srv_file_end(io, ret < 0 ? (int)ret :
			      io->done == io->len ? 0 : -EIO);
}

static void rnbd_srv_file_rw_put(struct rnbd_srv_file_io *io)
{
	if (atomic_dec_and_test(&io->ref))
		rnbd_srv_file_rw_end(io, io->ret);
}

/*
 * ki_complete of a READ or WRITE, also called by rnbd_srv_file_rw() when
 * the file system did it at once.  Context: any.
 */
static void rnbd_srv_file_complete(struct kiocb *iocb, long ret)
{
	struct rnbd_srv_file_io *io = container_of(iocb, struct rnbd_srv_file_io,
						   iocb);

	io->ret = ret;
	rnbd_srv_file_rw_put(io);
}

/*
 * Start @io's READ or WRITE from @io->done on; with @nowait without
 * blocking (the connection's completion work).
 */
static void rnbd_srv_file_rw(struct rnbd_srv_file_io *io, bool nowait)
{
	struct file *file = io->dev->file;
	bool write = io->op == RNBD_OP_WRITE;
	struct kiocb *iocb = &io->iocb;
	ssize_t ret;

	io->bvec.bv_page = virt_to_page(io->req->data);
	io->bvec.bv_offset = offset_in_page(io->req->data);
	io->bvec.bv_len = io->len;
	iov_iter_bvec(&io->iter, write ? ITER_SOURCE : ITER_DEST, &io->bvec, 1,
		      io->len);
	iov_iter_advance(&io->iter, io->done);

	init_sync_kiocb(iocb, file);
	iocb->ki_pos = io->pos + io->done;
	iocb->ki_ioprio = io->prio;
	iocb->ki_complete = rnbd_srv_file_complete;
	if (io->dev->direct)
		iocb->ki_flags |= IOCB_DIRECT;
	if (io->opf & REQ_FUA)
		iocb->ki_flags |= IOCB_DSYNC;
	io->nowait = nowait;
	if (nowait)
		iocb->ki_flags |= IOCB_NOWAIT;
	atomic_set(&io->ref, 2);
	if (!write) {
		ret = file->f_op->read_iter(iocb, &io->iter);
		goto check;
	}
	iocb->ki_flags |= IOCB_WRITE;
	if (!nowait) {
		kiocb_start_write(iocb);
	} else if (file_start_write_trylock(file)) {
		/* held until ki_complete, perhaps in another task */
		__sb_writers_release(file_inode(file)->i_sb, SB_FREEZE_WRITE);
	} else {
		/* frozen: wait for the thaw in the workqueue */
		queue_work(rnbd_srv_file_wq, &io->work);
		return;
	}
	ret = file->f_op->write_iter(iocb, &io->iter);
check:
	if (ret != -EIOCBQUEUED)
		rnbd_srv_file_complete(iocb, ret);
	/* ext4 looks at @iocb after queueing it: only now may it end */
	rnbd_srv_file_rw_put(io);
}

/* WRITE_ZEROES: a hole, or with NOUNMAP zeroed blocks that stay allocated. */
static int rnbd_srv_file_zeroes(struct rnbd_srv_file_io *io)
{
	struct file *file = io->dev->file;
	int err;

	if (!(io->opf & REQ_NOUNMAP))
		return vfs_fallocate(file, FALLOC_FL_PUNCH_HOLE |
				     FALLOC_FL_KEEP_SIZE, io->pos, io->len);
	err = vfs_fallocate(file, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
			    io->pos, io->len);
	if (err != -EOPNOTSUPP)
		return err;
	/* tmpfs has no ZERO_RANGE: a hole allocated again reads as zeroes */
	err = vfs_fallocate(file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			    io->pos, io->len);
	return err ?: vfs_fallocate(file, FALLOC_FL_KEEP_SIZE, io->pos,
				    io->len);
}

/* The part of a request that may block. */
static void rnbd_srv_file_work(struct work_struct *work)
{
	struct rnbd_srv_file_io *io = container_of(work, struct rnbd_srv_file_io,
						   work);
	struct file *file = io->dev->file;
	int err;

	switch (io->op) {
	case RNBD_OP_WRITE:
		if (io->opf & REQ_PREFLUSH) {
			/* once, not again for the rest of a short write */
			io->opf &= ~REQ_PREFLUSH;
			err = vfs_fsync(file, 1);
			if (err)
				break;
		}
		fallthrough;
	case RNBD_OP_READ:
		rnbd_srv_file_rw(io, false);
		return;
	case RNBD_OP_FLUSH:
		err = vfs_fsync(file, 1);
		break;
	case RNBD_OP_DISCARD:
		err = vfs_fallocate(file, FALLOC_FL_PUNCH_HOLE |
				    FALLOC_FL_KEEP_SIZE, io->pos, io->len);
		break;
	default:
		err = rnbd_srv_file_zeroes(io);
		break;
	}
	rnbd_srv_file_end(io, err);
}

/**
 * rnbd_srv_file_io() - execute an RNBD_MSG_IO request to a file
 * @dev: the device of its dev_id, a file's, with a reference the answer
 *	(or this function on an error) drops
 * @req: the request; its user header length is checked already
 *
 * Context: the connection's completion work; does not block but for
 * memory (a mempool with GFP_NOIO).
 * Return: 0 if the IO was started (its end answers @req), else the errno
 * to answer @req with, as rnbd_srv_io()'s.
 */
int rnbd_srv_file_io(struct rnbd_srv_dev *dev, struct trs_srv_req *req)
{
	const struct rnbd_msg_io *msg = req->usr_hdr;
	struct rnbd_srv_file_io *io;
	blk_opf_t opf;
	int err;

	err = rnbd_srv_io_check(req, msg, dev->lbs,
				rnbd_srv_file_nr_sectors(dev), &opf);
	if (!err && rnbd_srv_io_writes(msg) && !(dev->mode & BLK_OPEN_WRITE))
		err = -EROFS;
	if (!err)
		err = rnbd_srv_io_flags(msg, &opf);
	if (err) {
		trace_rnbd_srv_io_complete(req, dev->id, err, 0);
		rnbd_srv_dev_put(dev);
		return err;
	}

	io = mempool_alloc(rnbd_srv_file_io_pool, GFP_NOIO);
	io->req = req;
	io->dev = dev;
	io->op = msg->op;
	io->opf = opf;
	io->pos = (loff_t)le64_to_cpu(msg->sector) << SECTOR_SHIFT;
	io->len = le32_to_cpu(msg->len);
	io->done = 0;
	io->prio = rnbd_srv_io_prio(req, msg);
	INIT_WORK(&io->work, rnbd_srv_file_work);
	trace_rnbd_srv_io_submit(req, msg);
	if ((io->op == RNBD_OP_READ || io->op == RNBD_OP_WRITE) &&
	    !(opf & (REQ_PREFLUSH | REQ_FUA)) &&
	    (dev->file->f_mode & FMODE_NOWAIT))
		rnbd_srv_file_rw(io, true);
	else
		queue_work(rnbd_srv_file_wq, &io->work);
	return 0;
}

/**
 * rnbd_srv_file_init() - create the pool and the workqueue of file IO
 *
 * Return: 0 or -ENOMEM.
 */
int rnbd_srv_file_init(void)
{
	rnbd_srv_file_io_cache = TRS_FI(KMEM_CACHE(rnbd_srv_file_io, 0), NULL);
	if (!rnbd_srv_file_io_cache)
		return -ENOMEM;
	rnbd_srv_file_io_pool =
		TRS_FI(mempool_create_slab_pool(RNBD_SRV_FILE_POOL_MIN,
						rnbd_srv_file_io_cache), NULL);
	if (!rnbd_srv_file_io_pool)
		goto destroy_cache;
	/* it serves IO: it must make progress under memory pressure */
	rnbd_srv_file_wq = TRS_FI(alloc_workqueue("rnbd_srv_file",
						  WQ_MEM_RECLAIM, 0), NULL);
	if (!rnbd_srv_file_wq)
		goto destroy_pool;
	return 0;

destroy_pool:
	mempool_destroy(rnbd_srv_file_io_pool);
destroy_cache:
	kmem_cache_destroy(rnbd_srv_file_io_cache);
	return -ENOMEM;
}

/**
 * rnbd_srv_file_exit() - free the workqueue and the pool of file IO
 *
 * Context: after trs_srv_close(), so every request is answered;
 * destroying the workqueue waits for a work still returning from its
 * answer.
 */
void rnbd_srv_file_exit(void)
{
	destroy_workqueue(rnbd_srv_file_wq);
	mempool_destroy(rnbd_srv_file_io_pool);
	kmem_cache_destroy(rnbd_srv_file_io_cache);
}
