/*
 * sbfw_startup_riscv.c: reset code of the RISC-V targets (sensorbudget firmware_gen): sets the
 * global and stack pointers, points mtvec at a trap handler, copies .data, clears .bss, runs
 * main. No interrupt is used; any trap (an illegal instruction, a misaligned or faulting access)
 * ends the program with exit code 254 (sbfw_hal_exit: on silicon, a restart).
 */
#include <stdint.h>

#include "sbfw_hal.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss;
int main(void);
void _start(void);
void sbfw_c_start(void);
void sbfw_trap(void);

/* The first instructions of the image (section .text.init, placed first by the linker script):
 * gp for linker relaxation, the stack at the top of RAM, mtvec, then C. */
__asm__(".section .text.init, \"ax\", @progbits\n"
        ".globl _start\n"
        "_start:\n"
        ".option push\n.option norelax\n"
        "    la gp, __global_pointer$\n"
        ".option pop\n"
        "    la sp, _estack\n"
        "    la t0, sbfw_trap_entry\n"
        "    csrw mtvec, t0\n"
        "    j sbfw_c_start\n"
        ".balign 4\n"
        "sbfw_trap_entry:\n"
        "    la sp, _estack\n"
        "    j sbfw_trap\n"
        ".text\n");

void sbfw_c_start(void)
{
    uint32_t *src = &_sidata, *dst = &_sdata;
    while (dst < &_edata) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss; ++dst) {
        *dst = 0u;
    }
    sbfw_hal_exit((uint8_t)main());
}

void sbfw_trap(void)
{
    sbfw_hal_exit(254u);
}
