"""Benchmark part of ``bench_attack.py`` (issue 36): anonymeter's three attacks in sdckit, side by side
with the ``anonymeter`` package on the same releases.

    .venv/bin/python benchmarks/_attack_anonymeter.py [--attacks 500] [--max-attempts 100000]

Adult (``load_adult_text``: 30,162 records, age a number, the 8 other columns categories) split with a
fixed seed into 24,130 training records and 6,032 held out (``default_rng([1, 36]).permutation``, the
split of ``synthesize --holdout 0.2 --seed 1``). Two releases of the training records:

* ``cart``: ``synthesize(m=1, model="cart", seed=1)`` (``sdckit anonymize synthesize``'s default);
* ``k=5``: the optimal full-domain generalization of the 8 attributes other than salary-class at k = 5
  with 5% suppression (ARX's hierarchies; labels such as ``[20-40)`` or ``*`` are categories for both
  tools: a column that is not numeric in every file is compared as text).

On each, with the training records as the original and the held-out ones as the control, both tools
run: singling out multivariate (3 attributes) and univariate; linkability with the adversary's two
datasets {age, sex, race, marital-status} / {education, native-country, workclass, occupation}; and
inference of salary-class and of marital-status from the 8 others — ``--attacks`` attacks each
(anonymeter's default 500), ``max_attempts = --max-attempts`` for multivariate singling out (the
same for both; anonymeter's default of 10 million would take hours on the generalization).
Linkability and inference attack the same records in both tools: ``--attacks`` training and control
records drawn with a fixed seed are given as the original and the control (each tool then attacks
all of them).

Printed per attack: attack, baseline and control rates and the risk, each with its 95% interval, for
sdckit and anonymeter; "agree" when the two tools' intervals of the attack rate, of the control rate
and of the risk overlap; time (wall, after the tool compiled its numba kernels on a small slice) and
the peak resident memory above the process's own at the start of the attack (each attack of each
tool runs in its own spawned process); the ratio of sdckit's time to anonymeter's. For singling out,
the control successes before the size correction and the correction factor of each tool (anonymeter
1.1's factor does not depend on the control's successes: see ``sdckit.attack.singling_out``). Skips
cleanly (exit 0) without the Adult
data or without anonymeter.

Expected disagreements, each a documented deviation from anonymeter 1.1 (module docstrings of
``sdckit.attack``): the control rate (and so the risk) of multivariate singling out on the CART
release, where anonymeter's size correction multiplies the control's successes by a factor that does
not depend on them (0.31), sdckit's by the fitted one (about 1.1; before the correction the two agree:
77 and 80 of 500); the inference baselines (anonymeter's is near 0: it aligns guesses with targets by
row label); and inference on the k = 5 release, where whole classes tie and anonymeter gives every
target of a tie the same guess (numpy's sort order), sdckit a random one for each target.
"""

from __future__ import annotations

import argparse
import multiprocessing
import pickle
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from _common import adult_missing, load_adult_text, print_header

SEED = 1
SECRET = "salary-class"
LINK = (["age", "sex", "race", "marital-status"], ["education", "native-country", "workclass", "occupation"])


def _rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * resource.getpagesize() / 2**20


def _reset_peak() -> None:
    # Linux: writing 5 to clear_refs resets the peak resident set size (VmHWM) to the current one
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def _peak_mib() -> float:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(tool: str, attack: str, params: dict, frames: tuple, path: str) -> None:
    """One tool's attack in a fresh process: its numba kernels compiled on a slice first, then the
    timed run; the peak resident memory above the process's own before the timed run."""
    import logging
    import warnings

    logging.getLogger("anonymeter").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    run = run_sdckit if tool == "sdckit" else run_anonymeter
    few = {**params, "n_attacks": 20}
    if "max_attempts" in few:
        few["max_attempts"] = 1000
    run(attack, few, *(frame.head(300) for frame in frames))
    _reset_peak()  # the warm-up's peak (numba compiling) is not the attack's
    start_rss = _rss_mib()
    started = time.perf_counter()
    result = run(attack, params, *frames)
    elapsed = time.perf_counter() - started
    peak = _peak_mib()
    with open(path, "wb") as handle:
        pickle.dump((result, elapsed, max(peak - start_rss, 0.0)), handle)


def isolated(tool: str, attack: str, params: dict, frames: tuple) -> tuple[Any, float, float]:
    """``tool``'s attack in a spawned process (polars' threads do not survive a fork): its result,
    wall seconds and peak RSS above its start (MiB)."""
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "out.pickle")
        context = multiprocessing.get_context("spawn")
        process = context.Process(target=_child, args=(tool, attack, params, frames, path))
        process.start()
        process.join()
        if process.exitcode != 0:
            raise SystemExit(f"the {tool} child failed (exit {process.exitcode})")
        with open(path, "rb") as handle:
            return pickle.load(handle)


def load() -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    frame, hierarchies = load_adult_text()
    n = frame.height
    count = int(round(0.2 * n))
    order = np.random.default_rng([SEED, 36]).permutation(n)
    return frame[np.sort(order[count:])], frame[np.sort(order[:count])], hierarchies


