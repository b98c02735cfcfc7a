/*
 * sbfw_hal_fe310.c: the hifive1 target (sensorbudget firmware_gen): a SiFive HiFive1 Rev B with
 * the FE310-G002 (SiFive E31 core, RV32IMAC, no FPU), register level, written from the FE310-G002
 * manual (chapters PRCI, GPIO, UART, and the E31 core's CSRs). QEMU -M sifive_e,revb=true runs
 * the same image (its mask ROM jumps to 0x20010000 like the Rev B bootloader does).
 *
 * - Clock: hfclk from the 16 MHz crystal (HFXOSC) with the PLL bypassed: first run from the
 *   internal ring oscillator (pllsel = 0), enable HFXOSC and wait for hfxoscrdy, select it as
 *   the PLL reference with the PLL bypassed, then select the PLL path again (pllsel = 1).
 * - UART: UART0 on GPIO 16 (RX) / 17 (TX), IOF0, which the HiFive1 Rev B's J-Link OB exposes as
 *   its USB serial port; 115200 8N1, polled. div = round(16 MHz / 115200) - 1 = 138
 *   (16 MHz / 139 = 115108 baud, -0.08 %).
 * - Costs: minstret (instructions retired) or mcycle (core clock cycles), 64-bit CSR pairs.
 *   QEMU has no timing model: under -icount shift=0 both count one per instruction (exact
 *   instruction counts); the HAL reads minstret there and reports instructions. On the chip
 *   (mvendorid 0x489, SiFive's JEDEC id; QEMU's sifive_e reads 0) it reports mcycle cycles,
 *   or minstret instructions when built with -DSBFW_COST_INSTRET.
 * - Exit (QUIT, traps): on QEMU semihosting SYS_EXIT_EXTENDED (the exit status is the code); on
 *   the chip a semihosting call without a debugger would trap, so the firmware starts again at
 *   _start (the board sends SBFW_READY_BANNER again, as after a reset).
 */
#include "sbfw_hal.h"

#define SBFW_REG(addr) (*(volatile uint32_t *)(addr))
#define SBFW_PRCI 0x10008000u
#define SBFW_PRCI_HFROSCCFG SBFW_REG(SBFW_PRCI + 0x00u)   /* 30 hfroscen, 31 hfroscrdy */
#define SBFW_PRCI_HFXOSCCFG SBFW_REG(SBFW_PRCI + 0x04u)   /* 30 hfxoscen, 31 hfxoscrdy */
#define SBFW_PRCI_PLLCFG SBFW_REG(SBFW_PRCI + 0x08u)      /* 16 pllsel, 17 refsel, 18 bypass */
#define SBFW_PRCI_PLLOUTDIV SBFW_REG(SBFW_PRCI + 0x0Cu)   /* 8 plloutdivby1 */
#define SBFW_OSC_EN (1u << 30)
#define SBFW_OSC_RDY (1u << 31)
#define SBFW_PLLSEL (1u << 16)
#define SBFW_PLLREFSEL (1u << 17)
#define SBFW_PLLBYPASS (1u << 18)
#define SBFW_GPIO 0x10012000u
#define SBFW_GPIO_IOF_EN SBFW_REG(SBFW_GPIO + 0x38u)
#define SBFW_GPIO_IOF_SEL SBFW_REG(SBFW_GPIO + 0x3Cu)
#define SBFW_UART0_PINS ((1u << 16) | (1u << 17))
#define SBFW_UART0 0x10013000u
#define SBFW_UART_TXDATA SBFW_REG(SBFW_UART0 + 0x00u)     /* 31 full */
#define SBFW_UART_RXDATA SBFW_REG(SBFW_UART0 + 0x04u)     /* 31 empty, 7:0 data */
#define SBFW_UART_TXCTRL SBFW_REG(SBFW_UART0 + 0x08u)     /* 0 txen, 1 nstop, 18:16 txcnt */
#define SBFW_UART_RXCTRL SBFW_REG(SBFW_UART0 + 0x0Cu)     /* 0 rxen, 18:16 rxcnt */
#define SBFW_UART_IP SBFW_REG(SBFW_UART0 + 0x14u)         /* 0 txwm */
#define SBFW_UART_DIV SBFW_REG(SBFW_UART0 + 0x18u)
#define SBFW_FIFO_FLAG (1u << 31)
#define SBFW_SIFIVE_VENDOR 0x489u

#ifndef SBFW_HFCLK_HZ
#define SBFW_HFCLK_HZ 16000000u
#endif
#ifndef SBFW_BAUD
#define SBFW_BAUD 115200u
#endif
#define SBFW_UART_DIV_VALUE ((SBFW_HFCLK_HZ + SBFW_BAUD / 2u) / SBFW_BAUD - 1u)

void _start(void);

static uint8_t sbfw_silicon;      /* 1: the FE310 itself, 0: QEMU */
static uint64_t sbfw_t0;

