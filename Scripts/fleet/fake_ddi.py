#!/usr/bin/env python3
"""A DDI server that misbehaves on purpose, for Scripts/fleet/test-gateway.sh: one target's poll
offers one deployment (or a cancel), and the answers are broken the way --mode says. Every request
is appended to --log as a JSON line (method, path, headers, body), so the test can tell what the
gateway sent and what it never asked for.

  fake_ddi.py --port P --artifact FILE.swu --log requests.jsonl --mode MODE

Modes:
  good          a correct deployment (sha1 and sha256 of the artifact)
  wrong-hash    the deployment's sha256 is another file's
  truncated     the download stops halfway (the size and hash are the whole file's)
  expired       every request answers 401, as hawkBit does for an expired or revoked token
  garbage       the poll answers an HTML error page with status 200
  null-deploy   the deploymentBase link answers `null`, as goosebit does once the action is gone
  foreign-link  the deploymentBase link points at another server
  cancel        the poll carries a cancelAction for action 9 and no deployment
  cancel-late   the first poll offers the deployment, every later one cancels it (the cancel
                arrives while the device waits its turn)

hawkBit's model, one action after another for each target, as hawkBit shapes them
(DdiRootController: calculateDownloadType, calculateUpdateType, calculateMaintenanceWindow):
  download-only             action 9, DOWNLOAD_ONLY (download forced, update skip, no window): closed
                            for the target once it posts `execution: downloaded` (as hawkBit's
                            handleDownloadedActionStatus does) or `closed`
  window-closed-then-open   action 10 with a maintenance window: `unavailable` (update skip) until
                            the file --window-open exists, then `available` (update forced); closed
                            by `closed` feedback
  download-only-then-window action 9, then action 10
  confirm                   action 11 waits for confirmation (a `confirmationBase` link); `confirmed`
                            makes it a deployment (forced) closed by `closed` feedback; `denied` keeps
                            it waiting, as hawkBit's denyAction does
"""
import argparse
import hashlib
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--artifact", required=True)
parser.add_argument("--log", required=True)
parser.add_argument("--mode", required=True)
parser.add_argument("--window-open", help="while this file exists, the maintenance window is available")
args = parser.parse_args()
MODEL_ACTIONS = {
    "download-only": ["9"],
    "window-closed-then-open": ["10"],
    "download-only-then-window": ["9", "10"],
    "confirm": ["11"],
}
# Per target: how many of its actions are closed, and whether action 11 was confirmed.
closed = {}
confirmed = set()


def current_action(target):
    actions = MODEL_ACTIONS[args.mode]
    done = closed.get(target, 0)
    return actions[done] if done < len(actions) else None


def window_open():
    return bool(args.window_open) and os.path.exists(args.window_open)


def model_deployment(action):
    if action == "9":
        return {"download": "forced", "update": "skip"}
    if action == "10":
        return ({"download": "forced", "update": "forced", "maintenanceWindow": "available"} if window_open()
                else {"download": "forced", "update": "skip", "maintenanceWindow": "unavailable"})
    return {"download": "forced", "update": "forced"}
