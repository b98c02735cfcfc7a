"""The registry's entries: one :class:`~.board.Board` per board (adding a board is one entry
here plus its HAL, startup and linker script in ``firmware_gen/templates/``).

Sources of the power figures (docs/boards.md says what was checked on an emulator and what only
on paper): a datasheet and its table or section, or ``"estimate: <why>"`` where no datasheet
figure was at hand (``estimated_power`` is then True and reports say "estimated").
"""

from __future__ import annotations

from .board import Board, Flashing, Measurer

_CM_LD = ("-nostartfiles", "-specs=nano.specs", "-specs=nosys.specs", "-Wl,--gc-sections")
_MPS2_HAL = ("sbfw_hal_cortex_m.c", "sbfw_startup_cortex_m.c", "sbfw_systick.h")
_F4_HAL = ("sbfw_hal_stm32f4.c", "sbfw_startup_cortex_m.c", "sbfw_systick.h")
_M4F = ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")
_M3 = ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft")
#: -icount shifts: one instruction is 2**shift ns of virtual time, so SysTick (25 MHz on MPS2,
#: 168 MHz on netduinoplus2) ticks 6.4 / 5.376 times per instruction and the HALs convert ticks
#: back to exact instruction counts (sbfw_hal_cortex_m.c, sbfw_hal_stm32f4.c).
MPS2_ICOUNT_SHIFT = 8
NETDUINO_ICOUNT_SHIFT = 5
_SYSTICK = "SysTick under QEMU -icount shift={}: exact instruction counts"
_ARM = ("arm-none-eabi-gcc", "qemu-system-arm")

#: RISC-V (sbfw_hal_fe310.c, sbfw_startup_riscv.c): Debian's GCC 12 picks its multilib (picolibc,
#: libgcc's soft float) by -march, and "rv32imac_zicsr" matches none (it falls back to the rv64
#: default and the link fails); ISA spec 2.2 keeps Zicsr inside "I", so "-march=rv32imac
#: -misa-spec=2.2" is the same instruction set with the rv32imac/ilp32 multilib.
_RV_LD = ("-nostartfiles", "--specs=picolibc.specs", "-Wl,--gc-sections")
_RV32IMAC = ("-march=rv32imac", "-mabi=ilp32", "-misa-spec=2.2", "-mcmodel=medany")
_FE310_HAL = ("sbfw_hal_fe310.c", "sbfw_startup_riscv.c")
_RV32EC = ("-march=rv32ec", "-mabi=ilp32e", "-misa-spec=2.2", "-mcmodel=medlow")
_CH32_HAL = ("sbfw_hal_ch32v003.c", "sbfw_startup_riscv.c")
_MINSTRET = ("minstret under QEMU -icount shift=0: exact instruction counts; mcycle cycles on "
             "the chip (minstret with -DSBFW_COST_INSTRET)")
_UNICORN = ("unicorn per-call instruction count of <name>_stream_compute and the model kernel "
            "({})")
_EMULATION_ONLY = ("an emulation board (QEMU {}), nothing to flash: run it with 'sensorbudget "
                   "simulate' or the 'run' command in firmware.json")

#: ST DS10086 = DocID025644, the STM32F401xD/xE datasheet (the NUCLEO-F401RE's part)
_F401_RUN = ("ST DS10086 (STM32F401xD/E datasheet, DocID025644), features list: Run mode "
             "146 uA/MHz, peripherals off, 25 C")
_F401_STOP = ("ST DS10086 features list: Stop mode (Flash in Stop mode, fast wake-up) 42 uA "
              "typ at 25 C")

