#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A one-message TCP echo, to show a TCP path works (loss.sh).

  tcp_echo.py server ADDR PORT   accept one connection, echo one message
  tcp_echo.py client ADDR PORT   send a message, exit 0 if it comes back
"""
import socket
import sys

MSG = b"side channel"


def server(addr, port):
    srv = socket.create_server((addr, port))
    conn, _ = srv.accept()
    conn.sendall(conn.recv(64))
    return 0


def client(addr, port):
    conn = socket.create_connection((addr, port), timeout=15)
    conn.sendall(MSG)
    return 0 if conn.recv(64) == MSG else 1


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("server", "client"):
        sys.exit(__doc__)
    role = server if sys.argv[1] == "server" else client
    return role(sys.argv[2], int(sys.argv[3]))


if __name__ == "__main__":
    sys.exit(main())
