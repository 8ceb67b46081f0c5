# SPDX-License-Identifier: GPL-2.0-only
#
# rnbd: network block device over RDMA, out-of-tree modules.
#
#   make            build every module against KDIR (Debian's packaged kernel)
#   make lint       checkpatch --strict and sparse (C=2); fails on any finding
#   make man        regenerate Documentation/man/*.[578] from their .scd sources
#   make check      static checks plus every test case in the QEMU guest
#   make check KVER=6.12
#                   the same on Debian's 6.12 kernel (6.1 by default); KVER=
#                   also for make, make demo and make bench
#   make check KERNEL=debug
#                   the same on the debug kernel (KASAN, lockdep, kmemleak,
#                   fault injection), built first: scripts/debug-kernel
#                   (from linux-source-6.1; with KVER=6.12, from 6.12's)
#   make demo       boot a guest and show a remote disk end to end
#   make bench      rnbd against local null_blk and NVMe-oF RDMA (REPEAT=N)
#   make deb        the Debian packages rnbd-dkms and rnbd-utils, version
#                   from VERSION, in .build/deb/ (packaging/build-deb)
#   make newest     build the modules, W=1 and sparse (C=2), against the
#                   newest Linux in Debian's archive (testing,
#                   trixie-backports): scripts/newest-kernel fetches and
#                   prepares it first, cached; fails on any finding

# The guest kernel: what Debian's linux-image-amd64 installed, never
# `uname -r` (the host kernel is not the guest's).
# KERNEL=debug: the debug kernel's build tree instead (scripts/debug-kernel).
ifeq ($(KERNEL),debug)
DEBUG_KERNEL := $(shell KVER="$(KVER)" scripts/debug-kernel dir 2>/dev/null)
ifeq ($(strip $(KDIR)),)
KDIR := $(if $(DEBUG_KERNEL),$(DEBUG_KERNEL)/src,/nonexistent-debug-kernel)
endif
endif
# KVER=6.12 (a series) or KVER=6.12.117+deb12-amd64 (a release): that
# installed Debian kernel instead (scripts/kver resolves it; scripts/setup
# installs 6.1 and 6.12), for the build, the guests and the benchmarks.
override KVER := $(shell scripts/kver $(KVER) 2>/dev/null)
export KVER
ifeq ($(strip $(KDIR)),)
KDIR := /lib/modules/$(KVER)/build
endif

# W=1 stays on for every build: the tree must be warning-free under it.
W ?= 1

.PHONY: all modules clean lint check demo bench setup debug-kernel man deb newest

all: modules

# Objects built against another kernel tree are removed first: Kbuild would
# otherwise keep some of them.
modules:
	@test -d "$(KDIR)" || { echo "KDIR=$(KDIR) missing: run scripts/setup (or scripts/debug-kernel build)" >&2; exit 1; }
	@if [ -s .build/kdir ] && [ "$$(cat .build/kdir)" != "$(KDIR)" ]; then \
		$(MAKE) -s -C "$$(cat .build/kdir)" M=$(CURDIR) clean 2>/dev/null || \
		$(MAKE) -s -C $(KDIR) M=$(CURDIR) clean; fi
	@mkdir -p .build && echo "$(KDIR)" >.build/kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) modules

debug-kernel:
	KVER="$(KVER)" scripts/debug-kernel build

# The tree's objects are then the newest kernel's: the next `make` cleans
# them first (.build/kdir).
newest:
	@dir=$$(scripts/newest-kernel build) && \
	sparse=$$(scripts/newest-kernel sparse) && \
	KDIR=$$dir/src SPARSE=$$sparse scripts/lint sparse

clean:
	@test ! -d "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tests/kmod KDIR=$(KDIR) clean 2>/dev/null || true
	rm -rf .build compat/generated

setup:
	scripts/setup

lint:
	scripts/lint

man:
	scripts/man build

check: setup
	scripts/check $(if $(T),--only $(T))

demo: setup
	scripts/demo


bench: setup
	scripts/bench/run $(if $(REPEAT),--repeat $(REPEAT))

deb: setup
	packaging/build-deb