HOST = Board(
    name="host", description="this computer (gcc); protocol on stdin/stdout",
    board="this computer", part="-", cpu="the host CPU", ops="host", clock_hz=1e9,
    flash_bytes=None, ram_bytes=None, stack_reserve=0, memory_source="no limits",
    supply_v=1.0, active_current_a=15.0, sleep_current_a=2.0, sleep_mode="idle",
    active_source="estimate: a PC has no meaningful per-prediction energy (15 W placeholder)",
    sleep_source="estimate: placeholder (2 W idle)", estimated_power=True,
    arch="host", prefix="", arch_flags=(), opt="-O2", ld_flags=(), hal=("sbfw_hal_host.c",),
    linker_script=None, exe="firmware", rx_payload=1024, tx_payload=1024,
    cost_unit="nanoseconds", counter="CLOCK_MONOTONIC nanoseconds", runtime_ram=None,
    emulators=("native",), emulated_by="this computer",
    flashing=Flashing("none", note="host firmware is not flashed: run ./firmware in the "
                                   "output directory"),
    measured_by=(Measurer("host", "firmware", "native", "host CLOCK_MONOTONIC nanoseconds "
                          "(host time, not a target cost)", 2.0, tools=("gcc",)),))

MPS2_AN386 = Board(
    name="mps2-an386", aliases=("cortex-m4f",),
    description="Cortex-M4F, hard float, MPS2 AN386 FPGA board (emulation only)",
    board="ARM MPS2+ FPGA board, AN386 image (emulation only)", part="AN386 FPGA image",
    cpu="Cortex-M4F (FPU, DSP)", ops="m4f", clock_hz=25e6, flash_bytes=4 << 20,
    ram_bytes=4 << 20, stack_reserve=2048,
    memory_source="ARM AN386 application note: 4 MB code SRAM at 0x0, 4 MB data SRAM at "
                  "0x20000000 (QEMU mps2-an386)",
    supply_v=3.3, active_current_a=146e-6 * 25, sleep_current_a=42e-6,
    sleep_mode="Stop (stand-in)",
    active_source="estimate: no silicon (an FPGA); the STM32F401's figure (" + _F401_RUN
                  + ") at the 25 MHz FPGA clock as a stand-in",
    sleep_source="estimate: no silicon; the STM32F401's (" + _F401_STOP + ") as a stand-in",
    estimated_power=True, arch="cortex-m", prefix="arm-none-eabi-", arch_flags=_M4F,
    opt="-O2", ld_flags=("-T", "sbfw_cortex_m.ld", *_CM_LD), hal=_MPS2_HAL,
    linker_script="sbfw_cortex_m.ld", exe="firmware.elf", rx_payload=1024, tx_payload=1024,
    cost_unit="instructions", counter=_SYSTICK.format(MPS2_ICOUNT_SHIFT), runtime_ram=2178,
    qemu=("qemu-system-arm", "mps2-an386", MPS2_ICOUNT_SHIFT, 0), emulators=("qemu",),
    emulated_by="QEMU mps2-an386",
    flashing=Flashing("none", note=_EMULATION_ONLY.format("mps2-an386")),
    measured_by=(
        Measurer("qemu-m4f", "firmware", "qemu", "QEMU mps2-an386 -icount shift=8: exact "
                 "instruction counts from SysTick (6.4 ticks per instruction)", 5.0,
                 tools=_ARM),
        Measurer("unicorn-m4f", "unicorn", "unicorn",
                 _UNICORN.format("Cortex-M4F ELF"), tools=("arm-none-eabi-gcc",))))

