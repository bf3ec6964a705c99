#!/usr/bin/env python3
# http-server.py: an HTTP/1.1 server for the Glimpse tests.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: http-server.py DIRECTORY
# Serves DIRECTORY on 127.0.0.1 on a free port and prints the port as the
# first line on stdout.  Exits when stdin is closed (its parent is gone).
#
# Supports: GET and HEAD, single byte ranges (206 with Content-Range, 416),
# ETag/If-None-Match and Last-Modified/If-Modified-Since (304), If-Range,
# redirects, and directory listings as Apache's mod_autoindex writes them
# (the "Index of" page mirrors serve: a <pre> with sort links, a Parent
# Directory link, one <a href="NAME/"> per directory and <a href="NAME"> per
# file, the shown name cut to 23 characters with "..>"; a directory
# asked for without its trailing '/' is a 301 to it).
# Fault injection by query string:
#   ?cut=N       send N bytes of the body, then close the connection
#                (once per path; later requests are served normally)
#   ?norange=1   ignore Range and answer 200 with the whole file
#   ?status=NNN  answer NNN with a short body
#   ?redirect=1  answer 302 to the same path without "redirect"
#   ?stall=N     send N bytes of the body, then stall until the client goes
# Control:
#   GET /__stats  JSON {path: [{"method", "range", "status", "bytes"}, …]}
#   GET /__stats?path=/P  the requests for /P, one a line: METHOD RANGE|- STATUS BYTES
#   GET /__reset  forget the statistics and the "once" state

import email.utils
import html
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.parse

lock = threading.Lock()
stats = {}
cut_done = set()
root = None
quit_event = threading.Event()


