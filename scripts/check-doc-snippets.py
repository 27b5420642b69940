#!/usr/bin/env python3
"""The articles show what the examples compile and print (issue 46).

In Sources/BubbleKit/BubbleKit.docc's GettingStarted.md and ThemesAndNineSlice.md:
- every ```swift block except `Package.swift` lines (`dependencies:`) must appear, line for line
  (indentation included), in one of the examples' Swift sources under Examples/;
- every plain ``` block (what BubbleFrames prints) must appear in
  Examples/BubbleFrames/expected.txt, which scripts/run-examples.sh compares its output with.

    scripts/check-doc-snippets.py [--site out/docs]

With --site, the built documentation is also opened as a reader would: the folder is served
over HTTP on a free loopback port (DocC pages read their JSON with fetch, which file:// URLs
refuse), each article's page is loaded with `chromium --headless --dump-dom`, and every line of
its blocks must be in the rendered page's text. Exit 1 naming what is missing.
"""
import functools, glob, html, http.server, re, shutil, subprocess, sys, threading

catalog = "Sources/BubbleKit/BubbleKit.docc"
articles = {"GettingStarted.md": "gettingstarted", "ThemesAndNineSlice.md": "themesandnineslice"}
sources = {p: open(p, encoding="utf-8").read() for p in glob.glob("Examples/*/Sources/**/*.swift", recursive=True)}
printed = open("Examples/BubbleFrames/expected.txt", encoding="utf-8").read()
if not sources:
    sys.exit("check-doc-snippets: no example sources under Examples/")


def blocks(article):
    """The article's checked blocks: (kind, text) with kind "swift" or "output"."""
    text = open(f"{catalog}/{article}" if article != "README.md" else article, encoding="utf-8").read()
    found = []
    for lang, block in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang == "swift" and not block.lstrip().startswith("dependencies:"):
            found.append(("swift", block))
        elif lang == "" and article != "README.md":
            found.append(("output", block))
    return found


problems, checked = [], 0
# The README's Swift example too: its blocks are lines of the examples (its commands are
# scripts/check-doc-commands.py's).
for article in list(articles) + ["README.md"]:
    for kind, block in blocks(article):
        checked += 1
        ok = any(block in s for s in sources.values()) if kind == "swift" else block in printed
        if not ok:
            where = "in no example's sources" if kind == "swift" else "not what BubbleFrames prints (expected.txt)"
            problems.append(f"{catalog + '/' if article != 'README.md' else ''}{article}: a code block is {where}: {block.splitlines()[0]!r}")
for p in problems:
    print(p, file=sys.stderr)
print(f"check-doc-snippets: {checked - len(problems)} of {checked} code blocks of {', '.join(articles)} and README.md are the examples' code and output")

if "--site" in sys.argv and not problems:
    site = sys.argv[sys.argv.index("--site") + 1]
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        sys.exit("check-doc-snippets: no chromium (scripts/bootstrap.sh installs it)")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for article, page in articles.items():
            url = f"http://127.0.0.1:{server.server_address[1]}/documentation/bubblekit/{page}"
            dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=15000",
                                  "--dump-dom", url], capture_output=True, text=True, timeout=120).stdout
            text = html.unescape(re.sub(r"<[^>]+>", "", dom))
            lines = [l.strip() for _, b in blocks(article) for l in b.splitlines() if l.strip()]
            missing = [l for l in lines if l not in text]
            for line in missing[:10]:
                problems.append(f"{url} does not show: {line}")
            if not missing:
                print(f"check-doc-snippets: Chromium shows {page} with all {len(lines)} lines of its blocks")
            elif len(missing) > 10:
                problems.append(f"{url}: {len(missing) - 10} more lines missing")
    finally:
        server.shutdown()
    for p in problems:
        print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