artifact = open(args.artifact, "rb").read()
base = f"http://127.0.0.1:{args.port}"
polls = 0


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_):
        pass

    def record(self, body=b""):
        with open(args.log, "a") as log:
            log.write(json.dumps({
                "method": self.command, "path": self.path,
                "authorization": self.headers.get("Authorization"), "range": self.headers.get("Range"),
                "body": body.decode("utf-8", "replace"),
            }) + "\n")

    def answer(self, status, body, kind="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.record()
        parts = self.path.split("?")[0].strip("/").split("/")
        if args.mode == "expired":
            return self.answer(401, b'{"message":"token expired"}')
        if len(parts) == 4:  # DEFAULT/controller/v1/<id>: the poll
            if args.mode == "garbage":
                return self.answer(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
            target = f"{base}/{'/'.join(parts)}"
            global polls
            polls += 1
            if args.mode in MODEL_ACTIONS:
                action = current_action(parts[3])
                if action is None:
                    links = {}
                elif action == "11" and parts[3] not in confirmed:
                    links = {"confirmationBase": {"href": f"{target}/confirmationBase/11?c=77"}}
                else:
                    links = {"deploymentBase": {"href": f"{target}/deploymentBase/{action}?c=77"}}
            elif args.mode == "cancel" or (args.mode == "cancel-late" and polls > 1):
                links = {"cancelAction": {"href": f"{target}/cancelAction/9"}}
            elif args.mode == "foreign-link":
                links = {"deploymentBase": {"href": "http://127.0.0.2:9/DEFAULT/controller/v1/x/deploymentBase/9"}}
            else:
                links = {"deploymentBase": {"href": f"{target}/deploymentBase/9?c=123"}}
            return self.answer(200, json.dumps({"config": {"polling": {"sleep": "00:00:01"}}, "_links": links}).encode())
        if parts[4:5] in (["deploymentBase"], ["confirmationBase"]) and args.mode in MODEL_ACTIONS:
            action = current_action(parts[3])
            waiting = action == "11" and parts[3] not in confirmed
            if action is None or action != parts[5] or waiting != (parts[4] == "confirmationBase"):
                return self.answer(404, b'{"message":"no such action for the target"}')
            deployment = dict(model_deployment(action), chunks=[{
                "part": "os", "version": "2.0.0+0", "name": "fw", "artifacts": [{
                    "filename": "fw.swu", "size": len(artifact),
                    "hashes": {"sha1": hashlib.sha1(artifact).hexdigest(),
                               "sha256": hashlib.sha256(artifact).hexdigest()},
                    "_links": {"download": {"href": f"{base}/{'/'.join(parts[:4])}/download"}}}]}])
            key = "confirmation" if waiting else "deployment"
            return self.answer(200, json.dumps({"id": action, key: deployment}).encode())
        if parts[4:5] == ["deploymentBase"]:
            if args.mode == "null-deploy":
                return self.answer(200, b"null")
            sha256 = hashlib.sha256(artifact).hexdigest()
            if args.mode == "wrong-hash":
                sha256 = hashlib.sha256(artifact + b"other").hexdigest()
            deployment = {"id": "9", "deployment": {"download": "forced", "update": "forced", "chunks": [{
                "part": "os", "version": "2.0.0+0", "name": "fw", "artifacts": [{
                    "filename": "fw.swu", "size": len(artifact),
                    "hashes": {"sha1": hashlib.sha1(artifact).hexdigest(), "sha256": sha256},
                    "_links": {"download": {"href": f"{base}/{'/'.join(parts[:4])}/download"}}}]}]}}
            return self.answer(200, json.dumps(deployment).encode())
        if parts[4:5] == ["cancelAction"]:
            return self.answer(200, json.dumps({"id": "9", "cancelAction": {"stopId": "9"}}).encode())
        if parts[4:5] == ["download"]:
            data = artifact[: len(artifact) // 2] if args.mode == "truncated" else artifact
            start = 0
            if self.headers.get("Range", "").startswith("bytes="):
                start = int(self.headers["Range"][6:].rstrip("-"))
                if start >= len(data):
                    return self.answer(416, b"")
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(artifact)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            self.wfile.write(data[start:])
            return
        self.answer(404, b'{"message":"no such route"}')

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.record(body)
        if args.mode == "expired":
            return self.answer(401, b"{}")
        parts = self.path.split("?")[0].strip("/").split("/")
        if args.mode in MODEL_ACTIONS and self.command == "POST" and parts[-1:] == ["feedback"]:
            target, kind, action = parts[3], parts[4], parts[5]
            if action != current_action(target):
                return self.answer(410, b'{"message":"the action is closed"}')
            sent = json.loads(body or b"{}")
            if kind == "confirmationBase":
                if sent.get("confirmation") == "confirmed":
                    confirmed.add(target)
            else:
                execution = sent.get("status", {}).get("execution")
                if execution == "closed" or (execution == "downloaded" and action == "9"):
                    closed[target] = closed.get(target, 0) + 1
        self.answer(200, b'{"id":"9"}')

    do_PUT = do_POST


ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()
