#!/usr/bin/env python3
"""A hostile stand-in for the NIAH judge's chat-completions endpoint, on 127.0.0.1 only, for
tests/cli_hostile_test.sh.

Usage: hostile_http_stub.py PORT_FILE LOG_FILE [LIFETIME_S]
The mode is the first path component of each request's URL (http://127.0.0.1:PORT/MODE/...):
  echo     HTTP 500 whose body echoes the request line and every header (the Authorization one too)
  big      HTTP 200, no Content-Length, then 64 MiB of body (more than the 8 MiB cap) as fast as it goes
  biglen   HTTP 200 with Content-Length: 2 GB, then some bytes and a hang
  slow     HTTP 200, then one byte every 0.5 s, forever (a whole-request timeout must end it)
  control  HTTP 502 whose body holds terminal escape sequences and NUL bytes
  ok       a well-formed reply rating [[7]], whose content also echoes the Authorization header
  digits   a well-formed reply whose content is "[[" + 30,000 digits + "]]" (std::regex overflowed the stack)
Writes the port to PORT_FILE and one line per request (mode) to LOG_FILE; stops after LIFETIME_S
seconds (default 60). Every handler runs in its own thread, so a hanging reply blocks nothing else.
"""
import http.server
import json
import os
import socketserver
import sys
import threading
import time

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]
LIFETIME = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        mode = self.path.strip("/").split("/")[0]
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length) if length else b""
        with lock, open(LOG_FILE, "a") as f:
            f.write(mode + "\n")
        try:
            getattr(self, "mode_" + mode, self.mode_unknown)(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def send(self, status, data, ctype="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def mode_echo(self, body):
        text = self.requestline + "\n" + "".join("%s: %s\n" % (k, v) for k, v in self.headers.items())
        self.send(500, text.encode(), "text/plain")

    def mode_big(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"x" * (1 << 20)
        for _ in range(64):
            self.wfile.write(chunk)

    def mode_biglen(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(2 * 10**9))
        self.end_headers()
        self.wfile.write(b"{" * 1000)
        time.sleep(30)

    def mode_slow(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Connection", "close")
        self.end_headers()
        for _ in range(120):
            self.wfile.write(b" ")
            self.wfile.flush()
            time.sleep(0.5)

    def mode_control(self, body):
        self.send(502, b"\x1b[31mred\x1b[0m \x00\x07 bell \x1b]0;title\x07 end", "text/plain")

    def mode_ok(self, body):
        content = "Fine. Rating: [[7]] (you sent %s)" % self.headers.get("Authorization", "nothing")
        self.send(200, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode())

    def mode_digits(self, body):
        content = "[[" + "9" * 30000 + "]]"
        self.send(200, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode())

    def mode_unknown(self, body):
        self.send(404, b'{"error": "no such mode"}')

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.replace(PORT_FILE + ".tmp", PORT_FILE)
threading.Timer(LIFETIME, server.shutdown).start()
server.serve_forever()
