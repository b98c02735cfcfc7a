/*
 * sbfw_hal_cortex_m.c: the cortex-m4f / cortex-m3 targets on the ARM MPS2 boards (QEMU
 * mps2-an386 / mps2-an385) (sensorbudget firmware_gen). UART0 is the CMSDK APB UART at
 * 0x40004000 (polled). These boards exist here only as QEMU machines (emulation): costs are
 * exact instruction counts from SysTick under -icount shift=8 (sbfw_systick.h),
 * identical from run to run. Announces itself with SBFW_READY_BANNER once the UART is on.
 * Exit: semihosting SYS_EXIT_EXTENDED (QEMU's exit status is the code).
 */
#include "sbfw_hal.h"

#define SBFW_UART0 0x40004000u
#define SBFW_UART_DATA (*(volatile uint32_t *)(SBFW_UART0 + 0x000u))
#define SBFW_UART_STATE (*(volatile uint32_t *)(SBFW_UART0 + 0x004u))
#define SBFW_UART_CTRL (*(volatile uint32_t *)(SBFW_UART0 + 0x008u))
#define SBFW_UART_BAUDDIV (*(volatile uint32_t *)(SBFW_UART0 + 0x010u))

/* QEMU -icount shift=8 (firmware_gen.targets.MPS2_ICOUNT_SHIFT): 256 ns per instruction, SysTick
 * at 25 MHz: 6.4 ticks per instruction, i.e. 5 instructions per 32 ticks. */
#define SBFW_TICK_NUM 5u
#define SBFW_TICK_DEN 32u
#ifndef SBFW_UART_BAUDDIV_VALUE
#define SBFW_UART_BAUDDIV_VALUE 217u    /* 25 MHz / 115200 */
#endif

#include "sbfw_systick.h"

void sbfw_hal_init(void)
{
    SBFW_UART_BAUDDIV = SBFW_UART_BAUDDIV_VALUE;
    SBFW_UART_CTRL = 3u;              /* TX and RX enabled */
    sbfw_systick_init();
    sbfw_hal_write((const uint8_t *)SBFW_READY_BANNER,
                   (uint16_t)(sizeof SBFW_READY_BANNER - 1u));
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

void sbfw_hal_cost_start(void)
{
    sbfw_systick_restart();
}

uint64_t sbfw_hal_cost_stop(void)
{
    return sbfw_systick_instructions();
}

uint8_t sbfw_hal_cost_unit(void)
{
    return SBFW_UNIT_INSTRUCTIONS;
}

void sbfw_hal_exit(uint8_t code)
{
    static volatile uint32_t block[2];
    sbfw_semihost_stack_report();
    block[0] = 0x20026u;              /* ADP_Stopped_ApplicationExit */
    block[1] = code;
    __asm__ volatile("mov r0, %0\n\tmov r1, %1\n\tbkpt 0xAB"
                     : : "r"(0x20u), "r"(block) : "r0", "r1", "memory");
    for (;;) {
    }
}
