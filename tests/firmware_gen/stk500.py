"""A fake Arduino (optiboot-style STK500v1) bootloader on a loopback socket, for avrdude's
``-P net:HOST:PORT``: it answers the protocol and keeps the flash pages avrdude writes."""

from __future__ import annotations

import socket
import threading

INSYNC, OK, EOP = 0x14, 0x10, 0x20
SIGNATURE = bytes([0x1E, 0x95, 0x0F])        # ATmega328P


class FakeBootloader:
    """Serve one avrdude session on 127.0.0.1; ``flash`` maps byte address -> value."""

    def __init__(self):
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.port = self.server.getsockname()[1]
        self.flash = {}
        self.commands = []
        self.error = None
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            conn, _ = self.server.accept()
            with conn:
                conn.settimeout(20)
                self._session(conn)
        except (OSError, ConnectionError) as exc:      # avrdude hung up
            self.error = exc
        finally:
            self.server.close()

    def _session(self, conn):
        buf = bytearray()
        address = 0

        def take(n):
            while len(buf) < n:
                data = conn.recv(4096)
                if not data:
                    raise ConnectionError("closed")
                buf.extend(data)
            out = bytes(buf[:n])
            del buf[:n]
            return out

        while True:
            try:
                (cmd,) = take(1)
            except ConnectionError:
                return
            self.commands.append(cmd)
            reply = b""
            if cmd == 0x41:                          # GET_PARAMETER
                (param,) = take(1)
                reply = bytes([{0x81: 8, 0x82: 3, 0x80: 2}.get(param, 3)])
            elif cmd == 0x40:                        # SET_PARAMETER
                take(2)
            elif cmd == 0x42:                        # SET_DEVICE
                take(20)
            elif cmd == 0x45:                        # SET_DEVICE_EXT: size byte counts itself
                (size,) = take(1)
                take(size - 1)
            elif cmd == 0x55:                        # LOAD_ADDRESS (words)
                lo, hi = take(2)
                address = 2 * (lo | hi << 8)
            elif cmd == 0x56:                        # UNIVERSAL
                take(4)
                reply = b"\x00"
            elif cmd == 0x64:                        # PROG_PAGE
                hi, lo, memtype = take(3)
                data = take(hi << 8 | lo)
                if memtype == ord("F"):
                    for i, byte in enumerate(data):
                        self.flash[address + i] = byte
            elif cmd == 0x74:                        # READ_PAGE
                hi, lo, memtype = take(3)
                n = hi << 8 | lo
                reply = bytes(self.flash.get(address + i, 0xFF) for i in range(n))
            elif cmd == 0x75:                        # READ_SIGN
                reply = SIGNATURE
            elif cmd in (0x31,):                     # GET_SIGN_ON
                reply = b"AVR STK"
            elif cmd in (0x76, 0x78):                # OSCCAL
                reply = b"\x00"
            if take(1) != bytes([EOP]):
                continue                             # out of sync: no answer (like optiboot)
            conn.sendall(bytes([INSYNC]) + reply + bytes([OK]))


def read_hex(path) -> dict:
    """{byte address: value} of an Intel HEX file (data records, extended addresses)."""
    image, base = {}, 0
    for line in open(path, encoding="ascii"):
        line = line.strip()
        if not line.startswith(":"):
            continue
        raw = bytes.fromhex(line[1:])
        n, addr, kind, data = raw[0], raw[1] << 8 | raw[2], raw[3], raw[4:4 + raw[0]]
        assert sum(raw) & 0xFF == 0, f"bad checksum in {line}"
        if kind == 0:
            for i in range(n):
                image[base + addr + i] = data[i]
        elif kind == 2:
            base = (data[0] << 8 | data[1]) << 4
        elif kind == 4:
            base = (data[0] << 8 | data[1]) << 16
    return image
