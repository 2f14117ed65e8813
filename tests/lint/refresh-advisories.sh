#!/usr/bin/env bash
# Cuts a dated snapshot of the RustSec advisory database, the one tests/lint/dependencies.sh
# audits Cargo.lock against (CI machines cannot reach the database's home, so the audit
# reads a copy that is refreshed by hand and says how old it is).
#
#   tests/lint/refresh-advisories.sh SOURCE DEST [--only-locked]
#
# SOURCE is a full advisory-db repository: a clone's work tree or a bare git directory. Its
# HEAD commit is what is copied (the committed advisories, not a work tree's edits).
# DEST is emptied and gets crates/<crate>/RUSTSEC-*.md, the database's LICENSE.txt (CC0),
# and STAMP: the commit, its date, the day of the refresh and what was kept.
#
# --only-locked keeps only the advisories of crates named in this checkout's Cargo.lock,
# about a tenth of the database. That is enough, because an advisory names one crate and
# cannot match a crate the lock does not hold; but it leaves every crate added later
# unaudited, so the snapshot then records the names it covers (covered-crates.txt) and the
# lint fails once Cargo.lock names a crate outside them: adding a dependency then means
# running this again. Without the flag the whole crates/ folder is kept (about 5 MB), and
# a new dependency is audited at once.
set -euo pipefail
cd "$(dirname "$0")/../.."

if (($# < 2)); then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
source=$1 dest=$2 only_locked=${3:-}
[[ -z $only_locked || $only_locked == --only-locked ]] || { echo "unknown option: $only_locked" >&2; exit 2; }

if git --git-dir="$source" rev-parse --verify -q HEAD >/dev/null 2>&1 &&
  [[ $(git --git-dir="$source" rev-parse --is-bare-repository) == true ]]; then
  git=(git --git-dir="$source")
else
  git=(git -C "$source")
fi
commit=$("${git[@]}" rev-parse --verify HEAD)
date=$("${git[@]}" show -s --format=%cI HEAD)
"${git[@]}" cat-file -e HEAD:crates || { echo "$source: HEAD has no crates/ folder; is it advisory-db?" >&2; exit 1; }

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
"${git[@]}" archive HEAD crates LICENSE.txt | tar -x -C "$staging"

filter=all
if [[ $only_locked ]]; then
  filter=Cargo.lock
  # Every package name in the lock, the workspace's own included (harmless: none has advisories).
  sed -n 's/^name = "\(.*\)"$/\1/p' Cargo.lock | sort -u >"$staging/covered-crates.txt"
  for dir in "$staging"/crates/*/; do
    grep -qxF "$(basename "$dir")" "$staging/covered-crates.txt" || rm -rf "$dir"
  done
fi

cat >"$staging/STAMP" <<EOF
# A snapshot of the RustSec advisory database (CC0-1.0, see LICENSE.txt), cut by
# tests/lint/refresh-advisories.sh; tests/lint/dependencies.sh audits Cargo.lock against it.
commit=$commit
date=$date
refreshed=$(date -u +%Y-%m-%d)
filter=$filter
EOF

rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
cp -r "$staging" "$dest"
chmod -R a+rX "$dest"
echo "advisory snapshot: $(find "$dest/crates" -name '*.md' | wc -l) advisories for $(ls "$dest/crates" | wc -l) crates, commit ${commit:0:12} of ${date%%T*}, in $dest"
