"""Benchmark of synthetic data (issues 14, 36): utility and risk of synthetic Adult, side by side.

    .venv/bin/python benchmarks/bench_synthesis.py [--ctgan-epochs 20] [--attacks 500]
        [--inference-attacks 2000] [--skip ctgan] [--leaf 50] [--unique 3] [--subsample 0.5]
        [--goal-leaf 200] [--last-leaf 50] [--goal-tries 20] [--seed 1]

Adult (``../shared/data/adult/adult.csv``, 30,162 records, age a number, the 8 other columns
categories) is split with a fixed seed into 24,130 training records and 6,032 held out (the split of
``synthesize --holdout 0.2 --seed S``: ``default_rng([S, 36]).permutation``). Every synthesizer is
fitted on the training records and releases 24,130 records; the real holdout is the baseline a
release cannot beat ("another sample of the population"):

* ``sdckit cart``: ``synthesize(m=1, model="cart")`` as by default (leaves of 5 records);
* ``sdckit cart leaf L``: leaves of ``--leaf`` records (50);
* ``sdckit cart leaf L + smooth + reject``: and smoothing of age, and rejection of the records at
  most the holdout's 5% DCR quantile from a training record (``reject_quantile=0.05``);
* ``sdckit cart reject unique K`` and ``sdckit cart leaf L + reject unique K``: records that single
  out a training record by a predicate of at most ``--unique`` (3) attributes drawn again
  (``reject_unique``, the predicates of anonymeter's attack);
* ``sdckit cart leaf L + subsample S + reject unique K``: and every tree fitted on a share
  ``--subsample`` (0.5) of the training records, drawn per attribute (``subsample``);
* ``sdckit cart leaf G, last L + reject unique K, T tries`` (the issue-36 goal): leaves of
  ``--goal-leaf`` (200) records but for the last attribute, salary-class, whose tree has leaves of
  ``--last-leaf`` (50; ``min_samples_leaf_last``), and ``reject_unique`` K in ``--goal-tries`` (20)
  rounds (``max_tries``: more rounds redraw fewer attributes per round, at a smaller cost in TV);
* SDV 2.0 ``GaussianCopulaSynthesizer`` and ``CTGANSynthesizer`` (``--ctgan-epochs``, default 20
  instead of SDV's 300, to fit in minutes on two shared cores), when ``sdv`` is installed;
* ``holdout``: the 6,032 real held-out records themselves.

Utility: two-way TV (the mean over the 36 pairs of attributes of the total-variation distance of
their joint distribution, age as its values), the accuracy on the holdout of a random forest
(50 trees, leaves of 5, seeded) predicting salary-class from the 8 others trained on the release,
against the same forest trained on the training records; the standardized pMSE of the release against
the training records (main-effects logistic model, analytic null; Snoke et al. 2018).

Risk: anonymeter 1.1 (when installed) with the training records as ``ori``, the release as ``syn``
and the holdout as ``control`` — singling out (univariate and multivariate, ``--attacks`` attacks)
and attribute inference of salary-class and of marital-status from the other attributes
(``--inference-attacks``, 2,000 by default: with 500 the interval is too wide to decide); risk and
its 95% confidence interval. And the share of released records that are exact copies of a training
record, and the median DCR (Gower distance to the closest training record, sdckit's measure).

Time: wall clock of fitting and sampling; memory: the peak resident memory of a child process that
does only that (forked from the benchmark before it loads the data; its baseline is printed). Parts
whose package is absent print "not installed, skipped"; exits 0 without the Adult data.
"""

from __future__ import annotations

import argparse
import multiprocessing
import pickle
import resource
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl

from _common import ADULT, adult_missing, print_header

SEED = 1
SECRETS = ("salary-class", "marital-status")


def load() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    frame = pl.read_csv(ADULT / "adult.csv", separator=";", infer_schema=False)
    frame = frame.with_columns(pl.col("age").cast(pl.Int64))
    n = frame.height
    count = int(round(0.2 * n))
    order = np.random.default_rng([SEED, 36]).permutation(n)
    return frame, frame[np.sort(order[count:])], frame[np.sort(order[:count])]


