/*
 * sbfw_hal_stm32f4.c: the nucleo-f4 target (sensorbudget firmware_gen): an ST Nucleo-64 with an
 * STM32F401RE, F411RE or F446RE, register level, written from the reference manuals (RM0368
 * STM32F401, RM0383 STM32F411, RM0390 STM32F446: the registers used here are the same).
 *
 * - Clock: the 16 MHz internal RC (HSI), the reset clock: no PLL, no flash wait states, and no
 *   wait on any RCC ready bit (QEMU does not model the RCC: its registers read 0).
 * - UART: USART2 on PA2 (TX) / PA3 (RX), alternate function 7, which the Nucleo's ST-LINK
 *   exposes as its USB serial port; 115200 8N1, polled. QEMU netduinoplus2 (STM32F405) models
 *   the same USART IP at the same address as its second serial port.
 * - Costs: on the chip, CPU cycles from DWT CYCCNT; QEMU does not model the DWT (CYCCNT reads 0),
 *   so when CYCCNT does not move the HAL uses SysTick, exact instructions under -icount shift=5
 *   (sbfw_systick.h), and reports that unit instead.
 * - Exit (QUIT, faults): on QEMU semihosting SYS_EXIT_EXTENDED (the exit status is the code); on
 *   the chip a system reset (a semihosting call without a debugger would fault), so the board
 *   starts again and sends SBFW_READY_BANNER.
 *
 * Writes the chip needs and QEMU ignores (unimplemented there): RCC_AHB1ENR, RCC_APB1ENR,
 * GPIOA_MODER, GPIOA_AFRL, GPIOA_PUPDR, DWT/DEMCR (reads 0).
 */
#include "sbfw_hal.h"

#define SBFW_REG(addr) (*(volatile uint32_t *)(addr))
#define SBFW_RCC 0x40023800u
#define SBFW_RCC_AHB1ENR SBFW_REG(SBFW_RCC + 0x30u)     /* bit 0: GPIOAEN */
#define SBFW_RCC_APB1ENR SBFW_REG(SBFW_RCC + 0x40u)     /* bit 17: USART2EN */
#define SBFW_GPIOA 0x40020000u
#define SBFW_GPIOA_MODER SBFW_REG(SBFW_GPIOA + 0x00u)
#define SBFW_GPIOA_PUPDR SBFW_REG(SBFW_GPIOA + 0x0Cu)
#define SBFW_GPIOA_AFRL SBFW_REG(SBFW_GPIOA + 0x20u)
#define SBFW_USART2 0x40004400u
#define SBFW_USART_SR SBFW_REG(SBFW_USART2 + 0x00u)     /* 7 TXE, 6 TC, 5 RXNE, 3 ORE */
#define SBFW_USART_DR SBFW_REG(SBFW_USART2 + 0x04u)
#define SBFW_USART_BRR SBFW_REG(SBFW_USART2 + 0x08u)
#define SBFW_USART_CR1 SBFW_REG(SBFW_USART2 + 0x0Cu)    /* 13 UE, 3 TE, 2 RE */
#define SBFW_SR_TXE (1u << 7)
#define SBFW_SR_TC (1u << 6)
#define SBFW_SR_RXNE (1u << 5)
#define SBFW_DEMCR SBFW_REG(0xE000EDFCu)                 /* bit 24: TRCENA */
#define SBFW_DWT_CTRL SBFW_REG(0xE0001000u)              /* bit 0: CYCCNTENA */
#define SBFW_DWT_CYCCNT SBFW_REG(0xE0001004u)
#define SBFW_SCB_AIRCR SBFW_REG(0xE000ED0Cu)

#ifndef SBFW_HSI_HZ
#define SBFW_HSI_HZ 16000000u
#endif
#ifndef SBFW_BAUD
#define SBFW_BAUD 115200u
#endif
/* 16x oversampling: BRR = fck / baud (mantissa.fraction/16), rounded: 139 = 115108 baud. */
#define SBFW_BRR ((SBFW_HSI_HZ + SBFW_BAUD / 2u) / SBFW_BAUD)
/* QEMU -icount shift=5 (firmware_gen.targets.NETDUINO_ICOUNT_SHIFT): 32 ns per instruction,
 * SysTick at the 168 MHz cpuclk: 5.376 ticks per instruction = 672 ticks per 125. */
