#!/usr/bin/env python3
"""Every public symbol of the given modules has documentation (issue 46).

Reads the symbol graphs `swift package dump-symbol-graph` writes (or the DocC plugin's), and
lists each public symbol without a doc comment: its module, kind and path. A symbol that
implements a protocol requirement inherits that requirement's documentation (DocC shows it), and
what the compiler synthesises (Equatable's ==, Codable's init(from:)) needs none.

    scripts/check-docs.py SYMBOLGRAPH_DIR MODULE... [--list FILE]

Exit 1 when a symbol is undocumented; --list writes every public symbol (module, kind, path),
sorted, to FILE (the list the API review compares).
"""
import glob, json, os, sys

args = sys.argv[1:]
listing = None
if "--list" in args:
    i = args.index("--list"); listing = args[i + 1]; del args[i:i + 2]
if len(args) < 2:
    sys.exit(__doc__)
folder, modules = args[0], args[1:]
symbols, missing = set(), []
for module in modules:
    files = glob.glob(os.path.join(folder, module + ".symbols.json")) + glob.glob(os.path.join(folder, module + "@*.symbols.json"))
    if not files:
        sys.exit(f"check-docs: no symbol graph for {module} in {folder}")
    for path in files:
        graph = json.load(open(path))
        inherits = {r["source"] for r in graph.get("relationships", []) if r.get("sourceOrigin")}
        for s in graph["symbols"]:
            if s.get("accessLevel") not in ("public", "open"):
                continue
            precise = s["identifier"]["precise"]
            if "::SYNTHESIZED::" in precise:
                continue
            name = ".".join(s["pathComponents"])
            kind = s["kind"]["identifier"].removeprefix("swift.")
            symbols.add((module, kind, name))
            if not s.get("docComment") and precise not in inherits:
                loc = s.get("location", {})
                where = loc.get("uri", "").replace("file://", "")
                where = os.path.relpath(where) if where else "?"
                line = loc.get("position", {}).get("line", -1) + 1
                missing.append(f"{where}:{line}: {module} {kind} {name} has no documentation")
if listing:
    with open(listing, "w") as f:
        for m, k, n in sorted(symbols):
            f.write(f"{m}\t{k}\t{n}\n")
for m in sorted(set(missing)):
    print(m)
print(f"check-docs: {len(symbols)} public symbols in {', '.join(modules)}; {len(set(missing))} without documentation",
      file=sys.stderr)
sys.exit(1 if missing else 0)
