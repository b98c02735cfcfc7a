/*
 * sbfw_hal_avr.c: the arduino-uno target (alias avr), ATmega328P at 16 MHz (sensorbudget
 * firmware_gen). USART0 at SBFW_BAUD (8N1, polled; 115200 is the Uno's optiboot rate, so the
 * Uno's USB serial port needs no other setting), announced by SBFW_READY_BANNER after a reset
 * (opening the port resets an Uno). Costs in CPU cycles from Timer1 at clk/1. Interrupts are
 * enabled only inside a timed region, and the only interrupt is the Timer1 overflow: a region
 * shorter than 65536 cycles is timed exactly without any interrupt.
 * Exit: the code goes to GPIOR0, then cli + sleep (simavr stops; the sbfw_simavr harness
 * exits with GPIOR0).
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>

#include "sbfw_hal.h"

#ifndef F_CPU
#define F_CPU 16000000UL
#endif
#ifndef SBFW_BAUD
#define SBFW_BAUD 115200UL
#endif
#define SBFW_UBRR ((F_CPU + 4UL * SBFW_BAUD) / (8UL * SBFW_BAUD) - 1UL)   /* U2X0 = 1 */

static volatile uint16_t sbfw_overflows;

ISR(TIMER1_OVF_vect)
{
    sbfw_overflows++;
}

void sbfw_hal_init(void)
{
    cli();
    UBRR0H = (uint8_t)(SBFW_UBRR >> 8);
    UBRR0L = (uint8_t)SBFW_UBRR;
    UCSR0A = (uint8_t)(1u << U2X0);
    UCSR0C = (uint8_t)((1u << UCSZ01) | (1u << UCSZ00));
    UCSR0B = (uint8_t)((1u << RXEN0) | (1u << TXEN0));
    TCCR1A = 0u;
    TCCR1B = (uint8_t)(1u << CS10);
    TIMSK1 = (uint8_t)(1u << TOIE1);
    sbfw_hal_write((const uint8_t *)SBFW_READY_BANNER,
                   (uint16_t)(sizeof SBFW_READY_BANNER - 1u));
}

int sbfw_hal_getc(void)
{
    while ((UCSR0A & (1u << RXC0)) == 0u) {
    }
    return UDR0;
}

void sbfw_hal_write(const uint8_t *data, uint16_t n)
{
    uint16_t i;
    for (i = 0u; i < n; ++i) {
        while ((UCSR0A & (1u << UDRE0)) == 0u) {
        }
        UCSR0A = (uint8_t)((1u << U2X0) | (1u << TXC0));   /* clear TXC0 */
        UDR0 = data[i];
    }
}

void sbfw_hal_flush(void)
{
    while ((UCSR0A & (1u << UDRE0)) == 0u) {
    }
}

void sbfw_hal_cost_start(void)
{
    sbfw_overflows = 0u;
    TIFR1 = (uint8_t)(1u << TOV1);
    TCNT1 = 0u;
    sei();
}

uint64_t sbfw_hal_cost_stop(void)
{
    uint16_t t;
    uint32_t overflows;
    cli();
    t = TCNT1;
    overflows = sbfw_overflows;
    if ((TIFR1 & (1u << TOV1)) != 0u && t < 0x8000u) {
        overflows++;    /* an overflow happened after cli, not yet counted */
    }
    return ((uint64_t)overflows << 16) | t;
}

uint8_t sbfw_hal_cost_unit(void)
{
    return SBFW_UNIT_CYCLES;
}

void sbfw_hal_exit(uint8_t code)
{
    sbfw_hal_flush();
    GPIOR0 = code;
    cli();
    sleep_enable();
    for (;;) {
        sleep_cpu();
    }
}
