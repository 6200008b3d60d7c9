#!/usr/bin/env python3
"""A stand-in OpenAI chat-completions endpoint on 127.0.0.1 for tests/cli_niah_test.sh.

Usage: niah_judge_stub.py MODE PORT_FILE LOG_FILE [LIFETIME_S]
  MODE flaky:   the first 2 requests get HTTP 500, then every request a rating: [[10]] when the
                judged answer mentions Dolores Park, else [[1]]
  MODE garbage: HTTP 200 with a well-formed reply that holds no [[rating]]
  MODE error:   HTTP 503 always
Writes the port it listens on to PORT_FILE, one line per request (time, status) to LOG_FILE,
and the request bodies to LOG_FILE.bodies (one JSON per line); stops itself after LIFETIME_S
seconds (default 60).
"""
import http.server
import json
import sys
import threading
import time

MODE, PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2], sys.argv[3]
LIFETIME = float(sys.argv[4]) if len(sys.argv) > 4 else 60.0
count = 0


def reply(content):
    return json.dumps({"id": "stub", "object": "chat.completion",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        count += 1
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(LOG_FILE + ".bodies", "ab") as f:
            f.write(body.replace(b"\n", b" ") + b"\n")
        if MODE == "error" or (MODE == "flaky" and count <= 2):
            status, data = (503 if MODE == "error" else 500), b'{"error": "stub says no"}'
        elif MODE == "garbage":
            status, data = 200, reply("The answer looks fine to me, I would rate it highly.")
        else:
            user = json.loads(body)["messages"][1]["content"]
            answer = user.split("[The Start of the Model's Answer]")[1]
            status, data = 200, reply("Explanation. Rating: [[%d]]" % (10 if "Dolores Park" in answer else 1))
        with open(LOG_FILE, "a") as f:
            f.write("%.3f %d\n" % (time.time(), status))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.replace(PORT_FILE + ".tmp", PORT_FILE)
threading.Timer(LIFETIME, server.shutdown).start()
server.serve_forever()