def _sdckit(frame: pl.DataFrame, options: dict) -> pl.DataFrame:
    from sdckit.anonymize.synthesis import synthesize
    from sdckit.table import Table

    release = synthesize(Table.from_frame(frame), m=1, holdout=0.2, seed=SEED, **options)
    return release.table.data.drop("implicate"), release.figures.privacy


def _sdv(train: pl.DataFrame, which: str, epochs: int) -> pl.DataFrame:
    from sdv.metadata import Metadata
    from sdv.single_table import CTGANSynthesizer, GaussianCopulaSynthesizer

    data = train.to_pandas()
    columns = {name: {"sdtype": "numerical" if name == "age" else "categorical"} for name in train.columns}
    metadata = Metadata.load_from_dict({"tables": {"adult": {"columns": columns}}})
    if which == "gaussian":
        model = GaussianCopulaSynthesizer(metadata, enforce_min_max_values=True)
    else:
        import torch

        torch.manual_seed(SEED)
        model = CTGANSynthesizer(metadata, epochs=epochs, enable_gpu=False)
    np.random.seed(SEED)  # noqa: NPY002 (SDV and CTGAN draw from the legacy global generator)
    model.fit({"adult": data})  # SDV 2.0 under pandas 3 takes a one-table dict
    sample = model.sample(train.height)
    out = pl.from_pandas(sample["adult"] if isinstance(sample, dict) else sample)
    return out.with_columns(pl.col("age").round().cast(pl.Int64)), None


def _child(task: tuple, path: str) -> None:
    global SEED
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    kind, options, SEED = task
    frame, train, _ = load()
    if kind == "sdckit":
        import sdckit.anonymize.synthesis  # noqa: F401 (imported before the clock starts)
    started = time.perf_counter()
    result = _sdckit(frame, options) if kind == "sdckit" else _sdv(train, *options)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    with open(path, "wb") as handle:
        pickle.dump((result, elapsed, peak), handle)


def run_isolated(task: tuple):
    """``task`` in a fresh (spawned) process: its result, wall time and peak resident memory (MiB)."""
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "out.pickle")
        process = multiprocessing.get_context("spawn").Process(target=_child, args=(task, path))
        process.start()
        process.join()
        if process.exitcode != 0:
            raise SystemExit(f"the child failed (exit {process.exitcode})")
        with open(path, "rb") as handle:
            return pickle.load(handle)


def two_way_tv(a: pl.DataFrame, b: pl.DataFrame) -> float:
    out = []
    for x, y in combinations(a.columns, 2):
        p = a.group_by([x, y]).len("p").with_columns(pl.col("p") / a.height)
        q = b.select(pl.col(x).cast(a.schema[x]), pl.col(y).cast(a.schema[y])).group_by([x, y]).len("q")
        q = q.with_columns(pl.col("q") / b.height)
        joined = p.join(q, on=[x, y], how="full", coalesce=True).fill_null(0.0)
        out.append(0.5 * float((joined["p"] - joined["q"]).abs().sum()))
    return float(np.mean(out))


def accuracy(train: pl.DataFrame, test: pl.DataFrame, target: str = "salary-class") -> float:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.preprocessing import OneHotEncoder

    features = [c for c in train.columns if c != target and c != "age"]
    encoder = OneHotEncoder(handle_unknown="ignore").fit(pl.concat([train, test]).select(features).to_numpy())

    def x(frame):
        from scipy import sparse

        age = frame.get_column("age").cast(pl.Float64).to_numpy().reshape(-1, 1)
        return sparse.hstack([encoder.transform(frame.select(features).to_numpy()), age]).tocsr()

    forest = RandomForestClassifier(n_estimators=50, min_samples_leaf=5, random_state=SEED, n_jobs=1)
    forest.fit(x(train), train.get_column(target).to_numpy())
    return float((forest.predict(x(test)) == test.get_column(target).to_numpy()).mean())


def pmse(train: pl.DataFrame, release: pl.DataFrame) -> tuple[float, float]:
    from sdckit.utility.propensity import propensity_utility

    result = propensity_utility(
        train.with_columns(pl.col("age").cast(pl.Float64)),
        release.with_columns(pl.col("age").cast(pl.Float64)),
        train.columns,
        model="main",
    )
    return result.pmse_ratio, result.standardized_pmse


