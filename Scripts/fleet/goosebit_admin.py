#!/usr/bin/env python3
"""A small client for goosebit's management API (/api/v1, goosebit 0.2.12). Standard library only.

    goosebit_admin.py [--url URL] [--user U] [--password P] [--ca CA.crt | --insecure] COMMAND

    upload FILE.swu                         prints the new software's id
    software                                JSON: every software (id, version, hardware, size, sha1)
    rollout --software ID [--feed default] [--name N]
                                            creates a rollout (rollouts start unpaused); prints its id
    pause ID... / resume ID...              pauses or resumes rollouts
    rollouts                                JSON: each rollout's id, name, feed, software, paused,
                                            success_count, failure_count
    devices                                 JSON: each device's id, name, sw_version, hardware,
                                            last_state, update_mode, feed, progress, last_seen
                                            (seconds ago), polling, assigned_software, log
    device ID                               JSON: one device, with its log and progress
    force ID...                             sets force_update on devices (offers the update again
                                            after an error, or the same version again)

URL, user and password default to $GOOSEBIT_URL, $GOOSEBIT_ADMIN_USER, $GOOSEBIT_ADMIN_PASSWORD
(as Scripts/fleet/goosebit.sh exports them), then http://127.0.0.1:60053, admin, goosebit-admin.

The auth flow: POST /login with a form (username, password) answers
{"access_token": JWT, "token_type": "bearer"}; every /api call then sends
"Authorization: Bearer JWT" (the web UI sends the same JWT as the cookie session_id).
"""
import argparse
import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
import uuid


class Client:
    def __init__(self, url, user, password, ca=None, insecure=False):
        self.url = url.rstrip("/")
        if insecure:
            self.context = ssl._create_unverified_context()
        elif ca:
            self.context = ssl.create_default_context(cafile=ca)
        else:
            self.context = None
        form = urllib.parse.urlencode({"username": user, "password": password}).encode()
        answer = self.request("POST", "/login", form, {"Content-Type": "application/x-www-form-urlencoded"})
        self.token = answer["access_token"]

    def request(self, method, path, body=None, headers=None):
        headers = dict(headers or {})
        if getattr(self, "token", None):
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=60) as resp:
                data = resp.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")
            raise SystemExit(f"goosebit_admin: {method} {path}: HTTP {error.code}: {detail}")
        return json.loads(data) if data else None

    def json(self, method, path, payload):
        return self.request(method, path, json.dumps(payload).encode(), {"Content-Type": "application/json"})

    def upload(self, path):
        boundary = uuid.uuid4().hex
        with open(path, "rb") as f:
            content = f.read()
        name = os.path.basename(path)
        body = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
        return self.request("PUT", "/api/v1/software", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"})


def hardware(hw):
    return None if hw is None else {"model": hw.get("model"), "revision": hw.get("revision")}


def software_summary(sw):
    if sw is None:
        return None
    return {"id": sw["id"], "version": sw["version"], "name": sw.get("name"), "size": sw.get("size"),
            "sha1": sw.get("hash"), "hardware": [hardware(h) for h in sw.get("compatibility") or []]}


def device_summary(client, d):
    log = client.request("GET", "/api/v1/devices/" + urllib.parse.quote(d["id"], safe="") + "/log")
    return {"id": d["id"], "name": d.get("name"), "sw_version": d.get("sw_version"),
            "hardware": hardware(d.get("hardware")), "last_state": d.get("last_state"),
            "update_mode": d.get("update_mode"), "feed": d.get("feed"), "progress": d.get("progress"),
            "force_update": d.get("force_update"), "last_seen": d.get("last_seen"), "polling": d.get("polling"),
            "last_ip": d.get("last_ip"), "assigned_software": software_summary(d.get("assigned_software")),
            "log": log.get("log") if log else None}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default=os.environ.get("GOOSEBIT_URL", "http://127.0.0.1:60053"))
    parser.add_argument("--user", default=os.environ.get("GOOSEBIT_ADMIN_USER", "admin"))
    parser.add_argument("--password", default=os.environ.get("GOOSEBIT_ADMIN_PASSWORD", "goosebit-admin"))
    parser.add_argument("--ca", default=os.environ.get("GOOSEBIT_CA"))
    parser.add_argument("--insecure", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("upload").add_argument("file")
    sub.add_parser("software")
    rollout = sub.add_parser("rollout")
    rollout.add_argument("--software", type=int, required=True)
    rollout.add_argument("--feed", default="default")
    rollout.add_argument("--name")
    for name in ("pause", "resume"):
        sub.add_parser(name).add_argument("ids", type=int, nargs="+")
    sub.add_parser("rollouts")
    sub.add_parser("devices")
    sub.add_parser("device").add_argument("id")
    sub.add_parser("force").add_argument("ids", nargs="+")
    args = parser.parse_args()

    client = Client(args.url, args.user, args.password, args.ca, args.insecure)
    if args.command == "upload":
        print(client.upload(args.file)["id"])
    elif args.command == "software":
        answer = client.request("GET", "/api/v1/software")
        print(json.dumps([software_summary(s) for s in answer["software"]], indent=2))
    elif args.command == "rollout":
        name = args.name or f"software {args.software} to {args.feed}"
        answer = client.json("PUT", "/api/v1/rollouts", {"name": name, "feed": args.feed, "software_id": args.software})
        print(answer["id"])
    elif args.command in ("pause", "resume"):
        client.json("PATCH", "/api/v1/rollouts", {"ids": args.ids, "paused": args.command == "pause"})
    elif args.command == "rollouts":
        answer = client.request("GET", "/api/v1/rollouts")
        print(json.dumps([{"id": r["id"], "name": r["name"], "feed": r["feed"], "paused": r["paused"],
                           "created_at": r["created_at"], "software": software_summary(r["software"]),
                           "success_count": r["success_count"], "failure_count": r["failure_count"]}
                          for r in answer["rollouts"]], indent=2))
    elif args.command == "devices":
        answer = client.request("GET", "/api/v1/devices")
        print(json.dumps([device_summary(client, d) for d in answer["devices"]], indent=2))
    elif args.command == "device":
        # GET /api/v1/devices/{id} creates the device when it does not exist (goosebit's
        # get_device): look it up in the list first.
        devices = client.request("GET", "/api/v1/devices")["devices"]
        found = [d for d in devices if d["id"] == args.id]
        if not found:
            raise SystemExit(f"goosebit_admin: no device {args.id}")
        detail = client.request("GET", "/api/v1/devices/" + urllib.parse.quote(args.id, safe=""))
        summary = device_summary(client, found[0])
        summary["detail"] = detail
        print(json.dumps(summary, indent=2))
    elif args.command == "force":
        client.json("PATCH", "/api/v1/devices", {"devices": args.ids, "force_update": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