#define SBFW_TICK_NUM 125u
#define SBFW_TICK_DEN 672u

#include "sbfw_systick.h"

static uint8_t sbfw_dwt;      /* 1: DWT CYCCNT counts (the chip), 0: it does not (QEMU) */
static uint32_t sbfw_t0;

void sbfw_hal_init(void)
{
    uint32_t before;
    SBFW_RCC_AHB1ENR |= 1u << 0;                        /* GPIOA clock */
    SBFW_RCC_APB1ENR |= 1u << 17;                       /* USART2 clock */
    (void)SBFW_RCC_APB1ENR;                             /* read back: the clock is on */
    SBFW_GPIOA_MODER = (SBFW_GPIOA_MODER & ~(0xFu << 4)) | (0xAu << 4);   /* PA2, PA3: AF */
    SBFW_GPIOA_PUPDR = (SBFW_GPIOA_PUPDR & ~(0xFu << 4)) | (0x4u << 4);   /* PA3 pull-up */
    SBFW_GPIOA_AFRL = (SBFW_GPIOA_AFRL & ~(0xFFu << 8)) | (0x77u << 8);   /* AF7: USART2 */
    SBFW_USART_BRR = SBFW_BRR;
    SBFW_USART_CR1 = (1u << 13) | (1u << 3) | (1u << 2);                  /* UE, TE, RE */
    SBFW_DEMCR |= 1u << 24;
    SBFW_DWT_CYCCNT = 0u;
    SBFW_DWT_CTRL |= 1u;
    before = SBFW_DWT_CYCCNT;
    __asm__ volatile("nop\n\tnop\n\tnop\n\tnop" : : : "memory");
    sbfw_dwt = (uint8_t)(SBFW_DWT_CYCCNT != before);
    if (!sbfw_dwt) {
        sbfw_systick_init();
    }
    sbfw_hal_write((const uint8_t *)SBFW_READY_BANNER,
                   (uint16_t)(sizeof SBFW_READY_BANNER - 1u));
}

int sbfw_hal_getc(void)
{
    while ((SBFW_USART_SR & SBFW_SR_RXNE) == 0u) {
    }
    return (int)(SBFW_USART_DR & 0xFFu);    /* reading SR then DR also clears an overrun */
}

void sbfw_hal_write(const uint8_t *data, uint16_t n)
{
    uint16_t i;
    for (i = 0u; i < n; ++i) {
        while ((SBFW_USART_SR & SBFW_SR_TXE) == 0u) {
        }
        SBFW_USART_DR = data[i];
    }
}

void sbfw_hal_flush(void)
{
    while ((SBFW_USART_SR & SBFW_SR_TXE) == 0u) {
    }
}

void sbfw_hal_cost_start(void)
{
    if (sbfw_dwt) {
        sbfw_t0 = SBFW_DWT_CYCCNT;
    } else {
        sbfw_systick_restart();
    }
}

/* CYCCNT wraps every 2^32 cycles (268 s at 16 MHz): longer regions are not timed on the chip. */
uint64_t sbfw_hal_cost_stop(void)
{
    if (sbfw_dwt) {
        return (uint32_t)(SBFW_DWT_CYCCNT - sbfw_t0);
    }
    return sbfw_systick_instructions();
}

uint8_t sbfw_hal_cost_unit(void)
{
    return sbfw_dwt ? SBFW_UNIT_CYCLES : SBFW_UNIT_INSTRUCTIONS;
}

void sbfw_hal_exit(uint8_t code)
{
    static volatile uint32_t block[2];
    if (sbfw_dwt) {
        while ((SBFW_USART_SR & SBFW_SR_TC) == 0u) {    /* the last answer has left */
        }
        SBFW_SCB_AIRCR = (0x05FAu << 16) | (1u << 2);   /* VECTKEY, SYSRESETREQ */
        for (;;) {
        }
    }
    sbfw_semihost_stack_report();
    block[0] = 0x20026u;              /* ADP_Stopped_ApplicationExit */
    block[1] = code;
    __asm__ volatile("mov r0, %0\n\tmov r1, %1\n\tbkpt 0xAB"
                     : : "r"(0x20u), "r"(block) : "r0", "r1", "memory");
    for (;;) {
    }
}