static uint32_t sbfw_csr_mvendorid(void)
{
    uint32_t v;
    __asm__ volatile("csrr %0, mvendorid" : "=r"(v));
    return v;
}

/* minstret or mcycle as one 64-bit value (the high half read twice: no carry in between). */
static uint64_t sbfw_counter(void)
{
    uint32_t hi, lo, again;
    if (sbfw_silicon) {
#ifndef SBFW_COST_INSTRET
        do {
            __asm__ volatile("csrr %0, mcycleh\n\tcsrr %1, mcycle\n\tcsrr %2, mcycleh"
                             : "=r"(hi), "=r"(lo), "=r"(again));
        } while (hi != again);
        return ((uint64_t)hi << 32) | lo;
#endif
    }
    do {
        __asm__ volatile("csrr %0, minstreth\n\tcsrr %1, minstret\n\tcsrr %2, minstreth"
                         : "=r"(hi), "=r"(lo), "=r"(again));
    } while (hi != again);
    return ((uint64_t)hi << 32) | lo;
}

void sbfw_hal_init(void)
{
    sbfw_silicon = (uint8_t)(sbfw_csr_mvendorid() == SBFW_SIFIVE_VENDOR);
    SBFW_PRCI_HFROSCCFG |= SBFW_OSC_EN;                   /* run from the ring oscillator */
    while ((SBFW_PRCI_HFROSCCFG & SBFW_OSC_RDY) == 0u) {
    }
    SBFW_PRCI_PLLCFG &= ~SBFW_PLLSEL;
    SBFW_PRCI_HFXOSCCFG |= SBFW_OSC_EN;                   /* the 16 MHz crystal */
    while ((SBFW_PRCI_HFXOSCCFG & SBFW_OSC_RDY) == 0u) {
    }
    SBFW_PRCI_PLLCFG = SBFW_PLLREFSEL | SBFW_PLLBYPASS;   /* PLL path = HFXOSC, bypassed */
    SBFW_PRCI_PLLOUTDIV = 1u << 8;
    SBFW_PRCI_PLLCFG = SBFW_PLLREFSEL | SBFW_PLLBYPASS | SBFW_PLLSEL;
    SBFW_UART_DIV = SBFW_UART_DIV_VALUE;
    SBFW_GPIO_IOF_SEL &= ~SBFW_UART0_PINS;                /* IOF0: UART0 */
    SBFW_GPIO_IOF_EN |= SBFW_UART0_PINS;
    SBFW_UART_TXCTRL = 1u | (1u << 16);                   /* txen, 1 stop bit, txwm below 1 */
    SBFW_UART_RXCTRL = 1u;                                /* rxen */
    sbfw_hal_write((const uint8_t *)SBFW_READY_BANNER,
                   (uint16_t)(sizeof SBFW_READY_BANNER - 1u));
}

int sbfw_hal_getc(void)
{
    for (;;) {
        const uint32_t v = SBFW_UART_RXDATA;              /* one read pops the byte */
        if ((v & SBFW_FIFO_FLAG) == 0u) {
            return (int)(v & 0xFFu);
        }
    }
}

void sbfw_hal_write(const uint8_t *data, uint16_t n)
{
    uint16_t i;
    for (i = 0u; i < n; ++i) {
        while ((SBFW_UART_TXDATA & SBFW_FIFO_FLAG) != 0u) {
        }
        SBFW_UART_TXDATA = data[i];
    }
}

void sbfw_hal_flush(void)
{
    while ((SBFW_UART_IP & 1u) == 0u) {                   /* txwm: the FIFO is empty */
    }
}

void sbfw_hal_cost_start(void)
{
    sbfw_t0 = sbfw_counter();
}

uint64_t sbfw_hal_cost_stop(void)
{
    return sbfw_counter() - sbfw_t0;
}

uint8_t sbfw_hal_cost_unit(void)
{
#ifndef SBFW_COST_INSTRET
    if (sbfw_silicon) {
        return SBFW_UNIT_CYCLES;
    }
#endif
    return SBFW_UNIT_INSTRUCTIONS;
}

/* RISC-V semihosting: the three-instruction sequence (uncompressed, one 16-byte aligned group,
 * so it never straddles a page) with a0 = operation, a1 = parameter block. */
void sbfw_hal_exit(uint8_t code)
{
    static volatile uint32_t block[2];
    if (sbfw_silicon) {
        sbfw_hal_flush();
        _start();
    }
    block[0] = 0x20026u;              /* ADP_Stopped_ApplicationExit */
    block[1] = code;
    __asm__ volatile("mv a0, %0\n\tmv a1, %1\n\t"
                     ".balign 16\n\t.option push\n\t.option norvc\n\t"
                     "slli zero, zero, 0x1f\n\tebreak\n\tsrai zero, zero, 7\n\t.option pop"
                     : : "r"(0x20u), "r"(block) : "a0", "a1", "memory");
    for (;;) {
    }
}