MPS2_AN385 = Board(
    name="mps2-an385", aliases=("cortex-m3",),
    description="Cortex-M3, soft float, MPS2 AN385 FPGA board (emulation only)",
    board="ARM MPS2+ FPGA board, AN385 image (emulation only)", part="AN385 FPGA image",
    cpu="Cortex-M3", ops="m3", clock_hz=25e6, flash_bytes=4 << 20, ram_bytes=4 << 20,
    stack_reserve=2048,
    memory_source="ARM AN385 application note: 4 MB code SRAM at 0x0, 4 MB data SRAM at "
                  "0x20000000 (QEMU mps2-an385)",
    supply_v=3.3, active_current_a=0.027 / 72 * 25, sleep_current_a=24e-6,
    sleep_mode="Stop (stand-in)",
    active_source="estimate: no silicon (an FPGA); ST DS5319 (STM32F103) Run mode ~27 mA at "
                  "72 MHz scaled to the 25 MHz FPGA clock, as a stand-in",
    sleep_source="estimate: no silicon; ST DS5319 (STM32F103) Stop mode ~24 uA, as a stand-in",
    estimated_power=True, arch="cortex-m", prefix="arm-none-eabi-", arch_flags=_M3, opt="-O2",
    ld_flags=("-T", "sbfw_cortex_m.ld", *_CM_LD), hal=_MPS2_HAL,
    linker_script="sbfw_cortex_m.ld", exe="firmware.elf", rx_payload=1024, tx_payload=1024,
    cost_unit="instructions", counter=_SYSTICK.format(MPS2_ICOUNT_SHIFT), runtime_ram=2178,
    libm_errno_ram=104, qemu=("qemu-system-arm", "mps2-an385", MPS2_ICOUNT_SHIFT, 0),
    emulators=("qemu",), emulated_by="QEMU mps2-an385",
    flashing=Flashing("none", note=_EMULATION_ONLY.format("mps2-an385")),
    measured_by=(Measurer("qemu-m3", "firmware", "qemu", "QEMU mps2-an385 -icount shift=8: "
                          "exact instruction counts from SysTick (6.4 ticks per instruction)",
                          5.0, tools=_ARM),))

NUCLEO_F4 = Board(
    name="nucleo-f4",
    description="Nucleo-64 STM32F401RE/F411RE/F446RE, USART2 = ST-LINK USB serial",
    board="ST Nucleo-64 (NUCLEO-F401RE; F411RE and F446RE are larger)", part="STM32F401RE",
    cpu="Cortex-M4F (FPU, DSP)", ops="m4f", clock_hz=16e6, flash_bytes=512 * 1024,
    ram_bytes=96 * 1024, stack_reserve=2048,
    memory_source="ST RM0368 section 2.3 memory map / DS10086 ordering information: 512 KB "
                  "Flash at 0x08000000, 96 KB SRAM at 0x20000000",
    supply_v=3.3, active_current_a=146e-6 * 16, sleep_current_a=42e-6,
    sleep_mode="Stop (Flash in Stop mode)",
    active_source=_F401_RUN + "; 16 MHz HSI x 146 uA/MHz = 2.3 mA (a lower bound: the "
                  "static current adds at low clocks)",
    sleep_source=_F401_STOP, estimated_power=False,
    arch="cortex-m", prefix="arm-none-eabi-", arch_flags=_M4F, opt="-O2",
    ld_flags=("-T", "sbfw_stm32f4.ld", *_CM_LD), hal=_F4_HAL,
    linker_script="sbfw_stm32f4.ld", exe="firmware.elf", rx_payload=1024, tx_payload=1024,
    cost_unit="cycles",
    counter="DWT CYCCNT cycles on the board; " + _SYSTICK.format(NETDUINO_ICOUNT_SHIFT)
            + " in QEMU (DWT reads 0 there)", runtime_ram=2186,
    qemu=("qemu-system-arm", "netduinoplus2", NETDUINO_ICOUNT_SHIFT, 1), emulators=("qemu",),
    emulated_by="QEMU netduinoplus2 (STM32F405)",
    flashing=Flashing("cortex-m", ("copy", "st-flash", "pyocd", "openocd"), chip="stm32f401re",
                      openocd_config="board/st_nucleo_f4.cfg", base=0x08000000),
    measured_by=(Measurer("qemu-nucleo-f4", "firmware", "qemu", "the nucleo-f4 image on QEMU "
                          "netduinoplus2 -icount shift=5: exact instruction counts from SysTick"
                          " (DWT CYCCNT, the board's cycle counter, reads 0 in QEMU)", 5.0,
                          tools=_ARM),))

