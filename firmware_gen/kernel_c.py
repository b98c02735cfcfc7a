"""``<name>_kernel.h``: the model kernel the firmware calls, ``<name>_fw_predict``.

``unrolled`` kernels are straight-line code with the weights as constants, in exactly the order
of export's ``<name>_predict`` loop (``acc = b[j]``; ``acc = acc + w[i][j] * x[i]`` for i in
selection order), so float32 stays bit-identical to the header and to numpy. On Cortex-M4F the
multiply-add is a ``vmla.f32``, which rounds the product before the addition (it is not the fused
``vfma``), i.e. the same two roundings in one instruction. Fixed-point kernels accumulate exactly
(the header guarantees no overflow), so their order is free; Q15 is in :mod:`.kernel_q15` (dual
16-bit MACs on Cortex-M4, two targets per multiplier pass on AVR). ``loop`` kernels call the
header's functions; on AVR, where ``static const`` data is copied into the 2 KB of RAM, they
run the same loop (same order) over copies of the weights in flash (``PROGMEM``, read with
``pgm_read_*``) instead, so the weights never take RAM (the unrolled kernels keep them in the
instructions). ``SB_CONST`` / ``SB_READ_*`` name the storage class and the reads; a build may
define them itself.
"""

from __future__ import annotations

from sensorbudget.export import cgen
from sensorbudget.trainer.version import package_version

from . import kernel_q15
from .ctemplate import macro
from .errors import FirmwareGenError
from .plan import FORMAT_VERSION

KERNELS = ("auto", "loop", "unrolled")
AUTO_UNROLL_MAX_MACS = 256   # k*t above this: the header's loop (code size)

TEMPLATE = "stream.c.j2"   # the kernel's functions (and the multiply-add)


def mla(p: str) -> str:
    """``<p>_mla(acc, w, x)``: acc + w * x with the product rounded to float before the sum
    (two roundings, no FMA; VMLA.F32 on a Cortex-M4F), from ``templates/stream.c.j2``."""
    return macro(TEMPLATE, "mla", p)


def choose_kernel(kernel: str, k: int, t: int) -> str:
    if kernel not in KERNELS:
        raise FirmwareGenError(f"kernel={kernel!r} is not one of {KERNELS}")
    if kernel == "auto":
        return "unrolled" if k * t <= AUTO_UNROLL_MAX_MACS else "loop"
    return kernel


def _unrolled_float(p, W, b) -> str:
    """``<p>_predict_unrolled``: acc = b[j], then acc = mla(acc, W[i][j], x[i]) for i in order
    (the header's loop, weights as float32 literals)."""
    return macro(TEMPLATE, "unrolled_float", p, [[cgen.c_float(v) for v in row] for row in W],
                 [cgen.c_float(v) for v in b])


def _unrolled_fixed(p, fx) -> str:
    fmt = fx.fmt
    if fmt.name == "q15":
        return kernel_q15.unrolled_q15(p, fx)
    acc_t = fmt.acc_ctype
    return macro(TEMPLATE, "unrolled_fixed", p, fmt.name, fmt.ctype, acc_t,
                 [[int(v) for v in row] for row in fx.weights],
                 [cgen.c_int(v, acc_t) for v in fx.intercepts])


_FLASH_MACROS = """\
/* Constant tables in flash: PROGMEM and pgm_read_* on AVR (whose static const data would be
 * copied to RAM), plain static const elsewhere. */
#ifndef SB_CONST
#if defined(__AVR__)
#include <avr/pgmspace.h>
#define SB_CONST PROGMEM
#define SB_READ_F32(p) pgm_read_float(p)
#define SB_READ_I16(p) ((int16_t)pgm_read_word(p))
#define SB_READ_I32(p) ((int32_t)pgm_read_dword(p))
#define SB_READ_BYTES(dst, src, n) memcpy_P((dst), (src), (n))
#else
#define SB_CONST
#define SB_READ_F32(p) (*(p))
#define SB_READ_I16(p) (*(p))
#define SB_READ_I32(p) (*(p))
#define SB_READ_BYTES(dst, src, n) memcpy((dst), (src), (n))
#endif
#endif
"""


