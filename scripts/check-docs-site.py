#!/usr/bin/env python3
"""Opens the built documentation (out/docs) in headless Chromium, as a reader would, and checks
that the Getting-started page shows the examples' code (issue 46).

Serves out/docs over HTTP on a free loopback port (DocC pages read their JSON with fetch, which
file:// URLs refuse), loads /documentation/bubblekit/gettingstarted with `chromium --headless
--dump-dom`, and looks in the rendered page's text for every line of every code block that
scripts/check-doc-snippets.py matched to Examples/. Exit 1 naming what is missing.
"""
import functools, html, http.server, re, shutil, subprocess, sys, threading

site = "out/docs"
article = "Sources/BubbleKit/BubbleKit.docc/GettingStarted.md"
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    sys.exit("check-docs-site: no chromium (scripts/bootstrap.sh installs it)")
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
handler = functools.partial(Quiet, directory=site)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{server.server_address[1]}/documentation/bubblekit/gettingstarted"
try:
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=15000",
                          "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
finally:
    server.shutdown()
text = html.unescape(re.sub(r"<[^>]+>", "", dom))
blocks = [b for b in re.findall(r"```swift\n(.*?)```", open(article, encoding="utf-8").read(), re.S)
          if not b.lstrip().startswith("dependencies:")]
missing = [line.strip() for b in blocks for line in b.splitlines() if line.strip() and line.strip() not in text]
if "Getting started" not in text or missing:
    for line in missing[:10]:
        print(f"check-docs-site: {url} does not show: {line}", file=sys.stderr)
    sys.exit(f"check-docs-site: the Getting-started page lacks {len(missing)} lines of the examples' code"
             if missing else f"check-docs-site: {url} shows no Getting-started page")
print(f"check-docs-site: Chromium shows the Getting-started page with all {sum(len([l for l in b.splitlines() if l.strip()]) for b in blocks)} lines of the examples' code")
