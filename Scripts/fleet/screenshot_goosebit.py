#!/usr/bin/env python3
"""Screenshots of goosebit's web UI pages, logged in as the admin, with headless Chromium driven by
selenium (as Scripts/lab/test_lab.py does). Run by Scripts/fleet/screenshot.sh.

    screenshot_goosebit.py URL USER PASSWORD OUT.png [PAGE]   (PAGE: devices (default), rollouts, software)

Logs in with POST /login (the JWT it answers is what goosebit's login page stores as the cookie
session_id), sets that cookie, opens /ui/PAGE and waits for the table to fill (or 10 s).

goosebit's pages load bootstrap, jQuery and DataTables from cdn.jsdelivr.net and cdn.datatables.net.
When those cannot be reached the page is unstyled and its tables stay empty (the script says so).
"""
import argparse
import json
import os
import ssl
import sys
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def login(url, user, password):
    form = urllib.parse.urlencode({"username": user, "password": password}).encode()
    context = ssl._create_unverified_context()
    with urllib.request.urlopen(urllib.request.Request(url + "/login", data=form), context=context) as resp:
        return json.load(resp)["access_token"]


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("BLUEOTA_CHROMIUM", "/usr/bin/chromium")
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900",
                     "--ignore-certificate-errors", "--no-proxy-server",
                     "--disable-background-networking", "--disable-component-update"]:
        options.add_argument(argument)
    service = Service(executable_path=os.environ.get("BLUEOTA_CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("user")
    parser.add_argument("password")
    parser.add_argument("out")
    parser.add_argument("page", nargs="?", default="devices")
    args = parser.parse_args()
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium's manager fetches nothing
    url = args.url.rstrip("/")
    token = login(url, args.user, args.password)
    driver = browser()
    try:
        driver.get(url + "/static/favicon.svg")  # a page on the origin, for the cookie
        driver.add_cookie({"name": "session_id", "value": token, "path": "/"})
        driver.get(f"{url}/ui/{args.page}")
        deadline = time.time() + 10
        while time.time() < deadline:
            if driver.execute_script("return document.readyState") == "complete" and \
                    not driver.execute_script("return typeof window.jQuery !== 'undefined'"):
                break  # no DataTables (its CDN is out of reach): the table will never fill
            rows = driver.execute_script(
                "return document.querySelectorAll('table tbody tr').length")
            empty = driver.execute_script(
                "return document.querySelectorAll('table tbody td.dt-empty').length")
            if rows and not empty:
                break
            time.sleep(0.2)
        time.sleep(0.5)
        driver.save_screenshot(args.out)
        styled = driver.execute_script("return typeof window.jQuery !== 'undefined'")
        print(f"{args.out}: /ui/{args.page} ({'with' if styled else 'WITHOUT'} its CDN scripts)")
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
