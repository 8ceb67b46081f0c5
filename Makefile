# SPDX-License-Identifier: GPL-2.0-only
#
# rnbd: network block device over RDMA, out-of-tree modules.
#
#   make            build every module against KDIR (Debian's packaged kernel)
#   make lint       checkpatch --strict and sparse (C=2); fails on any finding
#   make check      static checks plus every test case in the QEMU guest
#   make demo       boot a guest and show a remote disk end to end
#   make bench      rnbd against local null_blk and NVMe-oF RDMA (REPEAT=N)

# The guest kernel: what Debian's linux-image-amd64 installed, never
# `uname -r` (the host kernel is not the guest's).
ifeq ($(strip $(KVER)),)
KVER := $(shell scripts/kver 2>/dev/null)
endif
ifeq ($(strip $(KDIR)),)
KDIR := /lib/modules/$(KVER)/build
endif

# W=1 stays on for every build: the tree must be warning-free under it.
W ?= 1

.PHONY: all modules clean lint check demo bench setup

all: modules

modules:
	@test -d "$(KDIR)" || { echo "KDIR=$(KDIR) missing: run scripts/setup" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) modules

clean:
	@test ! -d "$(KDIR)" || $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tests/kmod KDIR=$(KDIR) clean 2>/dev/null || true
	rm -rf .build

setup:
	scripts/setup

lint:
	scripts/lint

check: setup
	scripts/check $(if $(T),--only $(T))

demo: setup
	scripts/demo


bench: setup
	scripts/bench/run $(if $(REPEAT),--repeat $(REPEAT))
