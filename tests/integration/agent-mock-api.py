#!/usr/bin/python3
"""A mock of the OpenAI Responses API and the Anthropic Messages API, for the real agents in secret-agents.

    agent-mock-api.py OUT_ENV LOG KEY [--tls CERT KEY_FILE] [--lifetime SECONDS]

Listens on an ephemeral port of 127.0.0.1 (over TLS with --tls) and writes MOCK_PORT to OUT_ENV. Every request
is appended to LOG as one JSON line {"method", "path", "authorization", "x-api-key", "key_ok"}: key_ok is true when
KEY arrived as the bearer token or the x-api-key header. POST …/responses is answered with a minimal streamed
Responses API answer, POST …/messages with a minimal streamed Messages API answer, both saying MOCK-REPLY-OK (only
when the key arrived; else 401); anything else gets 404.
"""
import argparse
import http.server
import json
import os
import signal
import ssl
import sys
import threading

LOCK = threading.Lock()
REPLY = "MOCK-REPLY-OK"


def sse(events):
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def responses_stream():
    usage = {"input_tokens": 1, "input_tokens_details": None, "output_tokens": 1, "output_tokens_details": None,
             "total_tokens": 2}
    return sse([
        ("response.created", {"type": "response.created", "response": {"id": "resp_mock"}}),
        ("response.output_item.done", {"type": "response.output_item.done", "item": {
            "type": "message", "role": "assistant", "id": "msg_mock",
            "content": [{"type": "output_text", "text": REPLY}]}}),
        ("response.completed", {"type": "response.completed", "response": {"id": "resp_mock", "usage": usage}}),
    ])


def messages_stream(model):
    message = {"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    return sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": REPLY}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def handler(log, key):
    class Mock(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            auth = self.headers.get("Authorization") or ""
            api_key = self.headers.get("x-api-key") or ""
            key_ok = auth == f"Bearer {key}" or api_key == key
            with LOCK, open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": self.command, "path": self.path, "authorization": auth,
                                    "x-api-key": api_key, "key_ok": key_ok}) + "\n")
            path = self.path.split("?")[0]
            if self.command == "POST" and (path.endswith("/responses") or path.endswith("/messages")):
                if not key_ok:
                    return self._send(401, "application/json", b'{"error":{"message":"bad key"}}')
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                if path.endswith("/responses"):
                    return self._send(200, "text/event-stream", responses_stream())
                if body.get("stream"):
                    return self._send(200, "text/event-stream", messages_stream(body.get("model", "mock")))
                reply = {"id": "msg_mock", "type": "message", "role": "assistant", "model": body.get("model", "mock"),
                         "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn",
                         "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
                return self._send(200, "application/json", json.dumps(reply).encode())
            self._send(404, "application/json", b'{"error":{"message":"not mocked"}}')

        def _send(self, code, kind, data):
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_HEAD = _answer

        def log_message(self, *args):  # keep the test output clean
            pass

    return Mock


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # a client that resets (the agents do) is no error here
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_env")
    ap.add_argument("log")
    ap.add_argument("key")
    ap.add_argument("--tls", nargs=2)
    ap.add_argument("--lifetime", type=int, default=120)
    a = ap.parse_args()
    server = QuietServer(("127.0.0.1", 0), handler(a.log, a.key))
    if a.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*a.tls)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tmp = a.out_env + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"MOCK_PORT={server.server_address[1]}\n")
    os.rename(tmp, a.out_env)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    threading.Event().wait(a.lifetime)


if __name__ == "__main__":
    main()