def closeness(train: pl.DataFrame, release: pl.DataFrame) -> tuple[float, float]:
    """Exact-copy share and median DCR (Gower), on a shared encoding."""
    from sdckit.anonymize._synthesis_privacy import Reference

    both = pl.concat([train, release.select(pl.col(c).cast(train.schema[c]) for c in train.columns)])
    cats = [c for c in train.columns if c != "age"]
    codes = (
        both.select(pl.col(c).cast(pl.Categorical).to_physical() for c in cats).to_numpy().astype(np.int64)
    )
    values = both.select(pl.col("age").cast(pl.Float64)).to_numpy()
    reference = Reference(codes[: train.height], values[: train.height])
    copies = reference.copies(codes[train.height :], values[train.height :]).mean()
    sample = np.random.default_rng(SEED).choice(release.height, min(2000, release.height), replace=False)
    rows = train.height + np.sort(sample)
    return float(copies), float(np.median(reference.dcr(codes[rows], values[rows])))


def anonymeter_risks(
    train: pl.DataFrame, release: pl.DataFrame, control: pl.DataFrame, attacks: int, inference: int
) -> dict:
    from anonymeter.evaluators import InferenceEvaluator, SinglingOutEvaluator

    ori, syn, ctl = (f.to_pandas() for f in (train, release, control))
    syn["age"] = syn["age"].astype(ori["age"].dtype)
    out = {}
    for mode in ("univariate", "multivariate"):
        evaluator = SinglingOutEvaluator(ori=ori, syn=syn, control=ctl, n_attacks=attacks)
        evaluator.evaluate(mode=mode)
        risk = evaluator.risk()
        out[f"so-{mode[:5]}"] = (risk.value, *risk.ci)
    for secret in SECRETS:
        aux = [c for c in ori.columns if c != secret]
        evaluator = InferenceEvaluator(
            ori=ori, syn=syn, control=ctl, aux_cols=aux, secret=secret, n_attacks=inference
        )
        evaluator.evaluate(n_jobs=1)
        risk = evaluator.risk()
        out[f"inf-{secret[:7]}"] = (risk.value, *risk.ci)
    return out


