#!/usr/bin/env python3
"""An HTTP server for Tests/OTAGatewayTests, in its own process so that the tests' load cannot
starve it: each route answers as a JSON table says, and every request is appended to a log.

  scripted_http.py ROUTES.json LOG.jsonl PORT-FILE [CERT KEY]  # writes its port, then serves

With CERT and KEY (PEM files) it serves HTTPS.

ROUTES.json: {"GET /path": {"status": 200, "headers": {"Name": "value"}, "body_hex": "...",
              "ranges": true}, ...}. With "ranges", a "Range: bytes=N-" request gets 206 and the
body from N (416 past its end); without, the whole body.
"""
import json
import os
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

routes = json.load(open(sys.argv[1]))
log_path = sys.argv[2]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length) if length else b""
        with open(log_path, "a") as log:
            log.write(json.dumps({
                "method": self.command, "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace")}) + "\n")
        route = routes.get(f"{self.command} {self.path.split('?')[0]}")
        if route is None:
            return self.answer(404, {}, b"no such route")
        data = bytes.fromhex(route.get("body_hex", ""))
        headers = dict(route.get("headers", {}))
        status = route.get("status", 200)
        requested = self.headers.get("Range", "")
        if route.get("ranges") and requested.startswith("bytes=") and requested.endswith("-"):
            start = int(requested[6:-1])
            if start >= len(data):
                return self.answer(416, {}, b"")
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
            return self.answer(206, headers, data[start:])
        self.answer(status, headers, data)

    def answer(self, status, headers, data):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = handle_any


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a client that hangs up mid-answer (the tests' oversized bodies) is not news


server = Server(("127.0.0.1", 0), Handler)
if len(sys.argv) > 5:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[4], sys.argv[5])
    server.socket = context.wrap_socket(server.socket, server_side=True)
with open(sys.argv[3] + ".tmp", "w") as port_file:
    port_file.write(str(server.server_address[1]))
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
server.serve_forever()
