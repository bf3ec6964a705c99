# dripserver.py: a repository that is slow for ever, on 127.0.0.1.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Accepts, answers 200 without a length, then sends 40 bytes every 0.1 s
# (400 B/s, above libcurl's floor of 100 B/s) until the client goes;
# counts the connections open and the ones the client closed.  Imported
# (DripServer), or run as a program: prints its port, then serves until
# its standard input closes; GET /__counts answers "OPEN CLOSED" at once
# (not counted).

import socket
import sys
import threading
import time


class DripServer:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.open = self.closed = 0
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self.drip, args=(conn,), daemon=True).start()

    def drip(self, conn):
        try:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(4096)
                if not chunk:
                    raise OSError("closed before the request was complete")
                request += chunk
        except OSError:
            conn.close()
            return
        if request.startswith(b"GET /__counts "):
            body = ("%d %d\n" % self.counts()).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
            conn.close()
            return
        with self.lock:
            self.open += 1
        try:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
            while True:
                conn.sendall(b"x" * 40)
                time.sleep(0.1)
        except OSError:
            pass
        conn.close()
        with self.lock:
            self.open -= 1
            self.closed += 1

    def counts(self):
        with self.lock:
            return self.open, self.closed


if __name__ == "__main__":
    server = DripServer()
    print(server.port, flush=True)
    sys.stdin.read()