def installed(name: str) -> bool:
    try:
        __import__(name)
    except Exception:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    global SEED
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctgan-epochs", type=int, default=20)
    parser.add_argument("--attacks", type=int, default=500, help="anonymeter singling-out attacks")
    parser.add_argument("--inference-attacks", type=int, default=2000, help="anonymeter inference attacks")
    parser.add_argument("--leaf", type=int, default=50, help="leaf size of the controlled CART")
    parser.add_argument("--unique", type=int, default=3, help="reject_unique of the singling-out rows")
    parser.add_argument("--subsample", type=float, default=0.5, help="subsample of the subsample row")
    parser.add_argument("--goal-leaf", type=int, default=200, help="leaf size of the goal row")
    parser.add_argument("--last-leaf", type=int, default=50, help="last attribute's leaf size, goal row")
    parser.add_argument("--goal-tries", type=int, default=20, help="max_tries of the goal row")
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the split, the models and the forest")
    parser.add_argument(
        "--skip", nargs="*", default=[], help="rows to skip: cart controls unique goal gaussian ctgan"
    )
    args = parser.parse_args(argv)
    SEED = args.seed
    print_header(argv, packages=("polars", "numpy", "scikit-learn", "sdv", "anonymeter", "torch"))
    why = adult_missing()
    if why:
        print(f"skipped: {why}")
        return 0
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    frame, train, holdout = load()
    print(
        f"data  Adult {frame.height:,} records: {train.height:,} training, "
        f"{holdout.height:,} held out, seed {SEED}"
    )
    print(f"memory: the peak of a fresh process that reads the data (this one: {baseline:.0f} MiB before)")
    rows: list[tuple[str, tuple | None]] = [] if "cart" in args.skip else [("sdckit cart", ("sdckit", {}))]
    if "controls" not in args.skip:
        rows.append((f"sdckit cart leaf {args.leaf}", ("sdckit", {"min_samples_leaf": args.leaf})))
        controls = {"min_samples_leaf": args.leaf, "smooth": True, "reject_quantile": 0.05}
        rows.append((f"sdckit cart leaf {args.leaf} + smooth + reject 0.05", ("sdckit", controls)))
    if "unique" not in args.skip:
        rows.append((f"sdckit cart reject unique {args.unique}", ("sdckit", {"reject_unique": args.unique})))
        unique = {"min_samples_leaf": args.leaf, "reject_unique": args.unique}
        rows.append((f"sdckit cart leaf {args.leaf} + reject unique {args.unique}", ("sdckit", unique)))
        label = f"sdckit cart leaf {args.leaf} + subsample {args.subsample:g} + reject unique {args.unique}"
        rows.append((label, ("sdckit", {**unique, "subsample": args.subsample})))
    if "goal" not in args.skip:
        label = (
            f"sdckit cart leaf {args.goal_leaf}, last {args.last_leaf} + reject unique {args.unique}, "
            f"{args.goal_tries} tries"
        )
        goal = {"min_samples_leaf": args.goal_leaf, "min_samples_leaf_last": args.last_leaf}
        rows.append((label, ("sdckit", {**goal, "reject_unique": args.unique, "max_tries": args.goal_tries})))
    for which in ("gaussian", "ctgan"):
        if which in args.skip:
            continue
        if not installed("sdv"):
            print(f"SDV {which}: sdv not installed, skipped")
            continue
        rows.append(
            (
                f"SDV {which}" + (f" ({args.ctgan_epochs} epochs)" if which == "ctgan" else ""),
                ("sdv", (which, args.ctgan_epochs)),
            )
        )
    real = accuracy(train, holdout)
    print(f"train-on-real accuracy on the holdout: {real:.4f}")
    has_anonymeter = installed("anonymeter")
    if not has_anonymeter:
        print("anonymeter: not installed, skipped")
    first_time = None
    results = []
    for label, task in [*rows, ("real holdout", None)]:
        if task is None:
            release, elapsed, peak = holdout, float("nan"), float("nan")
        else:
            try:
                (release, _privacy), elapsed, peak = run_isolated((*task, SEED))
            except SystemExit as failure:
                print(f"\n{label}: {failure}")
                continue
            first_time = first_time or elapsed
        release = release.select(pl.col(c).cast(train.schema[c]) for c in train.columns)
        line = {
            "label": label,
            "time": elapsed,
            "ratio": elapsed / first_time if first_time else float("nan"),
            "peak": peak,
            "tv2": two_way_tv(train, release),
            "acc": accuracy(release, holdout) if task is not None else float("nan"),
            "pmse": pmse(train, release),
            "copies": closeness(train, release),
        }
        attack = has_anonymeter and task is not None  # the holdout is the control: not attacked
        counts = (args.attacks, args.inference_attacks)
        line["risks"] = anonymeter_risks(train, release, holdout, *counts) if attack else {}
        results.append(line)
        report(line, real)
        sys.stdout.flush()
    return 0


def report(line: dict, real: float) -> None:
    pmse_ratio, s_pmse = line["pmse"]
    copies, dcr = line["copies"]
    print(f"\n{line['label']}")
    print(
        f"  time {line['time']:.1f} s ({line['ratio']:.2f}x the first row), peak RSS {line['peak']:.0f} MiB"
    )
    acc = line["acc"]
    print(
        f"  utility: two-way TV {line['tv2']:.4f}; train-on-synthetic accuracy {acc:.4f} "
        f"(real {real:.4f}, difference {real - acc:+.4f}); pMSE ratio {pmse_ratio:.2f}, "
        f"standardized pMSE {s_pmse:.1f}"
    )
    print(f"  closeness: exact copies of a training record {copies:.1%}, median DCR {dcr:.4f}")
    for name, (value, low, high) in line["risks"].items():
        print(f"  anonymeter {name:12s} risk {value:.3f} [{low:.3f}, {high:.3f}]")


if __name__ == "__main__":
    sys.exit(main())
