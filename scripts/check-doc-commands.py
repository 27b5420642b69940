#!/usr/bin/env python3
"""The docs' commands are the tool's commands (issue 61).

Every fenced block of README.md and docs/*.md that holds a `bubbles` command is one of:

- ```sh — run: each line, in order, by bash in a scratch folder that holds the bundled samples
  and test fixtures under the names the docs use (the "world" below), with the built `bubbles`
  first on PATH, a store of its own (BUBBLES_DB), HOME inside the scratch folder and the
  project's pinned fonts. A line that exits non-zero fails the check, with its stderr.
- ```sh example — needs the reader's own files, a server left running or a machine set-up
  (`make`, `serve`, `curl`): not run, but each `bubbles` line's command and every `--option`
  it names must exist (checked against `bubbles COMMAND --help`).
- ```text — a synopsis (`bubbles render INPUT [--width PT] …`): its commands and options are
  checked as examples are.

An inline code span `bubbles …` in prose is checked as an example is.

A block with a `bubbles` line and another info string (or none) is an error: mark it. Each
file runs in a scratch folder of its own, so a file's commands may build on each other
(import, then list).

    scripts/check-doc-commands.py [--bubbles PATH] [FILE.md …]

Exit 1 naming the file and line of each command that failed or names what the tool lacks.
"""
import glob, os, re, shlex, shutil, subprocess, sys, tempfile, zipfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = sys.argv[1:]
bubbles = None
if "--bubbles" in args:
    i = args.index("--bubbles")
    bubbles = os.path.abspath(args[i + 1])
    del args[i:i + 2]
if bubbles is None:
    bubbles = subprocess.run(["swift", "build", "--show-bin-path"], cwd=root, capture_output=True, text=True).stdout.strip() + "/bubbles"
if not os.access(bubbles, os.X_OK):
    sys.exit(f"check-doc-commands: no built bubbles at {bubbles} (swift build first)")
files = args or ["README.md"] + sorted(glob.glob("docs/*.md"))
fixtures = os.path.join(root, "Tests/BubbleImportTests/Fixtures")
samples = os.path.join(root, "Sources/BubbleCore/Samples")

# The files the docs' commands name, made from the samples and the fixtures.
WORLD = {
    "chat.json": f"{samples}/demo.json",
    "features.json": f"{samples}/features.json",
    "beach.jpg": f"{samples}/sample-portrait.jpg",
    "sms-backup.xml": f"{fixtures}/sms/sms-backup.xml",
    "result.json": f"{fixtures}/telegram-account/result.json",
    "chat.db": f"{fixtures}/imessage/chat.db",
    "Attachments": f"{fixtures}/imessage/Attachments",
    "msgstore.db": f"{fixtures}/appdb/whatsapp-new/msgstore.db",
    "wa.db": f"{fixtures}/appdb/whatsapp-new/wa.db",
    "msgstore.db.crypt15": f"{fixtures}/appdb/whatsapp-new/msgstore.db.crypt15",
    "msgstore.db.crypt14": f"{fixtures}/appdb/whatsapp-new/msgstore.db.crypt14",
    "key": f"{fixtures}/appdb/whatsapp-new/key",
    "encrypted_backup.key": f"{fixtures}/appdb/whatsapp-new/encrypted_backup.key",
    "Media": f"{fixtures}/appdb/whatsapp-new/Media",
    "Signal": f"{fixtures}/appdb/signal",
    "discord": f"{fixtures}/discord",
    "contacts.vcf": f"{fixtures}/contacts/iphone.vcf",
    "android.vcf": f"{fixtures}/contacts/android.vcf",
    "google.csv": f"{fixtures}/contacts/google.csv",
    "facebook": f"{fixtures}/meta-facebook",
    "instagram": f"{fixtures}/meta-instagram",
}
# A WhatsApp "Export chat" .zip, as the phone makes it.
ZIPS = {"WhatsApp Chat with Ann.zip": f"{fixtures}/whatsapp-android-us"}


def make_world(folder):
    for name, source in WORLD.items():
        target = os.path.join(folder, name)
        (shutil.copytree if os.path.isdir(source) else shutil.copy)(source, target)
    for name, source in ZIPS.items():
        with zipfile.ZipFile(os.path.join(folder, name), "w") as z:
            for f in sorted(os.listdir(source)):
                z.write(os.path.join(source, f), f)
    os.makedirs(os.path.join(folder, "home/.config"))
    # Signal Desktop's profile where Linux keeps it.
    shutil.copytree(WORLD["Signal"], os.path.join(folder, "home/.config/Signal"))


