"""Protocol v2 link soak at scale: 10^6 predictions (default) through the real link and client
to the Python device over a channel with bit flips, byte drops, late duplicates, reordering and
garbage bursts (device_sim.soak), float32 with small and >= 44-value frames, and Q15.

Usage: python benchmarks/soak_link.py [--predictions N] [--seed S] [--depth D ...]

Prints one line per numeric format and depth (requests in flight: 1 = one at a time, 8 = the
pipelined replay's link, issue 29): predictions, correct, wrong (must be 0), lost, requests,
requests lost (the link's count, overtaken ones included), refused, overtaken (refused as stale
because a later one ran first; resent after a mid-segment RESET, not lost), the injected faults
and the wall time; exits 1 if any prediction was wrong or
unaccounted for. tests/device_sim/test_soak.py runs 10^5 of these in the test suite.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _tiny_bundle(base: Path) -> Path:
    from click.testing import CliRunner

    from sensorbudget.cli import main
    from tests.fixtures import TINY_SENSORS, write_stream

    (base / "sensors.toml").write_text(TINY_SENSORS)
    rec = write_stream(base / "stream.csv", n=240, seed=0, nan_at=())
    out = CliRunner().invoke(main, ["train", str(rec), "--sensors", str(base / "sensors.toml"),
                                    "--budget", "4", "-o", str(base / "bundle")])
    if out.exit_code != 0:
        raise SystemExit(out.output)
    return base / "bundle"


def main() -> int:
    from sensorbudget.device_sim.reference import ReferenceModel
    from sensorbudget.device_sim.soak import DEFAULT_FAULTS, run_soak
    from sensorbudget.trainer.bundle.model import load_bundle

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--predictions", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--depth", type=int, nargs="+", default=[8, 1],
                    help="requests in flight (one soak of --predictions per depth)")
    args = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as d:
        bundle = load_bundle(_tiny_bundle(Path(d)))
    print(f"faults: {DEFAULT_FAULTS}")
    for depth, numeric, share in [(d, n, s) for d in args.depth
                                  for n, s in (("float32", 0.6), ("q15", 0.4))]:
        model = ReferenceModel(bundle, numeric,
                               full_scale=None if numeric == "float32" else {"*": 64.0})
        start = time.monotonic()
        r = run_soak(model, int(args.predictions * share), seed=args.seed, depth=depth)
        wall = time.monotonic() - start
        print(f"depth {depth} {numeric}: {r.predictions} predictions, {r.correct} correct, "
              f"{r.wrong} wrong, "
              f"{r.lost} lost (reported); {r.requests} requests, {r.requests_lost} lost, "
              f"{r.requests_refused} refused, {r.overtaken} overtaken (sent again after "
              f"{r.resyncs} RESETs); faults {r.faults}; "
              f"{r.link['dropped_frames']} frames dropped, {r.link['stale_frames']} stale, "
              f"{r.link['abandoned']} requests abandoned; "
              f"{wall:.0f} s", flush=True)
        failed |= r.wrong != 0 or r.correct + r.lost != r.predictions
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
