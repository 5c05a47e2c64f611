"""What the re-created MCP conformance servers (mcp_dpop_server.py, mcp_ext_auth_server.py) share:
base64url, a handler that answers JSON and reads forms, and the MCP server's JSON-RPC answers."""

import base64
import json
import urllib.parse
from http.server import BaseHTTPRequestHandler


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class JSONHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *arguments):
        pass

    def answer(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def form(self):
        length = int(self.headers.get("Content-Length") or 0)
        return {k: v[0] for k, v in urllib.parse.parse_qs(self.rfile.read(length).decode()).items()}

    def answer_mcp(self, body, server_name):
        """A JSON-RPC message to the MCP server answered as the suite's test server does: initialize,
        tools/list and tools/call (its one tool, test-tool); a notification with 202."""
        try:
            message = json.loads(body or b"{}")
        except ValueError:
            return self.answer(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        if "id" not in message:
            return self.answer(202)
        results = {
            "initialize": {"protocolVersion": message.get("params", {}).get("protocolVersion", "2025-11-25"),
                           "capabilities": {"tools": {}}, "serverInfo": {"name": server_name, "version": "1"}},
            "tools/list": {"tools": [{"name": "test-tool", "inputSchema": {"type": "object"}}]},
            "tools/call": {"content": [{"type": "text", "text": "test"}]},
        }
        if message.get("method") not in results:
            return self.answer(200, {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}})
        self.answer(200, {"jsonrpc": "2.0", "id": message["id"], "result": results[message["method"]]})
