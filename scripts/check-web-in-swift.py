#!/usr/bin/env python3
"""No JavaScript or CSS in Swift (issue 62): no .swift file under Sources/ holds more than
LIMIT lines of it. Front-end code lives in files (Sources/BubbleServer/Web, Sources/BubbleHTML/Web)
where node --check, tsc and the node tests see it.

A line counts when a string literal on it (or the line, inside a multi-line literal) reads as
CSS (a rule `sel{prop:value}` or two or more `prop:value;` declarations) or as JavaScript
(`function`, `=>`, `const`/`let`/`var` declarations, `document.`, `addEventListener`).
Prints each file over the limit with its count and first lines; exits 1 if there is one.

    scripts/check-web-in-swift.py [--limit 20] [--list] [FILE...]
"""
import argparse
import pathlib
import re
import sys

CSS_RULE = re.compile(r"[\w\])*>:.#-]\s*\{[^{}]*?[a-z-]+\s*:\s*[^;{}]+[;}]")
CSS_DECLS = re.compile(r"(?:^|[;{\s\"])-?[a-z]+(?:-[a-z]+)*\s*:\s*[^;:{}\"]+;")
JS = re.compile(r"\bfunction\s*[\w(]|=>\s*[{(\w]|\b(?:const|let|var)\s+[\w{\[]+\s*=|\bdocument\.|addEventListener\(")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def looks_like_web(text: str) -> bool:
    if CSS_RULE.search(text) or JS.search(text):
        return True
    return len(CSS_DECLS.findall(text)) >= 2


def web_lines(path: pathlib.Path):
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        quotes = line.count('"""')
        if inside:
            if quotes:
                inside = False
                continue
            if looks_like_web(line):
                yield number, line.strip()
            continue
        if quotes == 1:
            inside = True
            continue
        code = line.split("//", 1)[0] if not line.lstrip().startswith("///") else ""
        if any(looks_like_web(s) for s in STRING.findall(code)):
            yield number, line.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--list", action="store_true", help="print every counted line")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    files = [pathlib.Path(f) for f in args.files] or sorted((root / "Sources").rglob("*.swift"))
    status = 0
    for f in files:
        found = list(web_lines(f))
        if args.list and found:
            for n, text in found:
                print(f"{f}:{n}: {text[:110]}")
        if len(found) > args.limit:
            rel = f.relative_to(root) if f.is_absolute() else f
            print(f"web-in-swift: {rel} holds {len(found)} lines of JavaScript or CSS (at most {args.limit}); "
                  f"move them to a file under Sources/*/Web. First: line {found[0][0]}: {found[0][1][:90]}", file=sys.stderr)
            status = 1
    if status == 0 and not args.list:
        print(f"JavaScript and CSS in Swift: at most {args.limit} lines per file: ok")
    return status


if __name__ == "__main__":
    sys.exit(main())