def releases(train_text: pl.DataFrame, hierarchies: dict) -> dict[str, pl.DataFrame]:
    from sdckit.anonymize.recoding import full_domain_generalization
    from sdckit.anonymize.synthesis import synthesize
    from sdckit.models import KAnonymity
    from sdckit.table import Table

    train = train_text.with_columns(pl.col("age").cast(pl.Int64))
    started = time.perf_counter()
    cart = synthesize(Table.from_frame(train), m=1, model="cart", seed=SEED).table.data.drop("implicate")
    print(
        f"release cart     synthesize(m=1, cart, seed {SEED}): {cart.height:,} records, "
        f"{time.perf_counter() - started:.1f} s"
    )
    started = time.perf_counter()
    qis = [c for c in train_text.columns if c != SECRET]
    general = full_domain_generalization(
        Table.from_frame(train_text),
        [KAnonymity(5)],
        quasi_identifiers=qis,
        hierarchies={c: hierarchies[c] for c in qis},
        suppression_limit=0.05,
        metric="loss",
    )
    levels = ", ".join(f"{c} {(general.levels or {})[c]}" for c in qis)
    print(
        f"release k=5      full-domain generalization, 5% suppression ({levels}): "
        f"{time.perf_counter() - started:.1f} s"
    )
    return {"cart": cart, "k=5": general.table.data}


def aligned(original: pl.DataFrame, *others: pl.DataFrame) -> list[pl.DataFrame]:
    """The frames with every column that is not numeric in all of them as text (what both tools see)."""
    frames = [original, *others]
    text = [c for c in original.columns if not all(f.schema[c].is_numeric() for f in frames)]
    return [f.with_columns(pl.col(c).cast(pl.String) for c in text) for f in frames]


def plan(attacks: int, max_attempts: int) -> list[tuple[str, str, dict]]:
    return [
        (
            "singling-out multivariate",
            "singling-out",
            {"n_attacks": attacks, "n_cols": 3, "max_attempts": max_attempts},
        ),
        ("singling-out univariate", "singling-out", {"n_attacks": attacks, "mode": "univariate"}),
        (
            "linkability",
            "linkability",
            {"n_attacks": attacks, "aux_cols": "/".join(",".join(h) for h in LINK)},
        ),
        ("inference salary-class", "inference", {"n_attacks": attacks, "secret": SECRET}),
        ("inference marital-status", "inference", {"n_attacks": attacks, "secret": "marital-status"}),
    ]


def run_sdckit(attack: str, params: dict, ori: pl.DataFrame, syn: pl.DataFrame, ctl: pl.DataFrame) -> dict:
    from sdckit.attack.base import run_attack
    from sdckit.table import Table

    if attack == "inference":
        params = {**params, "aux_cols": ",".join(c for c in ori.columns if c != params["secret"])}
    result = run_attack(
        attack, Table.from_frame(ori), Table.from_frame(syn), Table.from_frame(ctl), params=params
    )
    rates = {"attack": result.attack, "baseline": result.baseline, "control": result.control}
    out: dict[str, tuple] = {key: (rate.value, rate.error) for key, rate in rates.items() if rate is not None}
    risk = result.risk
    out["risk"] = (risk.value, risk.low, risk.high)
    if "control_successes_measured" in result.details:
        out["measured"] = (
            result.details["control_successes_measured"],
            result.details["control_size_factor"],
        )
    return out


def run_anonymeter(
    attack: str, params: dict, ori: pl.DataFrame, syn: pl.DataFrame, ctl: pl.DataFrame
) -> dict:
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

    o, s, c = ori.to_pandas(), syn.to_pandas(), ctl.to_pandas()
    np.random.seed(SEED)  # noqa: NPY002 (pandas' sample() in linkability and inference draws from it)
    calls: list[tuple[int, int]] = []
    if attack == "singling-out":
        from anonymeter.evaluators import singling_out_evaluator as module

        successful = module._evaluate_queries_and_return_successful

        def recorded(df, queries):  # the control's successes before the size correction
            found = successful(df=df, queries=queries)
            calls.append((df.height, len(found)))
            return found

        module._evaluate_queries_and_return_successful = recorded
        mode = params.get("mode", "multivariate")
        evaluator = SinglingOutEvaluator(
            ori=o,
            syn=s,
            control=c,
            n_attacks=params["n_attacks"],
            n_cols=params.get("n_cols", 3),
            max_attempts=params.get("max_attempts", 10_000_000),
            seed=SEED,
        ).evaluate(mode=mode)
    elif attack == "linkability":
        evaluator = LinkabilityEvaluator(
            ori=o, syn=s, control=c, n_attacks=params["n_attacks"], aux_cols=LINK, n_neighbors=1
        ).evaluate(n_jobs=1)
    else:
        aux = [name for name in o.columns if name != params["secret"]]
        evaluator = InferenceEvaluator(
            ori=o, syn=s, control=c, aux_cols=aux, secret=params["secret"], n_attacks=params["n_attacks"]
        ).evaluate(n_jobs=1)
    results = evaluator.results(confidence_level=0.95)
    out: dict[str, tuple] = {
        "attack": (results.attack_rate.value, results.attack_rate.error),
        "baseline": (results.baseline_rate.value, results.baseline_rate.error),
        "control": (results.control_rate.value, results.control_rate.error),
    }
    risk = evaluator.risk(confidence_level=0.95)
    out["risk"] = (risk.value, risk.ci[0], risk.ci[1])
    if attack == "singling-out":
        measured = calls[-1][1]  # the last evaluation is the control's
        corrected = evaluator._n_control  # noqa: SLF001 (the corrected count is not public)
        out["measured"] = (measured, corrected / measured if measured else None)
    return out