def blocks(path):
    """(line number of the fence, info words, [(line number, command line)]) per fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, info, start, body = m.group(1), m.group(2).split(), i + 1, []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            body.append((i + 1, lines[i][len(indent):] if lines[i].startswith(indent) else lines[i]))
            i += 1
        i += 1
        # Continuation lines joined; the number of a command is its first line's.
        commands, pending, at = [], "", 0
        for n, text in body:
            if not pending:
                at = n
            if text.rstrip().endswith("\\"):
                pending += text.rstrip()[:-1] + " "
                continue
            commands.append((at, pending + text))
            pending = ""
        found.append((start, info, commands))
    return found


def bubbles_parts(line):
    """The `bubbles …` invocations of a shell line (after `|`, `&&`, `;`, env assignments), as token lists."""
    code = line.split(" #")[0] if not line.lstrip().startswith("#") else ""
    parts = []
    for segment in re.split(r"\|\||&&|\||;", code):
        try:
            tokens = shlex.split(segment)
        except ValueError:
            tokens = segment.split()
        while tokens and re.match(r"^[A-Z_][A-Z0-9_]*=", tokens[0]):
            tokens = tokens[1:]
        if tokens and tokens[0] in ("bubbles", "$") and (tokens[0] == "bubbles" or tokens[1:2] == ["bubbles"]):
            parts.append(tokens[tokens.index("bubbles") + 1:])
    return parts


helps = {}


def help_text(path):
    key = " ".join(path)
    if key not in helps:
        r = subprocess.run([bubbles] + path + ["--help"], capture_output=True, text=True)
        helps[key] = r.stdout if r.returncode == 0 else None
    return helps[key]


def command_path(tokens):
    """The longest run of leading tokens that `bubbles … --help` knows (`db copy`, `users add`)."""
    path = []
    for t in tokens:
        if t.startswith("-") or not re.match(r"^[a-z][a-z0-9-]*(\|[a-z][a-z0-9-]*)*$", t):
            break
        names = t.split("|")
        if not all(help_text(path + [n]) is not None and help_text(path + [n]) != help_text(path) for n in names):
            break
        path.append(t)
    return path


def check_options(tokens):
    """What the tool lacks: unknown commands, options none of the commands named has."""
    if tokens[:1] == ["help"]:
        # `bubbles help COMMAND`: ArgumentParser's own; the command named must exist.
        rest = [t for t in tokens[1:] if not t.isupper()]   # COMMAND is a placeholder
        return [] if not rest or command_path(rest) else [f"`bubbles help {' '.join(rest)}`: no such command"]
    path = command_path(tokens)
    if not path and tokens and not tokens[0].startswith("-"):
        return [f"`bubbles {tokens[0]}` is not a command"]
    variants = [[]]
    for t in path:
        variants = [v + [n] for v in variants for n in t.split("|")]
    def with_default(v):
        # A command group runs its default subcommand (`bubbles people` is `people list`).
        text = help_text(v) or ""
        default = re.search(r"^\s+([a-z][a-z0-9-]*) \(default\)", text, re.M)
        return text + (help_text(v + [default.group(1)]) or "" if default else "")
    texts = [with_default(v) for v in variants]
    problems = []
    for t in tokens[len(path):]:
        for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", t):
            if option in ("--help", "--version"):
                continue
            if not all(re.search(re.escape(option) + r"(?![\w-])", text) for text in texts):
                problems.append(f"`bubbles {' '.join(path)}` has no {option}")
    return problems


def inline_commands(path):
    """(line number, command) of each inline code span `bubbles …` outside fenced blocks: named in
    prose, checked as examples are (its command and options exist), not run."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, fenced = [], False
    for n, line in enumerate(lines, 1):
        if re.match(r"^\s*```", line):
            fenced = not fenced
            continue
        if not fenced:
            found += [(n, m.group(1)) for m in re.finditer(r"`(bubbles [^`]+)`", line)]
    return found


problems, ran, checked = [], 0, 0
env = dict(os.environ)
env["FONTCONFIG_FILE"] = os.path.join(root, "Sources/BubbleText/Fonts/fonts.conf")
env["PATH"] = os.path.dirname(bubbles) + os.pathsep + env.get("PATH", "")
env.pop("BUBBLES_MEDIA", None)
env["TZ"] = "UTC"
# The passwords the docs' `users` commands pipe in.
env.update(PW="correct horse 1", ANN_PASSWORD="ann's password 1", BEN_PASSWORD="ben's password 1", NEW_PASSWORD="ben's new one 2")
for path in files:
    relative = os.path.relpath(os.path.join(root, path), root)
    for n, line in inline_commands(os.path.join(root, path)):
        for tokens in bubbles_parts(line):
            checked += 1
            problems += [f"{relative}:{n}: {p} (in `{line}`)" for p in check_options(tokens)]
    scratch = None
    try:
        for start, info, commands in blocks(os.path.join(root, path)):
            has_bubbles = any(bubbles_parts(c) for _, c in commands)
            if not has_bubbles:
                continue
            kind = " ".join(info)
            if kind not in ("sh", "sh example", "text"):
                problems.append(f"{relative}:{start}: a block of `bubbles` commands marked ```{kind}; expected ```sh (run by this check), "
                                "```sh example (needs your own files or a server) or ```text (a synopsis)")
                continue
            for n, line in commands:
                for tokens in bubbles_parts(line):
                    checked += 1
                    problems += [f"{relative}:{n}: {p}" for p in check_options(tokens)]
            if kind != "sh":
                continue
            if scratch is None:
                scratch = tempfile.mkdtemp(prefix="bk-doc-commands-")
                make_world(scratch)
                env["HOME"] = os.path.join(scratch, "home")
                env["BUBBLES_DB"] = os.path.join(scratch, "store.sqlite")
            for n, line in commands:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                ran += 1
                try:
                    r = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=scratch, env=env, capture_output=True, text=True, timeout=300)
                    if r.returncode != 0:
                        tail = " | ".join(r.stderr.strip().splitlines()[-3:])
                        problems.append(f"{relative}:{n}: `{line.strip()}` exited {r.returncode}: {tail}")
                except subprocess.TimeoutExpired:
                    problems.append(f"{relative}:{n}: `{line.strip()}` still running after 300 s")
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
for p in problems:
    print(p, file=sys.stderr)
print(f"check-doc-commands: {ran} commands run, {checked} `bubbles` commands checked against the tool in {len(files)} files; "
      f"{len(problems)} problem{'' if len(problems) == 1 else 's'}")
sys.exit(1 if problems else 0)
