/*
 * sbfw_hal.h: what the sensorbudget firmware needs from a target (sensorbudget firmware_gen).
 * One implementation per target: sbfw_hal_host.c, sbfw_hal_cortex_m.c (QEMU MPS2),
 * sbfw_hal_stm32f4.c (Nucleo-64 STM32F4 and QEMU netduinoplus2), sbfw_hal_avr.c (Arduino Uno).
 * To run the firmware on another board, implement these functions for it.
 */
#ifndef SBFW_HAL_H
#define SBFW_HAL_H

#include <stdint.h>

#define SBFW_HAL_VERSION 1

/* Cost units (BENCH/STATS), as device_sim.protocol.Unit. */
#define SBFW_UNIT_NANOSECONDS 0u
#define SBFW_UNIT_CYCLES 1u
#define SBFW_UNIT_INSTRUCTIONS 2u

/* What a board's HAL sends once its UART is on (after a reset), before any frame: a host that
 * opens the port (which resets an Arduino Uno) waits for it. Not a frame: receivers drop it. */
#define SBFW_READY_BANNER "\r\nsbfw READY\r\n"

void sbfw_hal_init(void);
/* Next received byte (blocks), or -1 when the input has ended (host only). */
int sbfw_hal_getc(void);
void sbfw_hal_write(const uint8_t *data, uint16_t n);
/* Wait until everything written has left (end of a response). */
void sbfw_hal_flush(void);
/* Cost counter: sbfw_hal_cost_stop returns the cost since sbfw_hal_cost_start in the unit
 * sbfw_hal_cost_unit() names (not corrected for the counter's own overhead). */
void sbfw_hal_cost_start(void);
uint64_t sbfw_hal_cost_stop(void);
uint8_t sbfw_hal_cost_unit(void);
/* End the program with an exit code (semihosting on QEMU, GPIOR0 + sleep on simavr). */
void sbfw_hal_exit(uint8_t code);
/* Cortex-M: the stack painted at reset, and the bytes it has used since (its high-water mark;
 * printed on QEMU's console at exit; the simavr harness prints the Uno's itself). */
void sbfw_paint_stack(void);
uint32_t sbfw_stack_high_water(void);
/* "sbfw stack high-water N bytes" through semihosting (QEMU's console). */
void sbfw_semihost_stack_report(void);

#endif /* SBFW_HAL_H */
