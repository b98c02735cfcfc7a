/*
 * sbfw_systick.h: instruction counts from SysTick under QEMU -icount (sensorbudget
 * firmware_gen). Included by exactly one HAL source (it defines SysTick_Handler).
 *
 * QEMU has no timing model: with -icount shift=N every instruction is 2^N ns of virtual time and
 * SysTick counts the core clock in that time. The HAL's target runs QEMU with a shift that makes
 * a tick shorter than an instruction (SBFW_TICK_DEN / SBFW_TICK_NUM ticks per instruction, e.g.
 * 32 / 5 = 6.4 on MPS2 at 25 MHz with shift 8), so ticks convert back to an exact instruction
 * count (rounded to the nearest: the tick count is off by at most one tick), and regions of a
 * few instructions are measured, not rounded down to whole ticks.
 *
 * Every timed region restarts SysTick (a write to SYST_CVR clears it; it reloads SYST_RVR on the
 * next tick and counts down, so k ticks after the write it reads (2^24 - k) mod 2^24), so a count
 * depends only on the instructions the region executes, never on how long the firmware idled
 * before it. Wraps (every 2^24 ticks) are counted by SysTick_Handler; a wrap pended just before
 * the restart is cleared (ICSR PENDSTCLR). The write itself raises no interrupt (QEMU 7.2).
 */
#ifndef SBFW_SYSTICK_H
#define SBFW_SYSTICK_H

#include <stdint.h>

#define SBFW_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SBFW_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SBFW_SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SBFW_SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define SBFW_ICSR_PENDSTCLR (1u << 25)
#define SBFW_SYST_MODULUS UINT32_C(0x1000000)   /* SYST_RVR + 1: ticks per wrap */

void SysTick_Handler(void);

static volatile uint32_t sbfw_wraps;

void SysTick_Handler(void)
{
    sbfw_wraps++;
}

static void sbfw_systick_init(void)
{
    SBFW_SYST_RVR = SBFW_SYST_MODULUS - 1u;
    SBFW_SYST_CVR = 0u;
    SBFW_SYST_CSR = 7u;               /* enable, interrupt, core clock */
}

static void sbfw_systick_restart(void)
{
    SBFW_SYST_CVR = 0u;
    SBFW_SCB_ICSR = SBFW_ICSR_PENDSTCLR;
    sbfw_wraps = 0u;
}

/* Instructions since sbfw_systick_restart: ticks x SBFW_TICK_NUM / SBFW_TICK_DEN, rounded. */
static uint64_t sbfw_systick_instructions(void)
{
    uint32_t w, v;
    uint64_t ticks;
    do {                              /* wraps and SYST_CVR as one consistent pair */
        w = sbfw_wraps;
        v = SBFW_SYST_CVR;
    } while (w != sbfw_wraps);
    ticks = (uint64_t)w * SBFW_SYST_MODULUS + (v != 0u ? SBFW_SYST_MODULUS - v : 0u);
    return (ticks * SBFW_TICK_NUM + SBFW_TICK_DEN / 2u) / SBFW_TICK_DEN;
}

#endif /* SBFW_SYSTICK_H */
