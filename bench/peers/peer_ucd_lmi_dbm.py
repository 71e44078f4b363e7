"""unbiased_dbm (Taniguchi et al. 2023; its own model.py) on
bench/ucd_lmi_dbm.c's workload: one UCD-LMI gradient of a DBM 784-784-784
(its DBM(size=28, nc=1, nh=784, bits=1, L=2): orthogonal init, biases 0) on
a batch of 1000 rows of 1-bit Fashion-MNIST, as its train.py makes a step
without the optimizer: loss = model(v); loss.mean().backward(). Each step
takes its own batch (the first 6000 training images); the time is the median
of 5 steps after 1 warm-up, as ucd_lmi_dbm's. CPU, float32. Its units are
0/1 where libebm's benchmark uses spins -1/+1 (the same family of models,
reparameterised). Skipped (exit 0) if Fashion-MNIST is not installed, as
ucd_lmi_dbm is."""
import sys

from peer_common import THREADS, fashion_mnist, peer_checkout, report, time_steps

D, BATCH, WARMUP, REPS = 784, 1000, 1, 5


def main():
    path, commit = peer_checkout("PEER_UNBIASED_DBM", "unbiased_dbm")
    raw = fashion_mnist((WARMUP + REPS) * BATCH)
    if raw is None:
        print("peer_ucd_lmi_dbm: skipped: Fashion-MNIST is not installed "
              "(apt-get install -y dataset-fashion-mnist)")
        return
    import torch
    torch.set_num_threads(THREADS)
    sys.path.insert(0, path)
    from model import DBM  # the peer's own model

    torch.manual_seed(1)
    # train.py's transform: ToTensor (byte / 255), then binarize: > 0.5, i.e. byte >= 128
    v_all = torch.from_numpy((raw >= 128).astype("float32")).view(-1, 1, 28, 28)
    batches = list(v_all.split(BATCH))
    model = DBM(28, 1, D, bits=1, L=2)
    model.train()

    def step(i):
        model.zero_grad(set_to_none=True)
        loss = model(batches[i])
        loss.mean().backward()

    print(f"peer_ucd_lmi_dbm: unbiased_dbm {commit[:12]} DBM.forward + backward (UCD-LMI "
          f"gradient), DBM {D}-{D}-{D} at orthogonal init, batch {BATCH} of 1-bit "
          f"Fashion-MNIST, PyTorch {torch.__version__} CPU; median of {REPS} steps after "
          f"{WARMUP} warm-up")
    ms, timing = time_steps(step, WARMUP, REPS)
    report("peer_ucd_lmi_dbm", f"unbiased_dbm (PyTorch {torch.__version__.split('a')[0]})", ms,
           "UCD-LMI gradient 784-784-784 batch 1000",
           {"data": "fashion-mnist", "commit": commit, "torch_threads": torch.get_num_threads(),
            **timing})


if __name__ == "__main__":
    main()
