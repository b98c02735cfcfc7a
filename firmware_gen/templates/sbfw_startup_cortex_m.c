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
    sbfw_hal_exit((uint8_t)main());
}

void Fault_Handler(void)
{
    sbfw_hal_exit(254u);
}
