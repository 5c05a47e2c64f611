"""A git server for the end-to-end tests: smart HTTP through the real `git http-backend`,
behind HTTP Basic authentication that takes only tokens the sandbox issued (asked of the
sandbox's userinfo endpoint), less those the test marks refused (POST /_refuse, the token
as body): a server that stopped taking a token. GET /_scopes answers what the last token it took
can do, as the sandbox's introspection says (its scopes, space-separated): what git was handed.

With --owners, each repository belongs to the person its first path segment names (`/ada/…`):
a token of anyone else's is refused there, and every push is noted in PROJECT_ROOT/pushes.log
as "path person".

    git_server.py PROJECT_ROOT SANDBOX_BASE_URL [--owners]   prints its port, then serves
"""

import base64
import http.server
import json
import threading
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

ROOT, SANDBOX = sys.argv[1], sys.argv[2]
OWNERS = "--owners" in sys.argv[3:]
REFUSED = set()
LAST = [None]  # the last token taken, kept in memory only
PUSHES = threading.Lock()


def person_of(token):
    """Who the sandbox issued the token to (their e-mail address); None when it did not."""
    request = urllib.request.Request(SANDBOX + "/userinfo", headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read()).get("email") or "someone" if response.status == 200 else None
    except urllib.error.HTTPError:
        return None


class Git(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def refuse(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="latchkey-test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def authorized_user(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return None
        user, _, token = base64.b64decode(header[6:]).decode().partition(":")
        person = None if token in REFUSED else person_of(token)
        if person is None:
            return None
        LAST[0] = token
        if OWNERS:
            if self.path.split("/")[1] != person.split("@")[0]:
                return None
            if self.command == "POST" and "git-receive-pack" in self.path:
                with PUSHES, open(f"{ROOT}/pushes.log", "a") as log:
                    log.write(f"{self.path.partition('?')[0]} {person}\n")
        return user

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))

    def backend(self):
        if self.path == "/_scopes":
            body = urllib.parse.urlencode({"token": LAST[0] or "", "client_id": "latchkey-desktop"}).encode()
            with urllib.request.urlopen(urllib.request.Request(SANDBOX + "/introspect", data=body), timeout=10) as response:
                scopes = json.loads(response.read()).get("scope", "").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(scopes)))
            self.end_headers()
            self.wfile.write(scopes)
            return
        if self.path == "/_refuse":
            REFUSED.add(self.body().decode())
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.body() if self.command == "POST" else b""
        user = self.authorized_user()
        if user is None:
            self.refuse()
            return
        path, _, query = self.path.partition("?")
        environment = {
            "GIT_PROJECT_ROOT": ROOT, "GIT_HTTP_EXPORT_ALL": "1", "REQUEST_METHOD": self.command, "PATH_INFO": path,
            "QUERY_STRING": query, "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": user, "REMOTE_ADDR": "127.0.0.1", "GIT_CONFIG_NOSYSTEM": "1",
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""), "HTTP_GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "PATH": "/usr/bin:/bin",
        }
        result = subprocess.run(["git", "http-backend"], input=body, env=environment, capture_output=True)
        head, _, payload = result.stdout.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(": ")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = backend

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Git)
print(server.server_address[1], flush=True)
server.serve_forever()
