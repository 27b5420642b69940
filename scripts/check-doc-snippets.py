#!/usr/bin/env python3
"""The Getting-started article shows code the examples compile (issue 46).

Every ```swift block of Sources/BubbleKit/BubbleKit.docc/GettingStarted.md except the
`Package.swift` lines must appear, line for line (indentation included), in one of the examples'
Swift sources under Examples/. Prints each block that does not, with its first line; exit 1.
"""
import glob, re, sys

article = "Sources/BubbleKit/BubbleKit.docc/GettingStarted.md"
sources = {p: open(p, encoding="utf-8").read() for p in glob.glob("Examples/*/Sources/**/*.swift", recursive=True)}
if not sources:
    sys.exit("check-doc-snippets: no example sources under Examples/")
blocks = re.findall(r"```swift\n(.*?)```", open(article, encoding="utf-8").read(), re.S)
missing, checked = [], 0
for block in blocks:
    if block.lstrip().startswith("dependencies:"):
        continue  # the manifest lines a user's package writes; the examples depend by path
    checked += 1
    if not any(block in text for text in sources.values()):
        missing.append(block.splitlines()[0])
for first in missing:
    print(f"{article}: a code block is in no example's sources: {first!r}", file=sys.stderr)
print(f"check-doc-snippets: {checked - len(missing)} of {checked} code blocks of {article} are the examples' code")
sys.exit(1 if missing else 0)
