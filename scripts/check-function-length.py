#!/usr/bin/env python3
"""No function or initialiser in Sources/ longer than the limit (issue 65).

Counts the lines from a declaration (`func`, `init`, `deinit`, `subscript`) to its closing brace,
matching braces outside strings and comments. Prints each one over the limit with its file and
line, longest first, and exits 1 if there is one — except those listed in
scripts/long-functions.txt (`path name`, one a line: the ones not split yet). A listed one that
is no longer over the limit must leave the list, so it only shrinks.

    scripts/check-function-length.py [--limit 120] [--top N]
"""
import os
import re
import sys

DECL = re.compile(r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|open|static|class|final|override|'
                  r'mutating|nonmutating|nonisolated|convenience|required|dynamic|isolated|consuming|borrowing)\s+)*'
                  r'(func\s+[^\s(<]+|init[?!]?|deinit|subscript)\b')


def strip(line, state):
    """The line's code with strings and comments blanked; `state` carries a block comment or a
    multi-line string across lines."""
    out, i, n = [], 0, len(line)
    while i < n:
        if state['block']:
            j = line.find('*/', i)
            if j < 0:
                return ''.join(out)
            state['block'] = False
            i = j + 2
            continue
        if state['multi']:
            j = line.find('"""', i)
            if j < 0:
                return ''.join(out)
            state['multi'] = False
            i = j + 3
            continue
        c = line[i]
        if line.startswith('//', i):
            break
        if line.startswith('/*', i):
            state['block'] = True
            i += 2
            continue
        if line.startswith('"""', i):
            state['multi'] = True
            i += 3
            continue
        if c == '"':
            i += 1
            depth = 0
            while i < n:
                if line[i] == '\\' and i + 1 < n and line[i + 1] == '(':
                    depth += 1
                    i += 2
                    continue
                if depth and line[i] == ')':
                    depth -= 1
                elif not depth and line[i] == '\\':
                    i += 1
                elif not depth and line[i] == '"':
                    break
                i += 1
            i += 1
            continue
        out.append(c)
        i += 1
    return ''.join(out)


def functions(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    state = {'block': False, 'multi': False}
    code = [strip(l, state) for l in lines]
    found = []
    for k, text in enumerate(code):
        m = DECL.match(text)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(k, len(code)):
            for ch in code[j]:
                if ch == '{':
                    depth += 1
                    opened = True
                elif ch == '}':
                    depth -= 1
            if opened and depth <= 0:
                found.append((j - k + 1, path, k + 1, m.group(1)))
                break
            if not opened and j > k and code[j].strip() == '':
                break  # a protocol requirement: no body
    return found


def main():
    limit = 120
    top = 0
    args = sys.argv[1:]
    if '--limit' in args:
        limit = int(args[args.index('--limit') + 1])
    if '--top' in args:
        top = int(args[args.index('--top') + 1])
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'Sources')
    everything = []
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith('.swift'):
                everything += functions(os.path.join(folder, name))
    everything.sort(reverse=True)
    if top:
        for length, path, line, name in everything[:top]:
            print(f'{length:5} {os.path.relpath(path, os.path.join(root, ".."))}:{line} {name}')
        return 0
    allowed_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'long-functions.txt')
    allowed = set()
    if os.path.exists(allowed_file):
        allowed = {l.strip() for l in open(allowed_file) if l.strip() and not l.startswith('#')}
    def key(f):
        return f'{os.path.relpath(f[1], os.path.join(root, ".."))} {f[3]}'
    over = [f for f in everything if f[0] > limit and key(f) not in allowed]
    still = {key(f) for f in everything if f[0] > limit}
    for gone in sorted(allowed - still):
        print(f'function-length: "{gone}" is listed in scripts/long-functions.txt but no longer over {limit} lines: take it off the list',
              file=sys.stderr)
        over.append(None)
    for f in over:
        if f is None:
            continue
        length, path, line, name = f
        print(f'function-length: {os.path.relpath(path, os.path.join(root, ".."))}:{line}: {name} is {length} lines (limit {limit})',
              file=sys.stderr)
    if over:
        return 1
    print(f'function-length: {len(everything)} functions in Sources/, none over {limit} lines but the {len(allowed)} listed to split')
    return 0


if __name__ == '__main__':
    sys.exit(main())
