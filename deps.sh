#!/usr/bin/env bash
# Installs what Skald needs on a Debian or Ubuntu machine, skipping what is already there.
#   ./deps.sh build   toolchain and libraries to build Skald
#   ./deps.sh test    the same, plus Debian's Chromium for the browser tests
set -euo pipefail

purpose=${1:-build}
# perl and make build SQLCipher's vendored OpenSSL; libdbus-1-dev lets Skald reach the OS
# keyring (Secret Service) that holds the instance key.
packages=(build-essential pkg-config perl make curl ca-certificates libdbus-1-dev)
# The desktop window and tray (Tauri 2 on WebKitGTK).
packages+=(libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev)
# The built-in local model: llama.cpp is compiled from source with CMake, and its Rust
# bindings are generated with libclang.
packages+=(cmake clang libclang-dev)
# Reading documents: poppler's pdftotext and pdftoppm for PDFs its own reader refuses and
# for scanned pages, tesseract for the words in scans and pictures (OCR). Skald works
# without them and says so on the document.
packages+=(poppler-utils tesseract-ocr tesseract-ocr-eng)
# Reading answers aloud: espeak-ng gives Piper's voices their phonemes, and reads itself
# when no voice is installed; python3 takes ONNX Runtime's library out of its wheel.
packages+=(espeak-ng python3 python3-pip)
if [[ $purpose == test ]]; then
  # Chromium for the browser tests; a private D-Bus session with GNOME Keyring for the
  # keyring tests; a virtual display, a screenshot tool and flock for the desktop smoke test;
  # iproute2 for the network namespace of the privacy-tier test; pip fetches the small model
  # the built-in provider's tests load, and venv holds the MCP servers tests talk to.
  packages+=(chromium dbus-daemon gnome-keyring xvfb xauth dbus-x11 imagemagick x11-apps util-linux iproute2)
  packages+=(python3 python3-pip python3-venv)
  # The desktop smoke test's stand-in notification server speaks D-Bus through these.
  packages+=(python3-dbus python3-gi)
  # qemu's user-mode emulator shows Skald an older CPU's features (the built-in model's
  # baseline test); binutils' objdump and nm read the binary (tests/portable.py).
  packages+=(qemu-user binutils)
fi

missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo=()
  [[ $(id -u) == 0 ]] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  echo "deps: Rust is missing. Install it with rustup (https://rustup.rs), then run this again." >&2
  exit 1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if ((node_major < 20)); then
  echo "deps: Node.js 20 or newer is needed to build the web UI (found: $(node --version 2>/dev/null || echo none))." >&2
  exit 1
fi
