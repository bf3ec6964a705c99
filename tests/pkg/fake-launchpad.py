#!/usr/bin/env python3
# fake-launchpad.py: the two calls of Launchpad's API that `glimpse add-repo
# ppa:OWNER/NAME` makes, served on 127.0.0.1 for the tests.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: fake-launchpad.py DIRECTORY
# Prints the port on the first line; exits when stdin closes.
#   GET /devel/~OWNER/+archive/ubuntu/NAME
#       → {"signing_key_fingerprint": <DIRECTORY/OWNER/NAME.fpr>, …}
#   GET /devel/~OWNER/+archive/ubuntu/NAME?ws.op=getSigningKeyData
#       → <DIRECTORY/OWNER/NAME.asc> as a JSON string
# A file DIRECTORY/OWNER/NAME.status makes both answer that HTTP status.
import http.server
import json
import os
import re
import sys
import threading
import urllib.parse

root = sys.argv[1]


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        m = re.fullmatch(r"/devel/~([a-z0-9.-]+)/\+archive/ubuntu/([a-z0-9.-]+)", url.path)
        if not m:
            return self.answer(404, '"not found"')
        base = os.path.join(root, m.group(1), m.group(2))
        if os.path.exists(base + ".status"):
            with open(base + ".status") as f:
                return self.answer(int(f.read().strip()), '"oops"')
        if not os.path.exists(base + ".fpr"):
            return self.answer(404, '"no such archive"')
        query = urllib.parse.parse_qs(url.query)
        if query.get("ws.op") == ["getSigningKeyData"]:
            with open(base + ".asc") as f:
                return self.answer(200, json.dumps(f.read()))
        with open(base + ".fpr") as f:
            fpr = f.read().strip()
        return self.answer(200, json.dumps({"name": m.group(2), "signing_key_fingerprint": fpr}))


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
