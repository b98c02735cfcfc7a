/*
 * avr_fncycles.c: call single functions of an AVR firmware in libsimavr and count their cycles
 * (benchmarks/bench_issue28.py). The firmware runs from reset until the PC reaches MAIN (its
 * crt has copied .data and cleared .bss), then stdin drives it, one command a line:
 *
 *   w ADDR HEX        write bytes HEX at data address ADDR (hex, without 0x800000)
 *   c FN A0 A1 [A2 [A3]]  call the function at byte address FN (hex) with up to four 16-bit
 *                     arguments (r25:r24, r23:r22, r21:r20, r19:r18) on a fresh stack whose return
 *                     address is 0; prints
 *                     "R CYCLES": r25:r24 at the return, cycles from the first instruction of
 *                     FN through its RET (the caller's CALL, 4 cycles, is not counted)
 *   r ADDR N          print N bytes from data address ADDR as hex
 *   p                 dump and clear the profile: "PC CYCLES" per instruction address (bytes)
 *                     executed by the calls since the last p, then "."
 *
 *   gcc -std=gnu99 -O2 avr_fncycles.c -o avr_fncycles -lsimavr -lelf
 *   ./avr_fncycles firmware.elf MAIN_HEX
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>

#define FLASH_WORDS 16384u
#define MAX_CYCLES 200000000ull

static unsigned long long profile[FLASH_WORDS];

static int step(avr_t *avr)
{
    const avr_flashaddr_t pc = avr->pc;
    const avr_cycle_count_t c0 = avr->cycle;
    const int state = avr_run(avr);
    if (pc / 2u < FLASH_WORDS) {
        profile[pc / 2u] += avr->cycle - c0;
    }
    return state;
}

int main(int argc, char **argv)
{
    elf_firmware_t fw;
    avr_t *avr;
    char line[8192];
    unsigned long main_pc;
    if (argc != 3) {
        fprintf(stderr, "usage: %s firmware.elf MAIN_HEX\n", argv[0]);
        return 2;
    }
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(argv[1], &fw) != 0) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    avr = avr_make_mcu_by_name(fw.mmcu[0] ? fw.mmcu : "atmega328p");
    if (avr == NULL) {
        return 2;
    }
    avr_init(avr);
    avr->log = 0;
    avr_load_firmware(avr, &fw);
    main_pc = strtoul(argv[2], NULL, 16);
    while (avr->pc != main_pc) {
        int state = avr_run(avr);
        if (state == cpu_Done || state == cpu_Crashed || avr->cycle > MAX_CYCLES) {
            fprintf(stderr, "the firmware did not reach main\n");
            return 3;
        }
    }
    memset(profile, 0, sizeof profile);
    while (fgets(line, sizeof line, stdin) != NULL) {
        if (line[0] == 'w') {
            char *p = line + 1;
            unsigned long addr = strtoul(p, &p, 16);
            while (*p == ' ') {
                ++p;
            }
            for (; p[0] && p[1] && p[0] != '\n'; p += 2, ++addr) {
                char byte[3] = {p[0], p[1], 0};
                avr->data[addr] = (uint8_t)strtoul(byte, NULL, 16);
            }
        } else if (line[0] == 'c') {
            char *p = line + 1;
            unsigned long fn = strtoul(p, &p, 16);
            unsigned long a0 = strtoul(p, &p, 16), a1 = strtoul(p, &p, 16);
            unsigned long a2 = strtoul(p, &p, 16), a3 = strtoul(p, &p, 16);
            const uint16_t sp = (uint16_t)(avr->ramend - 2u);
            avr_cycle_count_t c0;
            avr->data[avr->ramend] = 0;
            avr->data[avr->ramend - 1u] = 0;
            avr->data[R_SPL] = (uint8_t)sp;
            avr->data[R_SPH] = (uint8_t)(sp >> 8);
            avr->data[1] = 0;                                /* gcc's zero register */
            avr->data[24] = (uint8_t)a0;
            avr->data[25] = (uint8_t)(a0 >> 8);
            avr->data[22] = (uint8_t)a1;
            avr->data[23] = (uint8_t)(a1 >> 8);
            avr->data[20] = (uint8_t)a2;
            avr->data[21] = (uint8_t)(a2 >> 8);
            avr->data[18] = (uint8_t)a3;
            avr->data[19] = (uint8_t)(a3 >> 8);
            avr->pc = fn;
            avr->state = cpu_Running;
            c0 = avr->cycle;
            while (avr->pc != 0u) {
                int state = step(avr);
                if (state == cpu_Done || state == cpu_Crashed || avr->cycle - c0 > MAX_CYCLES) {
                    fprintf(stderr, "the call of %lx did not return\n", fn);
                    return 4;
                }
            }
            printf("%u %llu\n", (unsigned)(avr->data[24] | (avr->data[25] << 8)),
                   (unsigned long long)(avr->cycle - c0));
            fflush(stdout);
        } else if (line[0] == 'r') {
            char *p = line + 1;
            unsigned long addr = strtoul(p, &p, 16), n = strtoul(p, &p, 16), i;
            for (i = 0; i < n; ++i) {
                printf("%02x", avr->data[addr + i]);
            }
            printf("\n");
            fflush(stdout);
        } else if (line[0] == 'p') {
            unsigned i;
            for (i = 0; i < FLASH_WORDS; ++i) {
                if (profile[i]) {
                    printf("%x %llu\n", i * 2u, profile[i]);
                }
            }
            printf(".\n");
            fflush(stdout);
            memset(profile, 0, sizeof profile);
        }
    }
    return 0;
}
