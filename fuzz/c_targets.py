"""Build the C fuzz targets: generated firmware sources + a libFuzzer harness, compiled with
clang ``-fsanitize=fuzzer,address,undefined``.

``python -m fuzz.c_targets BUILD_DIR`` trains the small fuzz bundles, generates host firmware
for each configuration in :data:`CONFIGS` into ``BUILD_DIR/<target>/src`` and writes the fuzzer
executable ``BUILD_DIR/<target>/fuzzer``. Configurations cover the three numeric formats with the
host's 1024-byte buffers and with the AVR target's small ones (256-byte requests, 160-byte
answers), on a one-target model with every extractor kind and on a model with 24 targets.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SANITIZE = ("-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=all")
CFLAGS = ("-std=c99", "-g", "-O1", "-ffp-contract=off", "-fno-omit-frame-pointer",
          "-Wno-unused-function")


@dataclass(frozen=True)
class Config:
    """One C fuzz target: harness, numeric format, bundle and device buffer sizes."""

    name: str
    harness: str          # "protocol" or "stream"
    numeric: str
    bundle: str           # key of fuzz._bundles.make_bundles(..., wide=True)
    rx_payload: int = 1024
    tx_payload: int = 1024


CONFIGS = (
    Config("protocol_float32", "protocol", "float32", "regression"),
    Config("protocol_q15", "protocol", "q15", "regression"),
    Config("protocol_q31", "protocol", "q31", "regression"),
    Config("protocol_avr_q31", "protocol", "q31", "wide", 256, 160),
    Config("protocol_avr_multiclass", "protocol", "float32", "multiclass", 256, 160),
    # an 8-byte transmit buffer (issue 21: STATS/BENCH answers overflowed it)
    Config("protocol_tiny_tx", "protocol", "float32", "regression", 1024, 8),
    Config("stream_float32", "stream", "float32", "regression"),
    Config("stream_q15", "stream", "q15", "regression"),
    Config("stream_q31", "stream", "q31", "regression"),
)


def find_clang() -> str | None:
    """A clang whose libFuzzer runtime links (None when there is none)."""
    for cc in ("clang", "clang-16", "clang-15", "clang-14"):
        path = shutil.which(cc)
        if path and _links_fuzzer(path):
            return path
    return None


def _links_fuzzer(cc: str) -> bool:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "t.c"
        src.write_text("#include <stdint.h>\n#include <stddef.h>\n"
                       "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)"
                       "{(void)d;(void)n;return 0;}\n")
        done = subprocess.run([cc, *SANITIZE, str(src), "-o", str(Path(d) / "t")],
                              capture_output=True, text=True, check=False)
        return done.returncode == 0


def _generate(bundle_dir: Path, config: Config, out: Path) -> None:
    from sensorbudget.firmware_gen import generate_firmware
    from sensorbudget.trainer.bundle.model import load_bundle

    fw = generate_firmware(load_bundle(bundle_dir), target="host", numeric=config.numeric,
                           name="sbmodel")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in fw.files.items():
        (out / name).write_text(text)


def build_one(config: Config, bundles: dict, build_dir: Path, cc: str) -> Path:
    """Generate the firmware of ``config`` and compile its fuzzer; returns the executable."""
    src = build_dir / config.name / "src"
    _generate(bundles[config.bundle], config, src)
    exe = build_dir / config.name / "fuzzer"
    sources = [HERE / "c" / f"fuzz_{config.harness}.c", src / "sbmodel_stream.c"]
    if config.harness == "protocol":
        sources.append(src / "sbfw_protocol.c")
    cmd = [cc, *CFLAGS, *SANITIZE, f"-DSBFW_RX_PAYLOAD={config.rx_payload}u",
           f"-DSBFW_TX_PAYLOAD={config.tx_payload}u", f"-I{src}", *map(str, sources), "-lm",
           "-o", str(exe)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"building {config.name} failed:\n{' '.join(cmd)}\n{done.stderr}")
    return exe


def build_all(build_dir, cc: str | None = None, jobs: int = 2) -> dict:
    """{target name: fuzzer executable} for every configuration (built ``jobs`` at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    from fuzz._bundles import make_bundles

    cc = cc or find_clang()
    if cc is None:
        raise RuntimeError("no clang with libFuzzer (apt-get install clang libclang-rt-14-dev)")
    build_dir = Path(build_dir)
    bundles = make_bundles(build_dir / "bundles", wide=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        exes = pool.map(lambda c: build_one(c, bundles, build_dir, cc), CONFIGS)
        return {c.name: exe for c, exe in zip(CONFIGS, exes)}


def seeds(config: Config, build_dir) -> list:
    """Seed inputs sized for the generated model (``firmware.json``): a HELLO / PUSH / STATS /
    PREDICT / BENCH / RESET / QUIT session (protocol), or a few windows of samples (stream)."""
    import json

    m = json.loads((Path(build_dir) / config.name / "src" / "firmware.json").read_text())
    sample = 4 if m["numeric"] == "float32" else 2
    value = {"float32": 4, "q15": 2, "q31": 4}[m["numeric"]]
    frame = len(m["channels"]) * sample
    if config.harness == "stream":
        rows = min(255, 2 * m["window"] + m["hop"])      # op 4: a block across window ends
        return [bytes([1]) + bytes(range(frame)) * m["window"] * 2,
                bytes([2, 0, 3]) + bytes(m["k"] * 4 + frame * 10),
                bytes([4, rows]) + bytes(range(frame)) * rows]

    def req(cmd, payload=b""):
        return bytes([cmd]) + len(payload).to_bytes(2, "little") + payload + bytes([1, 0])

    count = min(m["window"] + m["hop"], (config.rx_payload - 2) // frame)
    session = (req(1) + req(2, count.to_bytes(2, "little") + bytes(range(256))[:frame] * count)
               + req(5) + req(3, bytes(m["k"] * value)) + req(4, b"\x02\x00\x00\x00\x00")
               + req(4, b"\x02\x00\x00\x00\x01") + req(6) + req(0x7E, b"\x00"))
    return [b"\x01" + session, b"\x00\x00\x06\x02\x01\x01\x01\x05\x12\x34\x56\x78\x00"]


if __name__ == "__main__":
    for name, path in build_all(sys.argv[1] if len(sys.argv) > 1 else "build/fuzz").items():
        print(name, path)
