#!/usr/bin/env bash
# The part of the desktop smoke test that runs on the Xvfb display (see smoke.sh).
set -euo pipefail
bin=$1 work=$2 out=$3
data=$work/data
passed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
fail() {
  echo "FAILED: $*" >&2
  echo "--- skald stderr ---" >&2
  tail -n 40 "$work/stderr" >&2 || true
  echo "0 passed, 1 failed"
  exit 1
}
wait_for() { # seconds, description, command...
  local limit=$1 what=$2
  shift 2
  for _ in $(seq $((limit * 10))); do
    if "$@" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  fail "$what (waited ${limit}s)"
}

# Two people, seeded through `serve` first, so the window opens on the login picker.
api() { # token method path [json]
  curl -sf -X "$2" -H "Authorization: Bearer $1" ${4:+-H 'Content-Type: application/json' -d "$4"} "$seed_base$3"
}
"$bin" serve --data-dir "$data" --port 0 > "$work/seed.out" 2> "$work/seed.err" &
seed=$!
wait_for 60 "the seeding server's ready line" grep -q '^skald listening on' "$work/seed.out"
seed_line=$(head -n 1 "$work/seed.out")
seed_base=${seed_line#skald listening on }
seed_base=${seed_base%% *}
seed_token=${seed_line##*token=}
admin=$(api "$seed_token" POST /api/setup '{"name":"Ada","password":"otter lantern quietly"}') || fail "setup through the API"
admin_token=$(sed -E 's/.*"token":"([0-9a-f]+)".*/\1/' <<<"$admin")
added=$(api "$admin_token" POST /api/users '{"name":"Bea","role":"member"}') || fail "adding a person through the API"
code=$(sed -E 's/.*"enrolment_code":"([^"]+)".*/\1/' <<<"$added")
api "$seed_token" POST /api/enrol "{\"name\":\"Bea\",\"enrolment_code\":\"$code\",\"password\":\"maple harbour violin\"}" > /dev/null ||
  fail "enrolling the second person"
# A two-page PDF for the viewer check, written by the browser tests' own maker.
repo=$(cd "$(dirname "$0")/../.." && pwd)
node --input-type=module -e "
  import { tinyPdf } from '$repo/web/tests/e2e/pdf.mjs';
  process.stdout.write(tinyPdf(['Café crème', 'second page']));
" > "$work/menu.pdf" || fail "writing the test PDF"
uploaded=$(curl -sf -X POST -H "Authorization: Bearer $admin_token" --data-binary "@$work/menu.pdf" \
  "$seed_base/api/documents?name=menu.pdf") || fail "uploading the PDF through the API"
document=$(sed -E 's/.*"id":"([^"]+)".*/\1/' <<<"$uploaded")
kill -TERM "$seed"
wait "$seed" || fail "the seeding server did not exit cleanly"
ok "seeded two people and Ada's PDF through skald serve"

# The script the window runs after its first load: it logs in as Ada through the picker,
# opens the PDF and reports what the viewer drew (see viewer-probe.js).
quote() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
probe_document=$(quote "$document") probe_password=$(quote "otter lantern quietly") python3 -c '
import os, sys
script = open(sys.argv[1], encoding="utf-8").read()
script = script.replace("__DOCUMENT__", os.environ["probe_document"]).replace("__PASSWORD__", os.environ["probe_password"])
open(sys.argv[2], "w", encoding="utf-8").write(script)
' "$(dirname "$0")/viewer-probe.js" "$work/probe.js"

# A notification server that records what it is asked to show and, as a person would,
# clicks each notification that has snooze buttons, then its "Snooze 1 hour".
FAKE_INVOKE=default,snooze-1h /usr/bin/python3 "$(dirname "$0")/notifications.py" "$work/notifications" > "$work/notifier.out" 2>&1 &
wait_for 10 "the test's notification server" grep -q 'notification server ready' "$work/notifier.out"

started=$(date +%s%N)
SKALD_TEST_SCRIPT=$work/probe.js "$bin" --data-dir "$data" > "$work/stdout" 2> "$work/stderr" &
pid=$!

wait_for 60 "the ready line" grep -q '^skald listening on' "$work/stdout"
line=$(head -n 1 "$work/stdout")
port=$(sed -E 's/.*127\.0\.0\.1:([0-9]+) .*/\1/' <<<"$line")
token=${line##*token=}
base=http://127.0.0.1:$port
ok "the app started its core on 127.0.0.1:$port"

wait_for 60 "the page to render and report it" grep -q 'page reported event=Rendered' "$work/stderr"
rendered=$(date +%s%N)
ok "the page rendered ($(((rendered - started) / 1000000)) ms from exec)"
grep -qE 'request.*method=GET path=/api/health status=200' "$work/stderr" || fail "the page did not reach /api/health with the token"
ok "the page reached /api/health with the launch token"
# The page reports "rendered" once the picker (or setup) is on screen; on a seeded data
# directory it is the picker, which reads the people with the launch token.
grep -qE 'request.*method=GET path=/api/instance status=200' "$work/stderr" || fail "the page did not ask whether setup is needed"
grep -qE 'request.*method=GET path=/api/users status=200' "$work/stderr" || fail "the page did not load the login picker"
ok "the page shows the login picker"

# A second launch hands over to the first and exits; the first keeps serving.
second=0
SKALD_TEST_NAVIGATE_TO= timeout 30 "$bin" --data-dir "$data" > "$work/second.out" 2>&1 || second=$?
((second == 0)) || fail "the second launch exited with $second: $(tail -n 5 "$work/second.out")"
! grep -q '^skald listening' "$work/second.out" || fail "the second launch started a core of its own"
wait_for 10 "the first instance to be told" grep -q 'a second launch: focusing this window' "$work/stderr"
kill -0 "$pid" || fail "the first instance is gone"
ok "a second launch focused the first instead of starting again"

# The navigation hook sent the window elsewhere: refused, and handed to the system opener.
wait_for 20 "a foreign navigation to reach the system opener" grep -qx 'https://example.invalid/elsewhere' "$work/opened"
grep -q 'navigation to another origin handed to the system opener' "$work/stderr" || fail "no log of the refused navigation"
ok "a navigation to another origin was cancelled and handed to the system opener"

# Inside WebKit, as a person would: log in, open the PDF; pdf.js draws page 1 and lays its
# words over it (the engine lacks ReadableStream's async iterator, which our code supplies).
wait_for 90 "the viewer probe's report" grep -q '^https://example.invalid/probe?' "$work/opened"
probe=$(grep -m1 '^https://example.invalid/probe?' "$work/opened")
field() { python3 -c 'import sys, urllib.parse as u; print(u.parse_qs(u.urlsplit(sys.argv[1]).query).get(sys.argv[2], [""])[0])' "$probe" "$1"; }
[[ -z $(field error) ]] || fail "the viewer probe: $(field error)"
dark=$(field dark)
((dark > 50)) || fail "the PDF's page 1 was not drawn in the window ($dark dark pixels)"
[[ $(field words) == *"Café crème"* ]] || fail "the text layer holds \"$(field words)\", not the page's words"
[[ $(field page) == "Page 1 of 2" ]] || fail "the viewer says \"$(field page)\""
ok "the desktop window drew the PDF's page 1 ($dark dark pixels) with its words in the text layer"
[[ $(field microphone) == granted ]] || fail "the microphone was not granted to Skald's page: $(field microphone)"
grep -q 'the page asked for a permission.*kind=Microphone.*allow=true' "$work/stderr" \
  || fail "no log of the permission handler granting the microphone"
ok "the window's permission handler granted the microphone to Skald's own origin"

sleep 1
import -window root "$out/desktop.png"
colours=$(identify -format '%k' "$out/desktop.png")
((colours > 16)) || fail "the screenshot looks blank ($colours colours)"
ok "screenshot saved to $out/desktop.png ($colours colours)"

# Memory at idle: the app and its WebKit helper processes.
pss_kib() {
  local total=0 p
  for p in "$@"; do
    total=$((total + $(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
helpers=$(pgrep -f 'WebKit(Web|Network)Process' || true)
echo "idle PSS: app $(pss_kib "$pid") KiB, with WebKit processes $(pss_kib "$pid" $helpers) KiB" | tee "$out/pss.txt"

# Log in through the API, then lock as the tray would: the session token is refused.
login=$(curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"name":"Ada","password":"otter lantern quietly"}' "$base/api/login") || fail "login through the API"
session=$(sed -E 's/.*"token":"([0-9a-f]+)".*/\1/' <<<"$login")
[[ $(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $session" "$base/api/me") == 200 ]] || fail "the session works"
# A reminder comes as a desktop notification with snooze buttons; a click opens the
# Reminders page, and "Snooze 1 hour" puts it off by an hour.
in3=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
job=$(curl -sf -H "Authorization: Bearer $session" -H 'Content-Type: application/json' \
  -d "{\"kind\":\"reminder\",\"text\":\"Water the ferns\",\"at\":\"$in3\"}" "$base/api/jobs") || fail "making a reminder"
job_id=$(sed -E 's/.*"id":"(job_[0-9a-f]+)".*/\1/' <<<"$job")
wait_for 20 "the reminder's desktop notification" grep -q '"body": "Water the ferns"' "$work/notifications"
grep '"body": "Water the ferns"' "$work/notifications" | grep -q '"snooze-10m", "snooze-1h", "snooze-tomorrow"' ||
  fail "the reminder's notification has no snooze buttons: $(cat "$work/notifications")"
ok "a reminder came as a desktop notification with its snooze buttons"
wait_for 10 "a click on the notification to open the Reminders page" grep -q 'a notification opened the window target=#/reminders' "$work/stderr"
ok "a click on the notification opened the window at the Reminders page"
wait_for 10 "the snooze to be recorded" grep -q 'a reminder was snoozed from its notification' "$work/stderr"
next=$(curl -sf -H "Authorization: Bearer $session" "$base/api/jobs" | sed -E 's/.*"next_run":"([^"]+)".*/\1/')
ahead=$(($(date -d "$next" +%s) - $(date +%s)))
((ahead > 3400 && ahead <= 3610)) || fail "snoozed for an hour, the reminder is due in ${ahead}s ($next), job $job_id"
ok "\"Snooze 1 hour\" on the notification put the reminder off by an hour"

kill -USR2 "$pid"
wait_for 10 "the lock to take effect" test "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $session" "$base/api/me")" = 401
ok "after the tray's Lock the session token is refused"

# Quit: exit 0, and the data directory's lock is released.
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
((status == 0)) || fail "the app exited with $status"
ok "the app quit with exit code 0"
flock -n "$data/skald.lock" true || fail "the data directory is still locked"
ok "the data directory's lock is released"

echo "$passed passed, 0 failed"
