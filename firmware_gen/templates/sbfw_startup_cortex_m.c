/*
 * sbfw_startup_cortex_m.c: vector table (the 16 core vectors: the firmware uses no peripheral
 * interrupt) and reset handler of every Cortex-M target (sensorbudget firmware_gen). Copies
 * .data, clears .bss, enables the FPU on Cortex-M4F (CPACR), runs main. Faults end the program
 * with exit code 254 (sbfw_hal_exit: on a real board, a reset).
 */
#include <stdint.h>

#include "sbfw_hal.h"

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);
void Reset_Handler(void);
void Fault_Handler(void);
void SysTick_Handler(void);

typedef union {
    void (*handler)(void);
    uint32_t *stack;
} sbfw_vector_t;

__attribute__((section(".isr_vector"), used))
const sbfw_vector_t sbfw_vectors[16] = {
    { .stack = &_estack }, { Reset_Handler },
    { Fault_Handler }, { Fault_Handler }, { Fault_Handler }, { Fault_Handler },
    { Fault_Handler }, { 0 }, { 0 }, { 0 }, { 0 }, { Fault_Handler }, { Fault_Handler },
    { 0 }, { Fault_Handler }, { SysTick_Handler }
};

void Reset_Handler(void)
{
    uint32_t *src = &_sidata, *dst = &_sdata;
    while (dst < &_edata) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss; ++dst) {
        *dst = 0u;
    }
#if defined(__ARM_FP)
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;    /* CPACR: CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" : : : "memory");
#endif
    sbfw_paint_stack();
    sbfw_hal_exit((uint8_t)main());
}

/* The stack's high-water mark: the words below the stack (at most SBFW_STACK_PAINT_BYTES, from
 * the end of .bss) are painted at reset; the lowest one no longer painted is the deepest the
 * stack has reached. */
#define SBFW_STACK_PAINT 0xA5A5A5A5u
#ifndef SBFW_STACK_PAINT_BYTES
#define SBFW_STACK_PAINT_BYTES 65536u
#endif

static uintptr_t sbfw_paint_lo(void)
{
    const uintptr_t top = (uintptr_t)&_estack, bss = (uintptr_t)&_ebss;
    return top - bss > SBFW_STACK_PAINT_BYTES ? top - SBFW_STACK_PAINT_BYTES : bss;
}

void sbfw_paint_stack(void)
{
    uintptr_t a = sbfw_paint_lo(), sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (; a + 64u < sp; a += 4u) {          /* 64 bytes of room for this frame */
        *(volatile uint32_t *)a = SBFW_STACK_PAINT;
    }
}

uint32_t sbfw_stack_high_water(void)
{
    const uintptr_t top = (uintptr_t)&_estack;
    uintptr_t a = sbfw_paint_lo();
    while (a < top && *(const volatile uint32_t *)a == SBFW_STACK_PAINT) {
        a += 4u;
    }
    return (uint32_t)(top - a);
}

void Fault_Handler(void)
{
    sbfw_hal_exit(254u);
}

void sbfw_semihost_stack_report(void)
{
    static const char prefix[] = "sbfw stack high-water ";
    char text[48], digits[10];
    uint32_t v = sbfw_stack_high_water();
    unsigned n = 0u, i;
    for (i = 0u; prefix[i] != '\0'; ++i) {
        text[i] = prefix[i];
    }
    do {
        digits[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    while (n > 0u) {
        text[i++] = digits[--n];
    }
    text[i++] = ' ';
    text[i++] = 'b';
    text[i++] = 'y';
    text[i++] = 't';
    text[i++] = 'e';
    text[i++] = 's';
    text[i++] = '\n';
    text[i] = '\0';
    __asm__ volatile("mov r0, %0\n\tmov r1, %1\n\tbkpt 0xAB"
                     : : "r"(0x04u), "r"(text) : "r0", "r1", "memory");   /* SYS_WRITE0 */
}
