/*
 * sbfw_hal_ch32v003.c: the ch32v003 target (sensorbudget firmware_gen): a WCH CH32V003 (QingKe
 * V2A core, RV32EC, no FPU, 16 KB flash, 2 KB SRAM), register level, written from the
 * CH32V003 reference manual (RCC, FLASH, GPIO, USART, SysTick chapters). No QEMU machine models
 * this part: the image is built and its functions are costed in unicorn (unicorn-rv32ec, core
 * only); this HAL runs on the chip only (checked on paper, see docs/boards.md).
 *
 * - Clock: 48 MHz from the 24 MHz HSI through the x2 PLL: one flash wait state first
 *   (FLASH_ACTLR), PLLON, wait for PLLRDY, then SW = PLL and wait for SWS = PLL.
 * - UART: USART1 on PD5 (TX, alternate function push-pull) / PD6 (RX, input with pull-up),
 *   115200 8N1, polled; BRR = 48 MHz / 115200 = 416.7 -> 417 (115108 baud, -0.08 %).
 * - Costs: the QingKe V2A has no mcycle / minstret; SysTick (STK) counts HCLK cycles up from the
 *   last restart (STCLK = HCLK, 32-bit counter): cycles.
 * - Exit (QUIT, traps): a restart at _start once the last byte has left (sends
 *   SBFW_READY_BANNER again, as after a reset).
 */
#include "sbfw_hal.h"

#define SBFW_REG(addr) (*(volatile uint32_t *)(addr))
#define SBFW_RCC 0x40021000u
#define SBFW_RCC_CTLR SBFW_REG(SBFW_RCC + 0x00u)         /* 24 PLLON, 25 PLLRDY */
#define SBFW_RCC_CFGR0 SBFW_REG(SBFW_RCC + 0x04u)        /* 1:0 SW, 3:2 SWS, 7:4 HPRE */
#define SBFW_RCC_APB2PCENR SBFW_REG(SBFW_RCC + 0x18u)    /* 0 AFIO, 5 IOPD, 14 USART1 */
#define SBFW_FLASH_ACTLR SBFW_REG(0x40022000u)           /* 1:0 LATENCY */
#define SBFW_GPIOD_CFGLR SBFW_REG(0x40011400u)           /* 4 bits per pin 0..7 */
#define SBFW_GPIOD_OUTDR SBFW_REG(0x4001140Cu)
#define SBFW_USART1 0x40013800u
#define SBFW_USART_STATR SBFW_REG(SBFW_USART1 + 0x00u)   /* 7 TXE, 6 TC, 5 RXNE */
#define SBFW_USART_DATAR SBFW_REG(SBFW_USART1 + 0x04u)
#define SBFW_USART_BRR SBFW_REG(SBFW_USART1 + 0x08u)
#define SBFW_USART_CTLR1 SBFW_REG(SBFW_USART1 + 0x0Cu)   /* 13 UE, 3 TE, 2 RE */
#define SBFW_STK 0xE000F000u
#define SBFW_STK_CTLR SBFW_REG(SBFW_STK + 0x00u)         /* 0 STE, 2 STCLK = HCLK, 5 INIT */
#define SBFW_STK_CNT SBFW_REG(SBFW_STK + 0x08u)

#ifndef SBFW_HCLK_HZ
#define SBFW_HCLK_HZ 48000000u
#endif
#ifndef SBFW_BAUD
#define SBFW_BAUD 115200u
#endif
#define SBFW_BRR ((SBFW_HCLK_HZ + SBFW_BAUD / 2u) / SBFW_BAUD)

void _start(void);

static uint32_t sbfw_t0;

void sbfw_hal_init(void)
{
    SBFW_FLASH_ACTLR = (SBFW_FLASH_ACTLR & ~3u) | 1u;   /* 1 wait state for 24-48 MHz */
    SBFW_RCC_CFGR0 &= ~(0xFu << 4);                     /* HPRE: HCLK = SYSCLK */
    SBFW_RCC_CTLR |= 1u << 24;                          /* PLL (source HSI x 2) on */
    while ((SBFW_RCC_CTLR & (1u << 25)) == 0u) {
    }
    SBFW_RCC_CFGR0 = (SBFW_RCC_CFGR0 & ~3u) | 2u;       /* SYSCLK = PLL */
    while ((SBFW_RCC_CFGR0 & 0xCu) != 0x8u) {
    }
    SBFW_RCC_APB2PCENR |= (1u << 0) | (1u << 5) | (1u << 14);
    SBFW_GPIOD_CFGLR = (SBFW_GPIOD_CFGLR & ~(0xFFu << 20))
                       | (0xBu << 20)                   /* PD5: AF push-pull, 30 MHz */
                       | (0x8u << 24);                  /* PD6: input, pull-up/down */
    SBFW_GPIOD_OUTDR |= 1u << 6;                        /* PD6 pull-up */
    SBFW_USART_BRR = SBFW_BRR;
    SBFW_USART_CTLR1 = (1u << 13) | (1u << 3) | (1u << 2);
    SBFW_STK_CTLR = (1u << 0) | (1u << 2);              /* on, HCLK, counting up */
    sbfw_hal_write((const uint8_t *)SBFW_READY_BANNER,
                   (uint16_t)(sizeof SBFW_READY_BANNER - 1u));
}

int sbfw_hal_getc(void)
{
    while ((SBFW_USART_STATR & (1u << 5)) == 0u) {
    }
    return (int)(SBFW_USART_DATAR & 0xFFu);
}

void sbfw_hal_write(const uint8_t *data, uint16_t n)
{
    uint16_t i;
    for (i = 0u; i < n; ++i) {
        while ((SBFW_USART_STATR & (1u << 7)) == 0u) {
        }
        SBFW_USART_DATAR = data[i];
    }
}

void sbfw_hal_flush(void)
{
    while ((SBFW_USART_STATR & (1u << 6)) == 0u) {      /* TC: the last byte has left */
    }
}

void sbfw_hal_cost_start(void)
{
    sbfw_t0 = SBFW_STK_CNT;
}

/* The 32-bit counter wraps every 89 s at 48 MHz: longer regions are not timed. */
uint64_t sbfw_hal_cost_stop(void)
{
    return (uint32_t)(SBFW_STK_CNT - sbfw_t0);
}

uint8_t sbfw_hal_cost_unit(void)
{
    return SBFW_UNIT_CYCLES;
}

void sbfw_hal_exit(uint8_t code)
{
    (void)code;
    sbfw_hal_flush();
    _start();
}
