"""The examples of python/examples.

bas_ucd.py must train exactly as the C program examples/bas_ucd.c does:
both run here with the same options, and the final parameters of every
method must agree (they are bit-identical; the tolerance only admits
float rounding). The other examples get quick smoke runs.

EBM_REPO is the repository root (default: two directories above this one);
the C program is $EBM_REPO/build/examples/bas_ucd (`make check-python`
builds it).
"""
import importlib.util
import os
import runpy
import subprocess
import sys

import numpy as np
import pytest

import ebm

REPO = os.environ.get("EBM_REPO") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "python", "examples")
BAS_UCD = os.path.join(REPO, "build", "examples", "bas_ucd")


def example(name):
    """The module python/examples/<name>.py, imported from its file."""
    spec = importlib.util.spec_from_file_location("ebm_example_" + name,
                                                  os.path.join(EXAMPLES, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bas_ucd_matches_c(tmp_path, capsys):
    assert os.access(BAS_UCD, os.X_OK), "%s is missing: run `make check-python` (or `make " \
        "examples`)" % BAS_UCD
    bas_ucd = example("bas_ucd")
    methods = ",".join(bas_ucd.METHODS)
    options = ["--methods", methods, "--iters", "30", "--every", "10", "--chains", "100",
               "--seed", "3"]
    c_dir = tmp_path / "c"
    c_dir.mkdir()
    subprocess.run([BAS_UCD] + options + ["--save", str(c_dir), "--out", str(tmp_path / "out")],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    models = bas_ucd.main(options)
    out = capsys.readouterr().out
    assert set(models) == set(bas_ucd.METHODS)
    for name, model in models.items():
        assert "%-8s it     30/30  loglik" % name in out
        c_params = ebm.load(str(c_dir / ("bas_%s.ebm" % name.replace("-", "_")))).params()
        np.testing.assert_allclose(model.params(), c_params, rtol=1e-6, atol=1e-7,
                                   err_msg="method " + name)


def test_bas_ucd_save(tmp_path):
    models = example("bas_ucd").main(["--methods", "ucd", "--iters", "3", "--every", "3",
                                      "--chains", "10", "--save", str(tmp_path)])
    saved = ebm.load(str(tmp_path / "bas_ucd.ebm"))
    np.testing.assert_array_equal(saved.params(), models["ucd"].params())


def test_dbm_ucd_lmi_smoke(capsys):
    m, (bound, log_z, err) = example("dbm_ucd_lmi").main(
        ["--hidden", "16", "--steps", "20", "--every", "10", "--batch", "20", "--test-rows",
         "20", "--ais-chains", "10", "--ais-betas", "100"])
    out = capsys.readouterr().out
    assert "step     10/20" in out and "step     20/20" in out
    assert "trained" in out
    assert m.sizes[1:] == (16, 16)
    assert np.isfinite(bound) and np.isfinite(log_z) and np.isfinite(err)


def test_digits_ucd_smoke(monkeypatch, capsys):
    pytest.importorskip("sklearn")
    monkeypatch.setattr(sys, "argv", ["digits_ucd.py", "5"])
    runpy.run_path(os.path.join(EXAMPLES, "digits_ucd.py"), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("epoch   5  log-likelihood per image")
    train_ll = float(lines[0].split("train")[1].split()[0])
    assert -64 * np.log(2) < train_ll < 0  # better than the uniform distribution