ARDUINO_UNO = Board(
    name="arduino-uno", aliases=("avr",),
    description="Arduino Uno, ATmega328P at 16 MHz, USART0 = USB serial",
    board="Arduino Uno R3", part="ATmega328P", cpu="AVR (8-bit, no FPU)", ops="avr8",
    clock_hz=16e6, flash_bytes=32 * 1024 - 512, ram_bytes=2 * 1024, stack_reserve=256,
    memory_source="Microchip DS40002061A (ATmega328P) section 8: 32 KB Flash, of which the "
                  "Uno's optiboot bootloader keeps the top 0.5 KB; 2 KB SRAM",
    supply_v=5.0, active_current_a=0.010, sleep_current_a=4.2e-6,
    sleep_mode="Power-down with watchdog",
    active_source="Atmel 8161D (ATmega328P) 28.2.4 / 8271D table 29-9, ATmega328P DC "
                  "characteristics: Active 8 MHz, VCC = 5 V: 5.2 mA typ; about doubled at "
                  "16 MHz per the active-supply-current-vs-frequency figure (~10 mA)",
    sleep_source="the same table: Power-down mode, WDT enabled, VCC = 3 V: 4.2 uA typ "
                 "(tabulated at 3 V only)", estimated_power=False,
    arch="avr", prefix="avr-", arch_flags=("-mmcu=atmega328p", "-DF_CPU=16000000UL"),
    opt="-O2", ld_flags=("-Wl,--gc-sections",), hal=("sbfw_hal_avr.c",), linker_script=None,
    exe="firmware.elf", rx_payload=256, tx_payload=160, cost_unit="cycles",
    counter="Timer1 at clk/1: cycles (exact in simavr; qemu-system-avr is a functional check)",
    runtime_ram=528, qemu=("qemu-system-avr", "arduino-uno", None, 0),
    emulators=("simavr", "qemu"), emulated_by="simavr (cycles), qemu-system-avr arduino-uno",
    flashing=Flashing("avrdude", ("avrdude",), chip="atmega328p"),
    measured_by=(Measurer("simavr", "firmware", "simavr", "simavr cycle count (Timer1 at "
                          "clk/1), ATmega328P at 16 MHz", 10.0, tools=("avr-gcc", "gcc")),))

HIFIVE1 = Board(
    name="hifive1",
    description="SiFive HiFive1 Rev B, FE310-G002 (RV32IMAC, no FPU), 16 MHz, UART0 = USB",
    board="SiFive HiFive1 Rev B", part="FE310-G002", cpu="SiFive E31 (RV32IMAC, no FPU)",
    ops="rv32", clock_hz=16e6, flash_bytes=4 * 1024 * 1024 - 64 * 1024,
    ram_bytes=16 * 1024, stack_reserve=2048,
    memory_source="SiFive FE310-G002 manual, memory map: 16 KiB data SRAM (DTIM) at "
                  "0x80000000, off-chip QSPI flash mapped at 0x20000000; HiFive1 Rev B "
                  "schematics / getting-started guide: 32 Mbit (4 MiB) ISSI flash whose first "
                  "64 KiB hold the bootloader (programs at 0x20010000)",
    supply_v=3.3, active_current_a=0.016, sleep_current_a=10e-6,
    sleep_mode="deep sleep (AON domain and PMU on, core off)",
    active_source="SiFive FE310-G002 Datasheet v1p2, table 4.1 (typical, 16 MHz crystal, "
                  "27 C): ACTIVE 8 mA on VDD (1.8 V core) + 8 mA on IVDD (3.3 V I/O); both "
                  "counted at the 3.3 V supply, as through the board's linear regulator",
    sleep_source="estimate: the FE310-G002 datasheet v1p2 and manual v1p5 give no sleep "
                 "current; ~10 uA for deep sleep (AON block, PMU, "
                 "32 kHz LFROSC), a placeholder", estimated_power=True,
    arch="riscv", prefix="riscv64-unknown-elf-", arch_flags=_RV32IMAC, opt="-O2",
    ld_flags=("-T", "sbfw_fe310.ld", *_RV_LD), hal=_FE310_HAL, linker_script="sbfw_fe310.ld",
    exe="firmware.elf", rx_payload=1024, tx_payload=1024, cost_unit="cycles",
    counter=_MINSTRET, runtime_ram=2189, qemu=("qemu-system-riscv32", "sifive_e,revb=true", 0, 0),
    emulators=("qemu",), emulated_by="QEMU sifive_e,revb=true",
    flashing=Flashing("riscv", ("copy", "openocd", "jlink"),
                      openocd_config="board/sifive-hifive1-revb.cfg", jlink_device="FE310"),
    measured_by=(
        Measurer("qemu-hifive1", "firmware", "qemu", "the hifive1 image (FE310-G002, RV32IMAC) "
                 "on QEMU sifive_e,revb=true -icount shift=0: exact instruction counts from "
                 "minstret (the board itself reports mcycle cycles)", 5.0,
                 tools=("riscv64-unknown-elf-gcc", "qemu-system-riscv32")),
        Measurer("unicorn-rv32", "unicorn", "unicorn", _UNICORN.format(
                 "RV32IMC ELF, core only: no caches, flash wait states or bus"),
                 march="rv32imc", tools=("riscv64-unknown-elf-gcc",))))