def _before_correction(ours: dict, theirs: dict) -> str:
    if "measured" not in ours or "measured" not in theirs:
        return ""

    def factor(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    (a, fa), (b, fb) = ours["measured"], theirs["measured"]
    return (
        f"; control successes before the size correction: sdckit {a} (x{factor(fa)}), "
        f"anonymeter {b} (x{factor(fb)})"
    )


def _interval(figure: tuple) -> tuple[float, float]:
    if len(figure) == 3:
        return figure[1], figure[2]
    return max(figure[0] - figure[1], 0.0), min(figure[0] + figure[1], 1.0)


def _shown(figure: tuple | None) -> str:
    if figure is None:
        return f"{'-':>20}"
    low, high = _interval(figure)
    return f"{figure[0]:>6.3f} [{low:.3f},{high:.3f}]"


def _overlap(a: tuple, b: tuple) -> bool:
    (la, ha), (lb, hb) = _interval(a), _interval(b)
    return la <= hb + 1e-12 and lb <= ha + 1e-12


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attacks", type=int, default=500)
    parser.add_argument("--max-attempts", type=int, default=100_000)
    arguments = parser.parse_args(argv)
    print_header(argv, ("polars", "numpy", "numba", "pandas", "anonymeter"))
    why = adult_missing(("age",) + tuple(c for c in LINK[0] + LINK[1] if c != "age"))
    if why is not None:
        print(f"skipped: {why}")
        return 0
    try:
        import anonymeter  # noqa: F401
    except ImportError:
        print("skipped: anonymeter is not installed (install it for this benchmark only, --no-deps)")
        return 0
    import logging
    import warnings

    logging.getLogger("anonymeter").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    train_text, holdout_text, hierarchies = load()
    print(
        f"data             Adult {train_text.height + holdout_text.height:,}: "
        f"{train_text.height:,} training, "
        f"{holdout_text.height:,} held out (seed {SEED})"
    )
    made = releases(train_text, hierarchies)
    train = train_text.with_columns(pl.col("age").cast(pl.Int64))
    holdout = holdout_text.with_columns(pl.col("age").cast(pl.Int64))
    tasks = plan(arguments.attacks, arguments.max_attempts)
    rng = np.random.default_rng(SEED)
    picked_train = train[
        np.sort(rng.choice(train.height, size=min(arguments.attacks, train.height), replace=False))
    ]
    picked_control = holdout[
        np.sort(rng.choice(holdout.height, size=min(arguments.attacks, holdout.height), replace=False))
    ]
    header = (
        f"{'release':<6} {'attack':<26} {'tool':<10} {'attack rate':>20} {'baseline':>20} {'control':>20} "
        f"{'risk':>20} {'s':>7} {'MiB':>6}"
    )
    disagreements = 0
    for release_name, release in made.items():
        ori_all, syn, ctl_all = aligned(train, release, holdout)
        ori_few, _, ctl_few = aligned(picked_train, release, picked_control)
        if release_name == "cart":
            print(header)
        for label, attack, params in tasks:
            frames = (ori_all, syn, ctl_all) if attack == "singling-out" else (ori_few, syn, ctl_few)
            ours, our_s, our_mib = isolated("sdckit", attack, params, frames)
            theirs, their_s, their_mib = isolated("anonymeter", attack, params, frames)
            for tool, figures, seconds, mib in (
                ("sdckit", ours, our_s, our_mib),
                ("anonymeter", theirs, their_s, their_mib),
            ):
                print(
                    f"{release_name:<6} {label:<26} {tool:<10} {_shown(figures['attack'])} "
                    f"{_shown(figures['baseline'])} "
                    f"{_shown(figures.get('control'))} {_shown(figures['risk'])} {seconds:>7.2f} {mib:>6.0f}"
                )
            agree = all(_overlap(ours[key], theirs[key]) for key in ("attack", "control", "risk"))
            disagreements += not agree
            print(
                f"{'':<6} {'':<26} {'':<10} {'agree' if agree else 'DISAGREE'}; "
                f"time sdckit/anonymeter {our_s / their_s:.3f}{_before_correction(ours, theirs)}"
            )
    print(
        f"{disagreements} of {len(made) * len(tasks)} attacks disagree (the intervals of attack, control and "
        "risk overlap otherwise)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
