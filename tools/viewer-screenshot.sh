#!/usr/bin/env bash
# The README's picture of the viewer's Session page: the screenshot the live viewer test takes
# in headless Chromium (tests/viewer.rs, sessions_appear_live_and_the_slider_replays_the_state),
# of the session that test builds, copied to docs/viewer-session.png.
#   tools/viewer-screenshot.sh      needs /usr/bin/chromium (apt-get install -y chromium)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x /usr/bin/chromium ] || { echo "viewer-screenshot: /usr/bin/chromium is missing (apt-get install -y chromium)" >&2; exit 2; }
shot=target/viewer-screenshots/session.png
rm -f "$shot"
cargo test --quiet --test main --features viewer viewer::sessions_appear_live_and_the_slider_replays_the_state
[ -s "$shot" ] || { echo "viewer-screenshot: the test left no $shot" >&2; exit 1; }
mkdir -p docs
cp "$shot" docs/viewer-session.png
echo "docs/viewer-session.png: $(wc -c < docs/viewer-session.png) bytes"