CH32V003 = Board(
    name="ch32v003",
    description="WCH CH32V003 (RV32EC, no FPU, 2 KB SRAM, 16 KB flash) at 48 MHz, USART1",
    board="any CH32V003 board (e.g. CH32V003F4P6 evaluation board)", part="CH32V003",
    cpu="WCH QingKe V2A (RV32EC, no FPU)", ops="rv32", clock_hz=48e6, flash_bytes=16 * 1024,
    ram_bytes=2 * 1024, stack_reserve=256,
    memory_source="WCH CH32V003 datasheet, features / memory map: 16 KB code flash at "
                  "0x08000000 (aliased at 0x0), 2 KB SRAM at 0x20000000",
    supply_v=3.3, active_current_a=4.16e-3, sleep_current_a=10.26e-6,
    sleep_mode="standby (LSI on for the auto-wakeup)",
    active_source="WCH CH32V003 datasheet V1.2, section 3.3.4, table 3-6-1 (run mode, code in "
                  "flash, VDD 3.3 V, typical, measured): 4.16 mA at FHCLK 48 MHz from HSI with "
                  "the peripheral clocks off (6.57 mA with all of them on; the firmware's USART1 "
                  "lies between)",
    sleep_source="WCH CH32V003 datasheet V1.2, table 3-8 (standby, typical, measured): "
                 "10.26 uA at VDD 3.3 V with the LSI on (8.76 uA with it off)",
    estimated_power=False,
    arch="riscv", prefix="riscv64-unknown-elf-", arch_flags=_RV32EC, opt="-Os",
    ld_flags=("-T", "sbfw_ch32v003.ld", *_RV_LD), hal=_CH32_HAL,
    linker_script="sbfw_ch32v003.ld", exe="firmware.elf", rx_payload=256, tx_payload=160,
    cost_unit="cycles",
    counter="SysTick (STK) HCLK cycles on the chip; unicorn-rv32ec instruction counts (core "
            "only)", runtime_ram=540, emulators=(),
    emulated_by="nothing (unicorn-rv32ec runs its functions: core only)",
    flashing=Flashing("manual", note="write firmware.bin to the part's flash (0x08000000) with "
                                     "a WCH-LinkE and its tools (WCH-LinkUtility, minichlink, "
                                     "wlink)"),
    measured_by=(Measurer("unicorn-rv32ec", "unicorn", "unicorn", _UNICORN.format(
                          "RV32EC ELF, core only: no caches, flash wait states or bus"),
                          tools=("riscv64-unknown-elf-gcc",)),))

#: every board, in the order ``sensorbudget targets`` lists them
ENTRIES = (HOST, MPS2_AN386, MPS2_AN385, NUCLEO_F4, ARDUINO_UNO, HIFIVE1, CH32V003)