def record(path, entry):
    with lock:
        stats.setdefault(path, []).append(entry)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "glimpse-test/1"

    def log_message(self, fmt, *args):
        if os.environ.get("GLIMPSE_TEST_HTTP_VERBOSE"):
            sys.stderr.write("http-server: " + (fmt % args) + "\n")

    def send_small(self, status, body, content_type="text/plain", extra=None):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        return len(data)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        query = dict(urllib.parse.parse_qsl(url.query))

        if path == "/__stats":
            with lock:
                if "path" in query:
                    # one line per request: METHOD RANGE|- STATUS BYTES
                    body = "".join("%s %s %d %d\n" % (e["method"], (e["range"] or "-").replace(" ", ""),
                                                       e["status"], e["bytes"])
                                   for e in stats.get(query["path"], []))
                    content_type = "text/plain"
                else:
                    body = json.dumps(stats)
                    content_type = "application/json"
            self.send_small(200, body, content_type)
            return
        if path == "/__reset":
            with lock:
                stats.clear()
                cut_done.clear()
            self.send_small(200, "ok\n")
            return

        entry = {"method": self.command, "range": self.headers.get("Range"),
                 "status": 0, "bytes": 0}
        record(path, entry)

        if "status" in query:
            entry["status"] = int(query["status"])
            entry["bytes"] = self.send_small(int(query["status"]), "injected status\n")
            return
        if query.get("redirect"):
            del query["redirect"]
            location = url.path + ("?" + urllib.parse.urlencode(query) if query else "")
            entry["status"] = 302
            self.send_small(302, "moved\n", extra={"Location": location})
            return

        fs_path = os.path.realpath(os.path.join(root, path.lstrip("/")))
        inside = fs_path == root or fs_path.startswith(root + os.sep)
        if inside and os.path.isdir(fs_path):
            if not url.path.endswith("/"):
                entry["status"] = 301
                self.send_small(301, "moved\n", extra={"Location": url.path + "/"})
                return
            entry["status"] = 200
            entry["bytes"] = self.send_small(200, autoindex(fs_path, path), "text/html;charset=UTF-8")
            return
        if not inside or not os.path.isfile(fs_path):
            entry["status"] = 404
            self.send_small(404, "not found\n")
            return

        st = os.stat(fs_path)
        size = st.st_size
        etag = '"%x-%x"' % (size, st.st_mtime_ns)
        last_modified = email.utils.formatdate(st.st_mtime, usegmt=True)
        validators = {"ETag": etag, "Last-Modified": last_modified,
                      "Accept-Ranges": "bytes"}

        inm = self.headers.get("If-None-Match")
        ims = self.headers.get("If-Modified-Since")
        not_modified = False
        if inm is not None:
            not_modified = etag in [t.strip() for t in inm.split(",")] or inm.strip() == "*"
        elif ims is not None:
            try:
                since = email.utils.parsedate_to_datetime(ims).timestamp()
                not_modified = int(st.st_mtime) <= since
            except (TypeError, ValueError):
                pass
        if not_modified:
            entry["status"] = 304
            self.send_response(304)
            for key, value in validators.items():
                self.send_header(key, value)
            self.end_headers()
            return

        start, end = 0, size - 1
        status = 200
        range_header = self.headers.get("Range")
        # If-Range (RFC 9110 13.1.5): the range only if the file is still
        # the one the validator names; otherwise the whole of it, with 200.
        if_range = self.headers.get("If-Range")
        if range_header and if_range is not None and if_range.strip() not in (etag, last_modified):
            range_header = None
        if range_header and not query.get("norange"):
            spec = range_header.strip()
            ok = spec.startswith("bytes=") and "," not in spec
            first, _, last = spec[6:].partition("-") if ok else ("", "", "")
            try:
                if first == "":
                    # suffix range: the last N bytes
                    start, end = max(0, size - int(last)), size - 1
                else:
                    start = int(first)
                    end = min(int(last), size - 1) if last else size - 1
            except ValueError:
                ok = False
            if ok and start >= size:
                entry["status"] = 416
                self.send_small(416, "range not satisfiable\n",
                                extra={"Content-Range": "bytes */%d" % size})
                return
            if ok and start <= end:
                status = 206

        length = end - start + 1 if size > 0 else 0
        entry["status"] = status
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
        for key, value in validators.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command == "HEAD":
            return

        limit = None
        stall = False
        if "cut" in query:
            with lock:
                if path not in cut_done:
                    cut_done.add(path)
                    limit = int(query["cut"])
        if "stall" in query:
            limit = int(query["stall"])
            stall = True

        sent = 0
        with open(fs_path, "rb") as f:
            f.seek(start)
            remaining = length if limit is None else min(length, limit)
            try:
                while remaining > 0:
                    chunk = f.read(min(65536, remaining))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    with lock:
                        entry["bytes"] = sent
                    remaining -= len(chunk)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
                return

        if stall:
            # Wait until the client closes the connection (or we quit).
            self.connection.settimeout(None)
            try:
                while not quit_event.is_set():
                    if not self.connection.recv(1024):
                        break
            except OSError:
                pass
            self.close_connection = True
            return

        if limit is not None and sent < length:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def autoindex(fs_path, path):
    """The listing of a directory in the format of Apache's mod_autoindex."""
    title = html.escape("Index of " + path.rstrip("/"))
    parent = path.rstrip("/").rsplit("/", 1)[0] + "/"
    out = ['<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">\n<html>\n <head>\n'
           '  <title>%s</title>\n </head>\n <body>\n<h1>%s</h1>\n' % (title, title),
           '<pre><img src="/icons/blank.gif" alt="Icon "> <a href="?C=N;O=D">Name</a>'
           '                    <a href="?C=M;O=A">Last modified</a>      '
           '<a href="?C=S;O=A">Size</a>  <a href="?C=D;O=A">Description</a><hr>'
           '<img src="/icons/back.gif" alt="[PARENTDIR]"> <a href="%s">Parent Directory</a>'
           '                             -   \n' % html.escape(urllib.parse.quote(parent), quote=True)]
    for name in sorted(os.listdir(fs_path)):
        full = os.path.join(fs_path, name)
        is_dir = os.path.isdir(full)
        shown = name + ("/" if is_dir else "")
        if len(shown) > 23:
            shown = shown[:20] + "..>"
        st = os.stat(full)
        when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(st.st_mtime))
        out.append('<img src="/icons/%s" alt="[%s]"> <a href="%s">%s</a>%s %s  %s   \n'
                   % ("folder.gif" if is_dir else "unknown.gif", "DIR" if is_dir else "   ",
                      html.escape(urllib.parse.quote(name) + ("/" if is_dir else ""), quote=True),
                      html.escape(shown), " " * (24 - len(shown)), when,
                      "-" if is_dir else "%5d" % st.st_size))
    out.append("<hr></pre>\n</body></html>\n")
    return "".join(out)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # Clients that go away (cancelled or cut downloads) are expected.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main():
    global root
    if len(sys.argv) != 2:
        sys.stderr.write("usage: http-server.py DIRECTORY\n")
        return 2
    root = os.path.realpath(sys.argv[1])
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except OSError:
            pass
        quit_event.set()
        server.shutdown()

    threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