def _flash_loop(p, plan, bundle, header) -> str:
    """``<p>_predict_flash``: the header's loop (same order, same arithmetic) over weight tables
    declared ``SB_CONST`` (flash on AVR)."""
    import numpy as np

    P = p.upper()
    dims = (f"{P}_N_FEATURES", f"{P}_N_TARGETS")
    fx = header.fixed
    if fx is None:
        ct, acc_t, read_w, sfx = "float", "float", "SB_READ_F32", ""
        W, B = np.asarray(bundle.W, dtype=np.float32), np.asarray(bundle.b, dtype=np.float32)
        init = f"SB_READ_F32({cgen.JOIN}&{p}_flash_b[j])"
        step = f"acc = acc + SB_READ_F32(&{p}_flash_w[i][j]){cgen.BREAK}* x[i];"
        done = "scores[j] = acc;"
    else:
        q, ct, acc_t = fx.fmt.name, fx.fmt.ctype, fx.fmt.acc_ctype
        read_w, sfx = {"int16_t": "SB_READ_I16", "int32_t": "SB_READ_I32"}[ct], f"_{q}"
        W, B = fx.weights, list(fx.intercepts)
        init = f"{p}_flash_acc({cgen.JOIN}&{p}_flash_b[j])"
        step = f"acc += ({acc_t}){read_w}(&{p}_flash_w[i][j]){cgen.BREAK}* ({acc_t})x[i];"
        done = f"scores[j] = {p}_{q}_rescale(acc);"
    tables = [cgen.array_declare(ct, f"{p}_flash_w", W, size_macros=dims, storage="SB_CONST"),
              cgen.array_declare(acc_t, f"{p}_flash_b", B, size_macros=(f"{P}_N_TARGETS",),
                                 storage="SB_CONST")]
    return "".join(tables) + "\n" + macro(TEMPLATE, "flash_predict", p, P, sfx, ct, acc_t,
                                            init, step, done, fx is not None)


def kernel_header(plan, bundle, header, kernel: str) -> str:
    """:func:`_kernel_header` (lines short by construction: cgen.fit)."""
    return _kernel_header(plan, bundle, header, kernel)


def _kernel_header(plan, bundle, header, kernel: str) -> str:
    """The kernel header text; ``header`` is export's :class:`~sensorbudget.export.c_header.CHeader`."""
    p, P = plan.name, plan.name.upper()
    kernel = choose_kernel(kernel, plan.k, plan.t)
    ct = {"float32": "float", "q15": "int16_t", "q31": "int32_t"}[plan.numeric]
    sfx = "" if plan.numeric == "float32" else f"_{plan.numeric}"
    parts = [cgen.block_comment([
        f"{p}_kernel.h: the model kernel of the firmware ({kernel}), generated by sensorbudget "
        f"{package_version()}.", f"Generated file, do not edit. Format version {FORMAT_VERSION}; "
        f"bundle sha256 {plan.bundle_sha256}."]),
        f"#ifndef {P}_KERNEL_H\n#define {P}_KERNEL_H\n",
        f'#include <stdint.h>\n#include <string.h>\n#include "{p}.h"\n',
        f"#define {P}_KERNEL_FORMAT_VERSION {FORMAT_VERSION}",
        f"#define {P}_KERNEL_BUNDLE_ID UINT32_C(0x{plan.bundle_id:08x})",
        f"#define {P}_KERNEL_UNROLLED {int(kernel == 'unrolled')}", ""]
    if kernel == "unrolled":
        if header.fixed is None:
            import numpy as np

            parts.append(_unrolled_float(p, np.asarray(bundle.W, dtype=np.float32),
                                         np.asarray(bundle.b, dtype=np.float32)))
        else:
            parts.append(_unrolled_fixed(p, header.fixed))
    else:
        parts += [_FLASH_MACROS, "#if defined(__AVR__)",
                  _flash_loop(p, plan, bundle, header).rstrip("\n"), "#endif\n"]
    parts.append(macro(TEMPLATE, "fw_predict", p, sfx, ct, kernel == "unrolled"))
    parts.append(f"#endif /* {P}_KERNEL_H */\n")
    return "\n".join(parts)
