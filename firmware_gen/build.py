"""Write, compile and measure a generated firmware (the I/O side of firmware_gen).

:func:`write_firmware` puts the generated files into a directory, :func:`build` runs the
generated Makefile and returns the footprint (bytes per section, flash and RAM) from
``size -A``, :func:`build_simavr_harness` compiles the AVR simulator bridge.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from sensorbudget.trainer.bundle import write_atomically

from .errors import FirmwareGenError
from .firmware import MANIFEST, MANIFEST_FORMAT, template
from .targets import get_target

FOOTPRINT = "footprint.json"
RAM_HEADROOM_WARN = 0.25    # less RAM left after the static data and the stack reserve: warn
_NOT_LOADED = (".comment", ".debug", ".stab", ".ARM.attributes", ".riscv.attributes", ".note",
               ".mmcu", ".gnu",
               ".symtab", ".strtab", ".shstrtab")
_RAM_ONLY = (".bss", ".noinit", ".tbss")
_RAM_AND_FLASH = (".data", ".tdata")
_INSTALL_HINT = ("install the toolchains with 'make deps-embedded' (Debian: gcc-arm-none-eabi "
                 "libnewlib-arm-none-eabi qemu-system-arm gcc-avr avr-libc simavr libsimavr-dev)")


def write_firmware(firmware, out_dir) -> Path:
    """Write every generated file into ``out_dir`` (created; each file replaced atomically)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise FirmwareGenError(f"output {str(out)!r} exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in firmware.files.items():
        write_atomically(out / name, text.encode("ascii"))
    return out


def read_manifest(out_dir) -> dict:
    path = Path(out_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FirmwareGenError(f"{str(path)!r} is missing: {str(out_dir)!r} is not a firmware "
                               f"directory written by 'sensorbudget firmware'") from None
    except (ValueError, RecursionError) as exc:       # bad JSON, not UTF-8, too deep
        raise FirmwareGenError(f"{str(path)!r} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise FirmwareGenError(f"{str(path)!r} is not a {MANIFEST_FORMAT} manifest")
    return manifest


def require_tool(tool: str, what: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise FirmwareGenError(f"{tool} is not installed (needed to {what}); {_INSTALL_HINT}")
    return path


def _run(argv, cwd, what: str, timeout: float = 600) -> str:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-25:])
        raise FirmwareGenError(f"{what} failed (exit {proc.returncode}): {' '.join(argv)}\n{tail}")
    return proc.stdout


def build(out_dir, *, make_vars=None) -> dict:
    """Compile the firmware in ``out_dir`` with its Makefile; returns :func:`footprint`.

    ``make_vars`` overrides Makefile variables, e.g. ``{"RX_PAYLOAD": 64}`` (smaller device
    buffers) or ``{"EXTRA_CFLAGS": "-DSBFW_TICK_SCALE=1u"}``.
    """
    out = Path(out_dir)
    manifest = read_manifest(out)
    target = get_target(manifest["target"])
    require_tool("make", "run the generated Makefile")
    require_tool(target.cc, f"build for {target.name}")
    argv = ["make", "--no-print-directory", "-C", str(out), "-B", "all"]
    argv += [f"{k}={v}" for k, v in sorted((make_vars or {}).items())]
    try:
        _run(argv, None, f"building the {target.name} firmware")
    except FirmwareGenError as exc:
        raise _linker_overflow(target, str(exc)) or exc from None
    result = footprint(out)
    check_fit(target, result)
    return result


_LD_OVERFLOW = re.compile(r"region `(FLASH|RAM)' overflowed by (\d+) bytes")
#: avr-ld: the end address of a section past the part's data (RAM) or text (flash) region
_AVR_OUTSIDE = re.compile(r"address 0x([0-9a-fA-F]+) of \S+ section `([.\w]+)' is not within "
                          r"region `(data|text)'")
AVR_RAM_START = 0x800100     # ATmega328P: SRAM from 0x100 in the data address space (0x800000)


def _linker_overflow(target, text: str):
    """The fit message of a linker's overflow error in ``text`` (None if it is not one): the
    bytes needed and the part's, never the raw linker text."""
    overflow = _LD_OVERFLOW.search(text)
    if overflow is not None:
        region, by = overflow.group(1), int(overflow.group(2))
        limit = target.flash_bytes if region == "FLASH" else target.ram_bytes
        return FirmwareGenError(_no_fit(target, "flash" if region == "FLASH" else "RAM",
                                        f"{limit + by} bytes", limit))
    outside = _AVR_OUTSIDE.search(text)
    if outside is not None and outside.group(3) == "data":
        static, reserve = int(outside.group(1), 16) - AVR_RAM_START, target.profile.stack_reserve
        return FirmwareGenError(_no_fit(
            target, "RAM", f"{static + reserve} bytes ({static} static + {reserve} stack "
            f"reserve)", target.ram_bytes))
    if outside is not None:
        return FirmwareGenError(_no_fit(target, "flash", f"{int(outside.group(1), 16)} bytes",
                                        target.flash_bytes))
    return None


def _no_fit(target, what: str, need: str, limit: int) -> str:
    p = target.profile
    return (f"the firmware needs {need} of {what}; {target.name} ({p.part}) has {limit} "
            f"(try --numeric q15, --kernel loop or a smaller bundle)")


def fit_fields(target, fp: dict) -> dict:
    """``stack_reserve``, ``ram_headroom`` (the part of RAM left after the static data and the
    profile's stack reserve; None without a limit) and ``warnings`` (headroom under 25 %) of
    the footprint ``fp`` on ``target``'s part."""
    p = target.profile
    out = {"stack_reserve": p.stack_reserve, "ram_headroom": None, "warnings": []}
    if target.ram_bytes is None:
        return out
    need = fp["ram_bytes"] + p.stack_reserve
    out["ram_headroom"] = round(1.0 - need / target.ram_bytes, 4)
    if 0 <= out["ram_headroom"] < RAM_HEADROOM_WARN:
        out["warnings"].append(
            f"RAM headroom {out['ram_headroom']:.0%} is under {RAM_HEADROOM_WARN:.0%}: "
            f"{fp['ram_bytes']} static + {p.stack_reserve} stack reserve of "
            f"{target.ram_bytes} bytes on {target.name} ({p.part}); the stack may need more")
    return out


def check_fit(target, fp: dict) -> None:
    """FirmwareGenError when the footprint ``fp`` does not fit the target's part: flash, or RAM
    plus the profile's stack reserve (:func:`fit_fields`)."""
    p = target.profile
    if target.flash_bytes is not None and fp["flash_bytes"] > target.flash_bytes:
        raise FirmwareGenError(_no_fit(target, "flash", f"{fp['flash_bytes']} bytes",
                                       target.flash_bytes))
    need = fp["ram_bytes"] + p.stack_reserve
    if target.ram_bytes is not None and need > target.ram_bytes:
        raise FirmwareGenError(_no_fit(target, "RAM", f"{need} bytes ({fp['ram_bytes']} static "
                                       f"+ {p.stack_reserve} stack reserve)", target.ram_bytes))


def parse_size(text: str) -> dict:
    """{section: bytes} from ``size -A`` output."""
    sections = {}
    for line in text.splitlines():
        m = re.match(r"^(\.\S+)\s+(\d+)\s+(\d+)\s*$", line)
        if m and not m.group(1).startswith(_NOT_LOADED) and int(m.group(2)) > 0:
            sections[m.group(1)] = int(m.group(2))
    return sections


def footprint(out_dir) -> dict:
    """Flash and RAM of the built firmware per section (``<prefix>size -A``).

    Flash = every loaded section except .bss-like ones (.data counts twice: its initial values
    in flash, the variables in RAM); RAM = .data + .bss (+ .noinit), without the stack.
    """
    out = Path(out_dir)
    manifest = read_manifest(out)
    target = get_target(manifest["target"])
    exe = out / target.exe
    if not exe.is_file():
        raise FirmwareGenError(f"{str(exe)!r} is missing: build the firmware first (--build)")
    size = require_tool(f"{target.prefix}size", "measure the footprint")
    sections = parse_size(_run([size, "-A", str(exe)], None, "size"))
    ram = sum(v for k, v in sections.items() if k.startswith(_RAM_ONLY + _RAM_AND_FLASH))
    flash = sum(v for k, v in sections.items() if not k.startswith(_RAM_ONLY))
    artifacts = {k: v for k, v in manifest["artifacts"].items() if (out / v).is_file()}
    return {"target": target.name, "numeric": manifest["numeric"], "name": manifest["name"],
            "kernel": manifest["kernel"], "sections": dict(sorted(sections.items())),
            "flash_bytes": flash, "ram_bytes": ram, "flash_limit": target.flash_bytes,
            "ram_limit": target.ram_bytes, "artifacts": artifacts,
            **fit_fields(target, {"ram_bytes": ram}), **stack_fields(target, None)}


_STACK = re.compile(r"sbfw stack high-water (\d+) bytes")
#: the images whose startup paints the stack and whose exit prints its high-water mark
STACK_PAINTED = ("cortex-m", "avr")


def stack_high_water(out_dir, log=None) -> int | None:
    """Bytes of stack the firmware in ``out_dir`` used in its last emulated run (QEMU or
    simavr): the high-water mark its exit prints (the stack is painted at reset:
    sbfw_startup_cortex_m.c, sbfw_simavr.c) into ``log`` (default ``<target>.stderr.log``;
    device_sim's backends write ``<backend>.stderr.log``); None without one."""
    out = Path(out_dir)
    if log is None:
        log = out / f"{get_target(read_manifest(out)['target']).name}.stderr.log"
    log = Path(log)
    found = _STACK.findall(log.read_text(errors="replace")) if log.is_file() else []
    return int(found[-1]) if found else None


def stack_fields(target, high_water: int | None, where: str = "") -> dict:
    """The footprint's stack entries: ``stack_high_water`` (bytes measured on an emulator, or
    None) and ``stack_measured`` (how, or why not), beside ``stack_reserve``."""
    if high_water is not None:
        how = (f"measured on {where or 'an emulator'}: the stack painted at reset, its "
               f"high-water mark read at exit")
    elif target.arch not in STACK_PAINTED:
        how = f"not measured: the {target.name} image does not paint its stack"
    else:
        how = ("not measured: the build runs nothing; an emulated run (simulate --backend "
               "qemu-*/simavr) measures it")
    return {"stack_high_water": high_water, "stack_measured": how}


def record_stack(out_dir, log, where: str) -> dict:
    """After an emulated run of the firmware in ``out_dir``: its :func:`stack_fields` from the
    run's ``log`` (``where`` names the emulator); ``footprint.json``, when the build wrote one,
    gets them too (rewritten atomically)."""
    out = Path(out_dir)
    target = get_target(read_manifest(out)["target"])
    fields = {**stack_fields(target, stack_high_water(out, log), where),
              "stack_reserve": target.profile.stack_reserve}
    path = out / FOOTPRINT
    if path.is_file():
        fp = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(fp, dict):
            fp.update(fields)
            write_atomically(path, (json.dumps(fp, indent=2, sort_keys=True) + "\n").encode())
    return fields


def format_footprint(fp: dict) -> str:
    """The footprint as a small text table."""
    lines = [f"footprint of {fp['name']} ({fp['target']}, {fp['numeric']}, {fp['kernel']} "
             f"kernel):", f"  {'section':<16} {'bytes':>9}"]
    lines += [f"  {name:<16} {size:>9}" for name, size in fp["sections"].items()]

    def limit(value):
        return "" if value is None else f" of {value}"

    lines.append(f"  flash {fp['flash_bytes']} bytes{limit(fp['flash_limit'])}, "
                 f"RAM {fp['ram_bytes']} bytes{limit(fp['ram_limit'])} (without stack)")
    if fp.get("ram_headroom") is not None:
        lines.append(f"  RAM headroom {fp['ram_headroom']:.0%} after a stack reserve of "
                     f"{fp['stack_reserve']} bytes")
    if fp.get("stack_high_water") is not None:
        lines.append(f"  stack high-water mark {fp['stack_high_water']} bytes of the "
                     f"{fp['stack_reserve']}-byte reserve ({fp['stack_measured']})")
    elif fp.get("stack_measured"):
        lines.append(f"  stack {fp['stack_measured']}")
    return "\n".join(lines)


def build_simavr_harness(dest_dir) -> Path:
    """Compile ``sbfw_simavr`` (USART0 <-> stdin/stdout bridge) into ``dest_dir``."""
    cc = require_tool("gcc", "build the simavr harness")
    if not any(Path(p, "simavr", "sim_avr.h").is_file() for p in ("/usr/include",
                                                                  "/usr/local/include")):
        raise FirmwareGenError(f"the simavr headers are not installed (libsimavr-dev); "
                               f"{_INSTALL_HINT}")
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    src = dest / "sbfw_simavr.c"
    if not src.is_file() or src.read_text(encoding="utf-8") != template("sbfw_simavr.c"):
        src.write_text(template("sbfw_simavr.c"), encoding="utf-8")
    exe = dest / "sbfw_simavr"
    _run([cc, "-std=gnu99", "-O2", "-Wall", "-Wextra", "-Werror", str(src), "-o", str(exe),
          "-lsimavr"], None, "building the simavr harness")
    return exe
