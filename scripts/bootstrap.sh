#!/usr/bin/env bash
# Installs the system packages BubbleKit needs on Debian, and nothing when all are present.
# Called by `make demo` (with `demo`: only what building and rendering need), `make test`,
# `make serve` and `make bench`; safe to run any number of times.
set -euo pipefail

# C libraries the renderer links (found with pkg-config), gdk-pixbuf's WebP and HEIC loaders
# (stickers, iPhone photos), the fonts the project's fontconfig file
# pins (Latin, Arabic/Hebrew, colour emoji, CJK), SQLite and zlib for the importers (iMessage chat.db,
# WhatsApp .zip), ICU (the fast text engine's line breaker), and tools and data the tests call
# (LineBreakTest.txt from unicode-data, pdftotext, pdftoppm, pango-view, headless chromium and its WebDriver, qpdf,
# gdb for the stacks of a test or command that hangs, Node.js and TypeScript's checker for the
# web app's modules: `node --check`, `tsc`, `node --test`, and pip to fetch axe-core for the
# accessibility tests: scripts/fetch-axe.sh),
# and PostgreSQL 15 with its contrib extensions (unaccent, pg_trgm), which the tests start themselves.
# What building and rendering need (`scripts/bootstrap.sh demo` stops here: `make demo`).
PACKAGES=(
  pkg-config
  libcairo2-dev
  libpango1.0-dev
  libharfbuzz-dev
  libfontconfig-dev
  libpng-dev
  libgdk-pixbuf-2.0-dev
  webp-pixbuf-loader
  heif-gdk-pixbuf
  libicu-dev
  libsqlite3-dev
  zlib1g-dev
  libxml2-dev
  fonts-liberation2
  fonts-dejavu-core
  fonts-noto-color-emoji
  fonts-noto-cjk
)
# What the tests and the server's tests call as well (`make test`, `make bench`, `make serve`).
if [ "${1:-all}" != "demo" ]; then
  PACKAGES+=(
    poppler-utils
    qpdf
    pango1.0-tools
    chromium
    chromium-driver
    unicode-data
    procps
    gdb
    nodejs
    node-typescript
    python3-pip
    postgresql
    postgresql-contrib
  )
fi
# Extra packages a caller asks for: BOOTSTRAP_EXTRA="pkg another-pkg".
if [ -n "${BOOTSTRAP_EXTRA:-}" ]; then
  read -r -a extra <<<"$BOOTSTRAP_EXTRA"
  PACKAGES+=("${extra[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$status" = "installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2; exit 1
  fi
fi

echo "bootstrap: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
