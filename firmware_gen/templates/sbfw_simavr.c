/*
 * sbfw_simavr.c: run an AVR firmware in libsimavr with USART0 bridged to stdin/stdout
 * (sensorbudget firmware_gen). The process exits with the firmware's exit code (GPIOR0 when it
 * stops with interrupts off), 253 if the simulated CPU crashed, 0 if the input ended and the
 * firmware did not stop within one simulated second.
 *
 *   gcc -std=gnu99 -O2 sbfw_simavr.c -o sbfw_simavr -lsimavr -lelf
 *   ./sbfw_simavr firmware.elf [mcu [frequency]]     (default atmega328p 16000000)
 *
 * Give it a pty (or pipes) as stdin/stdout; simavr's own messages go to stderr.
 * Input bytes are held until the firmware enables the receiver (RXEN0) and while the UART's
 * input FIFO is full (XOFF), so none is dropped.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_irq.h>

#define UCSR0B_ADDR 0xC1
#define RXEN0_BIT 4
#define GPIOR0_ADDR 0x3E

static int out_fd = 1;
static uint8_t out_buf[4096];
static size_t out_len;
static int xoff;
static unsigned long idle_polls;

static void flush_out(void)
{
    size_t done = 0;
    while (done < out_len) {
        ssize_t n = write(out_fd, out_buf + done, out_len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            exit(0);            /* the host has gone */
        done += (size_t)n;
    }
    out_len = 0;
}

static void uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    if (out_len == sizeof out_buf)
        flush_out();
    out_buf[out_len++] = (uint8_t)value;
}

static void uart_xon(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)value;
    (void)param;
    xoff = 0;
    idle_polls++;               /* raised while the firmware polls an empty receiver */
}

static void uart_xoff(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    xoff = value != 0;
}

#define STACK_PAINT 0xA5u
static uint32_t paint_lo;

/* "sbfw stack high-water N bytes" on stderr: RAM from the lowest byte that no longer holds the
 * paint up to RAMEND (the stack grows down from RAMEND towards .bss). */
static void report_stack(const avr_t *avr, uint32_t lo)
{
    uint32_t a = lo;
    while (a <= avr->ramend && avr->data[a] == STACK_PAINT)
        a++;
    fprintf(stderr, "sbfw stack high-water %u bytes (of %u above .data and .bss)\n",
            (unsigned)(avr->ramend + 1u - a), (unsigned)(avr->ramend + 1u - lo));
}

int main(int argc, char **argv)
{
    elf_firmware_t fw;
    avr_t *avr;
    avr_irq_t *input;
    uint8_t in_buf[4096];
    size_t in_head = 0, in_len = 0;
    int eof = 0, state = cpu_Running;
    avr_cycle_count_t eof_cycle = 0;
    uint32_t flags = 0;
    const char *mcu = argc > 2 ? argv[2] : "atmega328p";
    const unsigned long freq = argc > 3 ? strtoul(argv[3], NULL, 10) : 16000000UL;

    if (argc < 2) {
        fprintf(stderr, "usage: %s firmware.elf [mcu [frequency]]\n", argv[0]);
        return 2;
    }
    out_fd = dup(1);            /* protocol bytes; simavr prints its messages on fd 1 */
    dup2(2, 1);
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(argv[1], &fw) != 0) {
        fprintf(stderr, "sbfw_simavr: cannot read %s\n", argv[1]);
        return 2;
    }
    snprintf(fw.mmcu, sizeof fw.mmcu, "%s", mcu);
    fw.frequency = (uint32_t)freq;
    avr = avr_make_mcu_by_name(fw.mmcu);
    if (avr == NULL) {
        fprintf(stderr, "sbfw_simavr: unknown mcu %s\n", fw.mmcu);
        return 2;
    }
    avr_init(avr);
    avr_load_firmware(avr, &fw);
    /* paint the RAM above .data and .bss: the stack's high-water mark is read at the end */
    paint_lo = (uint32_t)avr->ioend + 1u + fw.datasize + fw.bsssize;
    if (paint_lo <= avr->ramend)
        memset(avr->data + paint_lo, STACK_PAINT, (size_t)(avr->ramend + 1u - paint_lo));
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);   /* no stdio echo, no poll sleep */
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            uart_out, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON),
                            uart_xon, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF),
                            uart_xoff, NULL);
    input = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);

    for (;;) {
        int i, wait_ms;
        struct pollfd pfd;
        unsigned long polls_before = idle_polls;
        for (i = 0; i < 4000; ++i) {
            state = avr_run(avr);
            if (state == cpu_Done || state == cpu_Crashed)
                break;
        }
        if (out_len)
            flush_out();
        if (state == cpu_Done || state == cpu_Crashed)
            break;
        /* block on stdin only while the firmware waits for input and we have none */
        wait_ms = (in_len == 0 && !eof && idle_polls - polls_before > 100) ? 5 : 0;
        if (!eof && in_head + in_len < sizeof in_buf) {
            pfd.fd = 0;
            pfd.events = POLLIN;
            if (poll(&pfd, 1, wait_ms) > 0) {
                ssize_t n;
                if (in_len == 0)
                    in_head = 0;
                n = read(0, in_buf + in_head + in_len, sizeof in_buf - in_head - in_len);
                if (n > 0) {
                    in_len += (size_t)n;
                } else if (n == 0 || errno != EINTR) {
                    eof = 1;
                    eof_cycle = avr->cycle;
                }
            }
        }
        if (avr->data[UCSR0B_ADDR] & (1u << RXEN0_BIT)) {
            while (in_len > 0 && !xoff) {
                avr_raise_irq(input, in_buf[in_head]);
                in_head++;
                in_len--;
            }
        }
        if (eof && in_len == 0 && avr->cycle - eof_cycle > fw.frequency) {
            report_stack(avr, paint_lo);
            return 0;
        }
    }
    flush_out();
    report_stack(avr, paint_lo);
    return state == cpu_Done ? avr->data[GPIOR0_ADDR] : 253;
}
