#!/usr/bin/env bash
# Audits the dependencies: known advisories (vulnerabilities, unsound or unmaintained
# crates) against a dated snapshot of the RustSec database, licences against the allowed
# list in deny.toml, both with cargo-deny, offline; and checks that no crate of the resolved
# graph turns on Tauri's devtools feature (tests/lint/config.py reads the manifests).
#
#   tests/lint/dependencies.sh
#
# The snapshot is the one kept in this repository (tests/lint/advisory-db), unless
# $SKALD_ADVISORY_DB names another. tests/lint/refresh-advisories.sh cuts one;
# tests/lint/README.md says how. Without one, the advisories are skipped, loudly, and
# licences are still checked.
#
# cargo-deny is installed once per machine, pinned, under ~/.cache/skald/tools.
set -euo pipefail
cd "$(dirname "$0")/../.."

DENY_VERSION=0.20.2
tools=$HOME/.cache/skald/tools
deny=$tools/bin/cargo-deny
if [[ ! -x $deny || $("$deny" --version 2>/dev/null) != "cargo-deny $DENY_VERSION" ]]; then
  echo "installing cargo-deny $DENY_VERSION into $tools (once per machine)"
  # Its own build folder (not the shared target dir), and no fat LTO: the tool runs for
  # seconds, while a one-codegen-unit LTO build would take minutes more on two cores.
  env -u CARGO_TARGET_DIR CARGO_PROFILE_RELEASE_LTO=off CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install --locked --quiet --root "$tools" "cargo-deny@$DENY_VERSION"
fi

# cargo-deny and cargo metadata run offline below, so every crate of the lock is fetched
# first (the build stages after this one need them anyway).
cargo fetch --locked --quiet --target x86_64-unknown-linux-gnu

# No crate of the resolved graph may enable Tauri's devtools feature.
cargo metadata --locked --offline --format-version 1 --all-features --filter-platform x86_64-unknown-linux-gnu |
  python3 tests/lint/config.py --metadata

# The advisory snapshot.
snapshot=${SKALD_ADVISORY_DB:-}
if [[ -z $snapshot && -d tests/lint/advisory-db ]]; then
  snapshot=$PWD/tests/lint/advisory-db
fi
checks=(licenses)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z $snapshot ]]; then
  echo "dependency lint: ADVISORIES NOT CHECKED: no advisory snapshot (tests/lint/advisory-db is missing and SKALD_ADVISORY_DB is not set; see tests/lint/README.md)" >&2
else
  [[ -d $snapshot/crates && -f $snapshot/STAMP ]] || {
    echo "dependency lint: $snapshot is not an advisory snapshot (no crates/ or STAMP); cut one with tests/lint/refresh-advisories.sh" >&2
    exit 1
  }
  stamp() { sed -n "s/^$1=//p" "$snapshot/STAMP"; }
  date=$(stamp date)
  age=$((($(date +%s) - $(date -d "$date" +%s)) / 86400))
  echo "dependency lint: advisories as of ${date%%T*} (RustSec commit $(stamp commit | cut -c1-12), $age days old, $(stamp filter))"
  if ((age > 90)); then
    echo "dependency lint: warning: the advisory snapshot is $age days old; refresh it (tests/lint/refresh-advisories.sh)" >&2
  fi
  if [[ $(stamp filter) == Cargo.lock ]]; then
    # A snapshot cut for the crates of an older lock cannot speak for crates added since.
    uncovered=$(sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.lock | sort -u | comm -23 - <(sort -u "$snapshot/covered-crates.txt"))
    if [[ $uncovered ]]; then
      echo "dependency lint: the advisory snapshot was cut for an older Cargo.lock; these crates are not covered:" $uncovered >&2
      echo "dependency lint: re-run tests/lint/refresh-advisories.sh (with --only-locked) on a full advisory-db" >&2
      exit 1
    fi
  fi
  # cargo-deny opens the database as a git clone (it reads the HEAD commit's date), in a
  # folder named for the database's URL: a throwaway repository of the snapshot serves.
  # The name is the URL's last segment and its XXH64 (cargo-deny's url_to_db_path, for
  # deny.toml's default db-urls); `-L debug` shows the path it looks for if this changes.
  db="$work/advisory-dbs/advisory-db-3157b0e258782691"
  mkdir -p "$db"
  cp -r "$snapshot/crates" "$db/"
  git -C "$db" init -q
  git -C "$db" add -A
  GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
    git -C "$db" -c user.name=skald-lint -c user.email=lint@skald.invalid -c commit.gpgsign=false \
    commit -q -m "RustSec advisory-db $(stamp commit)"
  export SKALD_ADVISORY_DB_ROOT="$work/advisory-dbs"
  checks=(advisories licenses)
fi

# deny.toml reads its db-path from SKALD_ADVISORY_DB_ROOT.
export SKALD_ADVISORY_DB_ROOT=${SKALD_ADVISORY_DB_ROOT:-$work/advisory-dbs}
"$deny" --color never --offline --locked --workspace check "${checks[@]}"
echo "dependency lint: ${checks[*]} pass"
