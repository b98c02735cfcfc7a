/*
 * sbfw_hal_cortex_m.c: the cortex-m4f / cortex-m3 targets on the ARM MPS2 boards (QEMU
 * mps2-an386 / mps2-an385) (sensorbudget firmware_gen). UART0 is the CMSDK APB UART at
 * 0x40004000 (polled). Costs come from SysTick on the core clock (24-bit, wraps counted in
 * SysTick_Handler), scaled by SBFW_TICK_SCALE: under QEMU -icount shift=0 one tick is 40
 * instructions. Every timed region restarts SysTick (sbfw_hal_cost_start writes SYST_CVR), so
 * its count depends only on the instructions it executes, never on how long the firmware idled
 * polling the UART before it: QEMU counts are identical from run to run (whole ticks: the
 * region's instructions rounded down to a multiple of 40).
 * Exit: semihosting SYS_EXIT_EXTENDED (QEMU's exit status is the code).
 * For a real board, build with -DSBFW_TICK_SCALE=1u -DSBFW_COST_UNIT=SBFW_UNIT_CYCLES.
 */
#include "sbfw_hal.h"

#define SBFW_UART0 0x40004000u
#define SBFW_UART_DATA (*(volatile uint32_t *)(SBFW_UART0 + 0x000u))
#define SBFW_UART_STATE (*(volatile uint32_t *)(SBFW_UART0 + 0x004u))
#define SBFW_UART_CTRL (*(volatile uint32_t *)(SBFW_UART0 + 0x008u))
#define SBFW_UART_BAUDDIV (*(volatile uint32_t *)(SBFW_UART0 + 0x010u))
#define SBFW_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SBFW_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SBFW_SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SBFW_SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define SBFW_ICSR_PENDSTCLR (1u << 25)
#define SBFW_SYST_MODULUS UINT32_C(0x1000000)   /* SYST_RVR + 1: ticks per wrap */

#ifndef SBFW_TICK_SCALE
#define SBFW_TICK_SCALE 40u
#endif
#ifndef SBFW_COST_UNIT
#define SBFW_COST_UNIT SBFW_UNIT_INSTRUCTIONS
#endif
#ifndef SBFW_UART_BAUDDIV_VALUE
#define SBFW_UART_BAUDDIV_VALUE 217u    /* 25 MHz / 115200 */
#endif

void SysTick_Handler(void);

static volatile uint32_t sbfw_wraps;

void SysTick_Handler(void)
{
    sbfw_wraps++;
}

void sbfw_hal_init(void)
{
    SBFW_UART_BAUDDIV = SBFW_UART_BAUDDIV_VALUE;
    SBFW_UART_CTRL = 3u;              /* TX and RX enabled */
    SBFW_SYST_RVR = SBFW_SYST_MODULUS - 1u;
    SBFW_SYST_CVR = 0u;
    SBFW_SYST_CSR = 7u;               /* enable, interrupt, core clock */
}

int sbfw_hal_getc(void)
{
    while ((SBFW_UART_STATE & 2u) == 0u) {
    }
    return (int)(SBFW_UART_DATA & 0xFFu);
}

void sbfw_hal_write(const uint8_t *data, uint16_t n)
{
    uint16_t i;
    for (i = 0u; i < n; ++i) {
        while ((SBFW_UART_STATE & 1u) != 0u) {
        }
        SBFW_UART_DATA = data[i];
    }
}

void sbfw_hal_flush(void)
{
    while ((SBFW_UART_STATE & 1u) != 0u) {
    }
}

/* Wraps and SYST_CVR read as one consistent pair. */
static void sbfw_now(uint32_t *wraps, uint32_t *value)
{
    uint32_t w;
    do {
        w = sbfw_wraps;
        *value = SBFW_SYST_CVR;
    } while (w != sbfw_wraps);
    *wraps = w;
}

/*
 * Restart SysTick: a write to SYST_CVR clears it to 0 (and COUNTFLAG); it reloads SYST_RVR on
 * the next tick and counts down from there, so k ticks after the write it reads
 * (SBFW_SYST_MODULUS - k) mod SBFW_SYST_MODULUS, and every SBFW_SYST_MODULUS ticks the 1 -> 0
 * step raises one SysTick interrupt (one wrap). The write itself raises none (checked on QEMU
 * 7.2); a wrap pended just before the write is cleared (ICSR PENDSTCLR), and one taken before
 * sbfw_wraps is zeroed does not count. The next wrap is 2^24 ticks away.
 */
void sbfw_hal_cost_start(void)
{
    SBFW_SYST_CVR = 0u;
    SBFW_SCB_ICSR = SBFW_ICSR_PENDSTCLR;
    sbfw_wraps = 0u;
}

uint64_t sbfw_hal_cost_stop(void)
{
    uint32_t w, v;
    sbfw_now(&w, &v);
    return ((uint64_t)w * SBFW_SYST_MODULUS + (v != 0u ? SBFW_SYST_MODULUS - v : 0u))
           * SBFW_TICK_SCALE;
}

uint8_t sbfw_hal_cost_unit(void)
{
    return SBFW_COST_UNIT;
}

void sbfw_hal_exit(uint8_t code)
{
    static volatile uint32_t block[2];
    block[0] = 0x20026u;              /* ADP_Stopped_ApplicationExit */
    block[1] = code;
    __asm__ volatile("mov r0, %0\n\tmov r1, %1\n\tbkpt 0xAB"
                     : : "r"(0x20u), "r"(block) : "r0", "r1", "memory");
    for (;;) {
    }
}
