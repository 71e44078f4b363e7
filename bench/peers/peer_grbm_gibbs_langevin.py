"""The GRBM paper's code (Liao et al. 2022; its own grbm.py) on
bench/grbm_gibbs_langevin.c's workload: one modified-CD step as its main.py
makes it (optimizer.zero_grad(); model.CD_grad(data); clip_grad_norm_ at 10;
SGD step, lr 0.01) of a GRBM 784-4096 (its init: W N(0, 1/(784 + 4096)),
variances 1), Gibbs-Langevin sampling with CD_step = 10 Gibbs steps of
Langevin_step = 10 Langevin steps, Langevin_eta 1 (times the mean variance,
as its code does), cosine schedule, no Metropolis adjustment
(Langevin_adjust_step = CD_step, as main.py in its warm-up epochs), 512
chains from N(0, I). Data: Fashion-MNIST standardised per pixel (mean and sd
of the rows used, sd floored at 0.05, as libebm's benchmark; the paper's
main.py uses one global mean and sd instead), 512 rows per step, each step
its own batch; or N(0, 1) rows. The time is the median of 5 steps after 1
warm-up. CPU, float32."""
import sys
import types

from peer_common import THREADS, fashion_mnist, peer_checkout, report, time_steps

D, H, BATCH, GIBBS, LANGEVIN, WARMUP, REPS = 784, 4096, 512, 10, 10, 1, 5


class _Stub(types.ModuleType):
    """A stand-in for a module the step never uses; attributes and calls are
    no-ops."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(name)

    def __call__(self, *args, **kwargs):
        return None


def import_peer(path):
    """The peer's grbm.py imports its utils.py for cosine_schedule; utils.py
    also imports plotting packages (torchvision, matplotlib, seaborn, PIL)
    that the step does not use. Those that are not installed are stubbed."""
    import importlib
    for name in ("torchvision", "matplotlib", "matplotlib.pyplot", "mpl_toolkits",
                 "mpl_toolkits.axes_grid1", "seaborn", "PIL"):
        try:
            importlib.import_module(name)
        except ImportError:
            sys.modules[name] = _Stub(name)
    sys.path.insert(0, path)
    from grbm import GRBM
    return GRBM


def main():
    path, commit = peer_checkout("PEER_GRBM", "GRBM")
    import numpy as np
    import torch
    torch.set_num_threads(THREADS)
    GRBM = import_peer(path)

    n = (WARMUP + REPS) * BATCH
    raw = fashion_mnist(n)
    if raw is not None:
        source = "fashion-mnist-standardised"
        x = raw.astype(np.float32) / 255.0
        x = (x - x.mean(axis=0)) / np.maximum(x.std(axis=0), 0.05)
    else:
        source = "normal-0-1"
        x = np.random.default_rng(1).standard_normal((n, D), dtype=np.float32)
    batches = list(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).split(BATCH))

    torch.manual_seed(1)
    model = GRBM(D, H, CD_step=GIBBS, CD_burnin=0, init_var=1.0,
                 inference_method="Gibbs-Langevin", Langevin_step=LANGEVIN, Langevin_eta=1.0,
                 is_anneal_Langevin=True, Langevin_adjust_step=GIBBS)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.0)

    def step(i):
        optimizer.zero_grad()
        model.CD_grad(batches[i])
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        optimizer.step()

    print(f"peer_grbm_gibbs_langevin: GRBM {commit[:12]} CD_grad + clip 10 + SGD 0.01, "
          f"{GIBBS} Gibbs-Langevin steps x {LANGEVIN} Langevin steps, GRBM {D}-{H}, batch "
          f"{BATCH}, data {source}, PyTorch {torch.__version__} CPU; median of {REPS} steps "
          f"after {WARMUP} warm-up")
    ms, timing = time_steps(step, WARMUP, REPS)
    report("peer_grbm_gibbs_langevin", f"GRBM (PyTorch {torch.__version__.split('a')[0]})", ms,
           "modified CD 784-4096 batch 512, 10 x 10 Gibbs-Langevin",
           {"data": source, "commit": commit, "torch_threads": torch.get_num_threads(),
            "mean_var": round(model.get_var().mean().item(), 4), **timing})


if __name__ == "__main__":
    main()
