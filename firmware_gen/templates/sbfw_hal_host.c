/*
 * sbfw_hal_host.c: the host target (sensorbudget firmware_gen). The protocol runs on
 * stdin/stdout (give the process a pty or a pipe); costs are CLOCK_MONOTONIC nanoseconds.
 */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sbfw_hal.h"

static struct timespec sbfw_t0;

void sbfw_hal_init(void)
{
}

int sbfw_hal_getc(void)
{
    const int c = getchar();
    return c == EOF ? -1 : c;
}

void sbfw_hal_write(const uint8_t *data, uint16_t n)
{
    (void)fwrite(data, 1u, n, stdout);
}

void sbfw_hal_flush(void)
{
    (void)fflush(stdout);
}

void sbfw_hal_cost_start(void)
{
    (void)clock_gettime(CLOCK_MONOTONIC, &sbfw_t0);
}

uint64_t sbfw_hal_cost_stop(void)
{
    struct timespec t1;
    int64_t ns;
    (void)clock_gettime(CLOCK_MONOTONIC, &t1);
    ns = ((int64_t)t1.tv_sec - (int64_t)sbfw_t0.tv_sec) * INT64_C(1000000000)
         + ((int64_t)t1.tv_nsec - (int64_t)sbfw_t0.tv_nsec);
    return ns > 0 ? (uint64_t)ns : 0u;
}

uint8_t sbfw_hal_cost_unit(void)
{
    return SBFW_UNIT_NANOSECONDS;
}

void sbfw_hal_exit(uint8_t code)
{
    (void)fflush(stdout);
    exit(code);
}
