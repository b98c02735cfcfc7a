"""Measured cost of an FFT-based extractor set per transform and per extractor (issue 18), and
the size of the FFT code and tables.

The set: ``examples/gait_spectral/spectral.sensors.toml`` trained on BasicMotions TRAIN with
``--budget 8`` (window 40 samples, FFT of 64 points, hop 20): ``acc_x.std``, ``acc_x.max``,
``acc_y.bandratio_0_625to1_25_over_1_25to2_5``, ``gyro_z.autocorr_10``, ``gyro_z.entropy``,
``gyro_z.percentile_90``, ``acc_y.zcr``, ``acc_y.mean`` (float32). Each firmware is built from
the bundle's plan with only some extractors left (:func:`dataclasses.replace`; the other model
inputs stay 0) and run (QEMU ``-icount`` on mps2-an386 / mps2-an385: instructions; simavr on the
ATmega328P: cycles); one window of a TEST recording is pushed and the extractors' cost is the
device's count of that window's ``<name>_stream_compute`` (STATS). With ``C(S)`` that cost for
the set ``S`` and an anchor ``b`` (``bandpower:0-5`` on the same channel: the sum of the
spectrum's bins):

- an extractor's own cost is ``C({e, b}) - C({b})`` (the channel's copy and FFT are paid by b);
  a time-domain one's is ``C({e}) - C({})``;
- the channel's FFT transform (with the copy of the window it reads) is ``C({b}) - C({}) -
  own(b)``, ``own(b) = C({e, b}) - C({e})`` for a spectral e of that channel.

Sizes: ``arm-none-eabi-size`` / ``avr-size`` of ``sbmodel_stream.o`` with and without the spectral
extractors, and the tables' symbols (``nm -S``).

Run: ``python benchmarks/spectral_costs.py BUNDLE`` (BUNDLE: the trained example).
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

DATA = Path("/work/shared/data/basic_motions")
TARGETS = (("mps2-an386", "instr"), ("mps2-an385", "instr"), ("arduino-uno", "cycles"))


def extractors_cost(bundle, plan, target, work: Path, samples, harness) -> float:
    """STATS extractor cost of the first window of ``samples`` on the firmware of ``plan``."""
    from sensorbudget.device_sim.backends.firmware import launch
    from sensorbudget.device_sim.client import DeviceClient
    from sensorbudget.device_sim.link import Link
    from sensorbudget.firmware_gen import generate_firmware
    from sensorbudget.firmware_gen.build import build, write_firmware

    fw = generate_firmware(bundle, target=target, numeric=plan.numeric, name=plan.name,
                           plan=plan)
    out = write_firmware(fw, work)
    build(out)
    with launch(out, harness=harness) as dev:
        client = DeviceClient(Link(dev.port, timeout=600, retries=0),
                              max_request=fw.manifest["max_request_payload"])
        for i in range(0, plan.window, 8):
            client.push(samples[i:min(i + 8, plan.window)])
        cost = float(client.stats()[1])
        client.quit(0)
        dev.wait()
    return cost


def measure(bundle, target: str, work: Path, harness) -> dict:
    from sensorbudget.firmware_gen.plan import ExtractorPlan, make_plan
    from sensorbudget.trainer.sensing.recordings import load_recordings
    from sensorbudget.trainer.sensing.specs import Spec, transforms_of

    plan = make_plan(bundle, name="sbmodel", numeric="float32")
    rec = load_recordings(DATA / "BasicMotions_TEST.ts", plan.sample_rate_hz).recordings[5]
    samples = np.column_stack([rec.columns[c] for c in plan.channels]).astype("<f4")
    runs = {}

    def cost(exts) -> float:
        key = tuple(e.name for e in exts)
        if key not in runs:
            p = dataclasses.replace(plan, extractors=tuple(exts))
            runs[key] = extractors_cost(bundle, p, target, work / f"fw{len(runs)}", samples,
                                        harness)
        return runs[key]

    empty = cost([])
    anchors = {}
    for e in plan.extractors:
        if e.on_series and e.channels[0] not in anchors:
            anchors[e.channels[0]] = ExtractorPlan(
                f"{plan.channels[e.channels[0]]}.bandpower_0to5", "bandpower", e.channels,
                e.slots, False, Spec("bandpower", (0.0, 5.0)))
    own, transforms = {}, {}
    for e in plan.extractors:
        if e.on_series:
            b = anchors[e.channels[0]]
            own[e.name] = cost([e, b]) - cost([b])
            if e.full_spec.entry.spectral:
                (t,) = transforms_of(e.full_spec.text, [plan.channels[e.channels[0]]])
                own_b = cost([e, b]) - cost([e])
                transforms[t + " (+ window copy)"] = cost([b]) - empty - own_b
        else:
            own[e.name] = cost([e]) - empty
    return {"empty": empty, "all": cost(list(plan.extractors)), "transforms": transforms,
            "extractors": own}


def sizes(bundle, work: Path) -> dict:
    """{target: (stream.o text+data with, without the spectral extractors, tables bytes)}."""
    from sensorbudget.firmware_gen import generate_firmware
    from sensorbudget.firmware_gen.build import write_firmware
    from sensorbudget.firmware_gen.plan import make_plan
    from sensorbudget.firmware_gen.targets import get_target

    plan = make_plan(bundle, name="sbmodel", numeric="float32")
    plain = dataclasses.replace(plan, extractors=tuple(
        e for e in plan.extractors if not e.full_spec.entry.spectral))
    out = {}
    for target, _ in TARGETS:
        t = get_target(target)
        cc, size, nm = (("avr-gcc", "avr-size", "avr-nm") if t.arch == "avr" else
                        ("arm-none-eabi-gcc", "arm-none-eabi-size", "arm-none-eabi-nm"))
        row = []
        for i, p in enumerate((plan, plain)):
            fw = generate_firmware(bundle, target=target, numeric="float32", plan=p)
            d = write_firmware(fw, work / f"size-{target}-{i}")
            subprocess.run([cc, *t.cflags, "-c", "sbmodel_stream.c", "-o", "s.o"], cwd=d,
                           check=True)
            text, data = subprocess.run([size, "s.o"], cwd=d, capture_output=True, text=True,
                                        check=True).stdout.splitlines()[1].split()[:2]
            row.append(int(text) + int(data))
            if i == 0:
                syms = subprocess.run([nm, "-S", "s.o"], cwd=d, capture_output=True, text=True,
                                      check=True).stdout.splitlines()
                tables = sum(int(f[1], 16) for f in (s.split() for s in syms)
                             if len(f) == 4 and any(k in f[3] for k in
                                                    ("_rev_", "_twr_", "_twi_", "_hann_",
                                                     "_freq_")))
        out[target] = (row[0], row[1], tables)
    return out


def main(bundle_dir: str) -> None:
    from sensorbudget.firmware_gen.build import build_simavr_harness
    from sensorbudget.trainer.bundle.model import load_bundle

    bundle = load_bundle(bundle_dir)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        harness = build_simavr_harness(work / "simavr")
        results = {t: measure(bundle, t, work / t, harness if t == "arduino-uno" else None)
                   for t, _ in TARGETS}
        size = sizes(bundle, work)
    names = list(results[TARGETS[0][0]]["transforms"]) + list(
        results[TARGETS[0][0]]["extractors"])
    print("| part | " + " | ".join(f"{t} ({u})" for t, u in TARGETS) + " |")
    print("|---|" + "---|" * len(TARGETS))
    for label, key in (("frame (no extractor)", "empty"), ("all eight", "all")):
        print(f"| {label} | " + " | ".join(f"{results[t][key]:.0f}" for t, _ in TARGETS) + " |")
    for n in names:
        part = "transforms" if n in results[TARGETS[0][0]]["transforms"] else "extractors"
        print(f"| {n} | " + " | ".join(f"{results[t][part][n]:.0f}" for t, _ in TARGETS) + " |")
    print("\n| target | stream.o with spectral (B) | without (B) | tables (B) |")
    print("|---|---|---|---|")
    for t, (a, b, tab) in size.items():
        print(f"| {t} | {a} | {b} | {tab} |")


if __name__ == "__main__":
    main(sys.argv[1])
