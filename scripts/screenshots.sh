#!/usr/bin/env bash
# The documentation's screenshots (docs/images/*.png): one workflow with all five nodes in the real n8n
# editor (2.40.7 unless N8N_VERSION says otherwise), in headless Chromium, through test/ui/screenshots.ts.
# Needs what the editor test needs: Debian's chromium and the n8n of scripts/n8n.sh (both installed here
# when missing). Runs on ports of its own (SCREENSHOTS_N8N_PORT, default 5780, and the next two).
#   bash scripts/screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v chromium >/dev/null || bash scripts/setup.sh apt
bash scripts/n8n.sh install >/dev/null
node --import tsx test/ui/screenshots.ts
