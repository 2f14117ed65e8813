#!/usr/bin/env python3
"""The voice benchmark's measurements (bench/voice.sh builds and fetches, then runs this).

Each figure is set against a baseline measured in the same invocation, the runs of the
things compared interleaved (their order rotating each round), since this machine is
shared: absolute seconds move with the load, ratios much less.

1. Transcription: Skald's `skald-voice transcribe` against whisper.cpp's own whisper-cli
   on the same ggml file (Whisper tiny.en, converted by Skald from PyPI's wheel through
   POST /api/voice/models), the same samples and the same decoding settings; and the
   same audio through a running `skald serve` (POST /api/voice/transcriptions).
2. Speech: `skald-voice speak` against Piper's own CLI (PyPI piper-tts) on the same voice
   and text, both on ONNX Runtime 1.31.1; Piper with its voice loaded once, and Skald's
   HTTP route, beside them.
3. A 2,000-word answer read aloud: the page's way (web/src/audio/speaker.ts: a request
   per sentence, fetched ahead) against the whole answer in one request.

Progress goes to stderr, the report (Markdown) to stdout. Nothing here is Skald's code:
the server is driven over HTTP as a script would, as the tests do.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import wave
from pathlib import Path

PASSWORD = "otter lantern quietly"

# ~10 s and ~30 s of English as espeak-ng speaks it at 140 words a minute.
PASSAGE_10 = (
    "Please add milk, bread and eggs to the shopping list, and remind me to call the dentist "
    "about my appointment next Tuesday morning at half past nine."
)
PASSAGE_30 = (
    "This weekend we are planning a small picnic in the park near the river. I will bring "
    "sandwiches, a bowl of fresh fruit and two bottles of lemonade. Could you check the weather "
    "forecast for Saturday afternoon, and tell me whether we should pack umbrellas? If it rains, "
    "we can move everything to the library's reading room, which opens at ten in the morning. "
    "Please also ask your brother whether he would like to join us, and remind him to bring "
    "the folding chairs and the blue blanket."
)

# What is read aloud in part 2: one sentence (the test suite's), and a paragraph.
SPEECH_SENTENCE = "The library opens early on Saturday, and the bakery closes before dinner."
SPEECH_PARAGRAPH = (
    "Thank you for asking about the garden. The tomatoes need water every morning while the "
    "weather stays this warm. Pick the beans before they grow too long, or they turn tough. "
    "The roses by the fence should be cut back in early spring, just above a healthy bud. "
    "If you see small holes in the cabbage leaves, look under them for caterpillars."
)

# The 2,000-word answer of part 3: Markdown as a model writes it, headings and lists
# included, which the page turns into sentences (web/src/audio/speakable.ts).
ANSWER_SENTENCES = [
    "Planning a week of meals for a family is easier when you start from what you already have.",
    "Look through the fridge and the cupboards first, and write down anything that needs to be used soon.",
    "Fresh vegetables, bread and dairy usually come first, while rice, pasta and tins can wait.",
    "Then pick two or three simple dinners that everyone likes, so the week has a steady base.",
    "A soup, a pasta bake and a tray of roasted vegetables are good places to begin.",
    "On busy evenings, a meal that takes twenty minutes is worth more than a perfect recipe.",
    "Cooking a double batch on Sunday gives you lunches for Monday and Tuesday without extra work.",
    "Keep a short list on the fridge door, and add to it whenever something runs out.",
    "When you shop, follow the list, but leave room for fruit that is in season and cheap.",
    "Children are more likely to eat a dish they helped to choose or to prepare.",
    "Let them wash the vegetables, stir the sauce or set the table while you cook.",
    "If someone has an allergy, write it at the top of the plan so nobody forgets.",
    "Leftovers can become a new meal: yesterday's rice makes a quick fried rice with an egg.",
    "Frozen peas, spinach and berries are as healthy as fresh ones, and they keep for months.",
    "Try to have one evening a week with no plan at all, for whatever the day brings.",
    "A simple breakfast of oats, yogurt and fruit keeps everyone going until lunch.",
    "Water is the best drink with meals, and a jug on the table helps people remember it.",
    "Save the recipes that worked in one place, so next week's plan takes even less time.",
    "Ask each person for one favourite dish, and make sure it appears at least once a month.",
    "Finally, be kind to yourself: a plan is there to help you, not to judge you.",
]
ANSWER_HEADINGS = ["Start with what you have", "Choose a few easy dinners", "Shop and cook ahead",
                   "Bring everyone in", "Keep it going"]


def log(*parts: object) -> None:
    print(*parts, file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values)


def p95(values: list[float]) -> float:
    """The 95th percentile, nearest rank."""
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]


def words(text: str) -> list[str]:
    return [w.lower() for w in re.split(r"[^\w']+", text) if w]


def words_right(reference: str, heard: str) -> float:
    """The share of `reference`'s words `heard` has, in order (their longest common run)."""
    a, b = words(reference), words(heard)
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[len(a)][len(b)] / max(1, len(a))


def wav_seconds(data: bytes) -> float:
    """How long a 16-bit PCM WAV file is, from its header and data chunk."""
    if data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a WAV file")
    pos, rate, channels, bits = 12, 0, 1, 16
    while pos + 8 <= len(data):
        chunk, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        if chunk == b"fmt ":
            channels, rate = struct.unpack("<HI", data[pos + 10:pos + 16])
            bits = struct.unpack("<H", data[pos + 22:pos + 24])[0]
        elif chunk == b"data":
            size = min(size, len(data) - pos - 8)
            return size / (rate * channels * bits // 8)
        pos += 8 + size + (size & 1)
    raise ValueError("a WAV file without data")


def timed(argv: list[str], stdin: bytes | None = None) -> tuple[float, bytes]:
    """Runs `argv` to its end: the wall-clock seconds, from start to exit, and its stdout."""
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited {done.returncode}: {done.stderr.decode(errors='replace')[-800:]}")
    return seconds, done.stdout


class Server:
    """`skald serve` on 127.0.0.1 with a data directory and home of its own."""

    def __init__(self, skald: Path, root: Path, import_dirs: list[Path]) -> None:
        self.root = root
        env = {k: v for k, v in os.environ.items() if not k.startswith("SKALD_")}
        for name in ["home", "xdg-data", "xdg-config", "xdg-cache", "xdg-runtime"]:
            (root / name).mkdir(mode=0o700, parents=True, exist_ok=True)
        env.update(
            HOME=str(root / "home"),
            XDG_DATA_HOME=str(root / "xdg-data"),
            XDG_CONFIG_HOME=str(root / "xdg-config"),
            XDG_CACHE_HOME=str(root / "xdg-cache"),
            XDG_RUNTIME_DIR=str(root / "xdg-runtime"),
            SKALD_IMPORT_DIRS=os.pathsep.join(str(d) for d in import_dirs),
            SKALD_AUTO_TITLES="off",
        )
        self.data = root / "data"
        self.stderr = open(root / "server.log", "wb")
        self.proc = subprocess.Popen(
            [str(skald), "serve", "--data-dir", str(self.data), "--port", "0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr, env=env,
        )
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline().decode() if ready else ""
        found = re.match(r"skald listening on http://127\.0\.0\.1:(\d+) token=(\S+)", line)
        if not found:
            self.stop()
            raise RuntimeError(f"skald serve did not start: {line!r}; see {root / 'server.log'}")
        self.port, self.launch_token = int(found[1]), found[2]
        # Whatever else it writes to stdout is read, so it never blocks on a full pipe.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()

    def request(self, method: str, path: str, token: str, body: bytes | None = None,
                content_type: str = "application/json") -> tuple[int, dict[str, str], bytes, float, float]:
        """One request on a fresh connection: status, headers, body, and the seconds from
        sending it to its first body byte and to its last."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=900)
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = content_type
        start = time.perf_counter()
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        first = response.read(1)
        first_at = time.perf_counter() - start
        rest = response.read()
        total = time.perf_counter() - start
        conn.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, first + rest, first_at, total

    def json(self, method: str, path: str, token: str, body: object | None = None) -> tuple[int, object]:
        data = None if body is None else json.dumps(body).encode()
        status, _, answer, _, _ = self.request(method, path, token, data)
        return status, json.loads(answer) if answer else None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


def rounds(names: list[str], runs: int, measure, warm_up: bool = True) -> dict[str, list]:
    """`runs` rounds of `measure(name)` for each name, the order rotating each round,
    after one warm-up round that is not counted (the files in the page cache)."""
    results: dict[str, list] = {name: [] for name in names}
    first = 0 if warm_up else 1
    for round_ in range(first, runs + 1):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            value = measure(name)
            if round_ > 0:
                results[name].append(value)
        log(f"    round {round_}/{runs}" + (" (warm-up)" if round_ == 0 else ""))
    return results


# --- 1. transcription -------------------------------------------------------------------

def spoken_audio(work: Path, name: str, text: str) -> tuple[Path, bytes, float]:
    """`text` spoken by espeak-ng, resampled by sox to 16 kHz mono 16-bit (no dither): the
    WAV file, the same samples as whisper's f32 little-endian, and the length in seconds."""
    raw = work / f"{name}-espeak.wav"
    wav16 = work / f"{name}-16k.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-s", "140", "-w", str(raw), text], check=True)
    subprocess.run(["sox", "-D", str(raw), "-r", "16000", "-c", "1", "-b", "16", str(wav16)], check=True)
    with wave.open(str(wav16)) as w:
        frames = w.readframes(w.getnframes())
        seconds = w.getnframes() / w.getframerate()
    samples = struct.unpack(f"<{len(frames) // 2}h", frames)
    f32 = struct.pack(f"<{len(samples)}f", *(s / 32768.0 for s in samples))
    return wav16, f32, seconds


def cli_text(out: bytes) -> str:
    lines = out.decode(errors="replace").splitlines()
    return " ".join(re.sub(r"^\[[^\]]*\]\s*", "", line).strip() for line in lines).strip()


def transcription(args, server: Server, token: str, model: Path, work: Path) -> list[str]:
    threads = str(args.threads)
    same = ["-m", str(model), "-l", "en", "-t", threads, "-bs", "5", "-bo", "1", "-sns", "-np"]
    engines = {
        "whisper-cli, Skald's settings (baseline)": "cli-nfa",
        "skald-voice transcribe (Skald's engine)": "skald",
        "whisper-cli, flash attention on (its default)": "cli-fa",
        "POST /api/voice/transcriptions (skald serve)": "http",
    }
    rows = ["| audio | run by | median s | min–max s | RTF | × baseline | × baseline, fastest runs | words right (worst run) |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, text in [("~10 s", PASSAGE_10), ("~30 s", PASSAGE_30)]:
        wav16, f32, seconds = spoken_audio(work, label.strip("~ s"), text)
        wav_bytes = wav16.read_bytes()
        log(f"  transcription of {seconds:.1f} s of audio")

        def measure(name: str, wav16=wav16, f32=f32, wav_bytes=wav_bytes) -> tuple[float, str]:
            kind = engines[name]
            if kind == "skald":
                took, out = timed([str(args.engine), "transcribe", str(model), "en"], f32)
                return took, json.loads(out)["text"]
            if kind.startswith("cli"):
                argv = [str(args.whisper_cli), *same, "-f", str(wav16)] + (["-nfa"] if kind == "cli-nfa" else [])
                took, out = timed(argv)
                return took, cli_text(out)
            status, _, answer, _, took = server.request(
                "POST", "/api/voice/transcriptions", token, wav_bytes, "audio/wav")
            if status != 200:
                raise RuntimeError(f"transcription answered {status}: {answer[:300]!r}")
            return took, json.loads(answer)["text"]

        # One warm-up round before the first passage puts the model file in the page cache.
        results = rounds(list(engines), args.runs, measure, warm_up=label == "~10 s")
        baseline = [t for t, _ in results["whisper-cli, Skald's settings (baseline)"]]
        base, fastest = median(baseline), min(baseline)
        for name, runs in results.items():
            times = [t for t, _ in runs]
            right = min(words_right(text, heard) for _, heard in runs)
            rows.append(
                f"| {seconds:.1f} s | {name} | {median(times):.2f} | {min(times):.2f}–{max(times):.2f} "
                f"| {median(times) / seconds:.3f} | {median(times) / base:.2f} | {min(times) / fastest:.2f} | {right:.0%} |"
            )
    return rows


# --- 2. speech --------------------------------------------------------------------------

class PiperWarm:
    """Piper with its voice loaded once (bench/voice/piper_warm.py, in the venv)."""

    def __init__(self, python: Path, script: Path, voice: Path) -> None:
        self.proc = subprocess.Popen([str(python), str(script), str(voice), "0.25"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert json.loads(self.proc.stdout.readline())["ready"]

    def read(self, text: str) -> tuple[float, float]:
        self.proc.stdin.write(json.dumps({"text": text}) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        return answer["seconds"], answer["audio_seconds"]

    def stop(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def speech(args, server: Server, token: str, voice: Path, work: Path) -> list[str]:
    engines = {
        "piper CLI, piper-tts (baseline)": "piper",
        "skald-voice speak (Skald's engine)": "skald",
        "piper-tts, voice loaded once (no start, no load)": "warm",
        "POST /api/voice/speech (skald serve)": "http",
    }
    warm = PiperWarm(args.piper_python, Path(__file__).with_name("piper_warm.py"), voice)
    rows = ["| text | run by | median s | min–max s | audio s | RTF | × baseline | × baseline, fastest runs |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    try:
        for label, text in [("1 sentence, 12 words", SPEECH_SENTENCE),
                            (f"5 sentences, {len(SPEECH_PARAGRAPH.split())} words", SPEECH_PARAGRAPH)]:
            log(f"  speech: {label}")

            def measure(name: str, text=text) -> tuple[float, float]:
                kind = engines[name]
                if kind == "skald":
                    took, out = timed([str(args.engine), "speak", str(args.runtime), str(args.espeak), str(voice), "1"],
                                      text.encode())
                    return took, wav_seconds(out)
                if kind == "piper":
                    out = work / "piper.wav"
                    took, _ = timed([str(args.piper_python), "-m", "piper", "-m", str(voice), "-f", str(out),
                                     "--sentence-silence", "0.25"], text.encode())
                    return took, wav_seconds(out.read_bytes())
                if kind == "warm":
                    return warm.read(text)
                body = json.dumps({"text": text}).encode()
                status, headers, answer, _, took = server.request("POST", "/api/voice/speech", token, body)
                if status != 200 or headers.get("x-skald-speech-engine") != "piper":
                    raise RuntimeError(f"speech answered {status} {headers}: {answer[:300]!r}")
                return took, wav_seconds(answer)

            results = rounds(list(engines), args.runs, measure, warm_up=text == SPEECH_SENTENCE)
            baseline = [t / a for t, a in results["piper CLI, piper-tts (baseline)"]]
            base, fastest = median(baseline), min(baseline)
            for name, runs in results.items():
                times, rtfs = [t for t, _ in runs], [t / a for t, a in runs]
                audio = median([a for _, a in runs])
                rows.append(
                    f"| {label} | {name} | {median(times):.2f} | {min(times):.2f}–{max(times):.2f} | {audio:.1f} "
                    f"| {median(rtfs):.3f} | {median(rtfs) / base:.2f} | {min(rtfs) / fastest:.2f} |"
                )
    finally:
        warm.stop()
    return rows


# --- 3. a 2,000-word answer read aloud --------------------------------------------------

def answer_markdown(target: int = 2000) -> str:
    """`target` words (or a sentence more) of Markdown: sections of a heading, paragraphs
    and a list."""
    blocks: list[str] = []
    count, i = 0, 0
    while count < target:
        heading = ANSWER_HEADINGS[(i // 20) % len(ANSWER_HEADINGS)]
        blocks.append(f"## {heading}")
        count += len(heading.split())
        for block in range(4):
            chunk = []
            while len(chunk) < 5 and count < target:
                sentence = ANSWER_SENTENCES[i % len(ANSWER_SENTENCES)]
                chunk.append(sentence)
                count += len(sentence.split())
                i += 1
            if chunk:
                blocks.append("\n".join(f"- {s}" for s in chunk) if block == 2 else " ".join(chunk))
    return "\n\n".join(blocks) + "\n"


def sentences_of(args, markdown: str) -> tuple[list[str], str]:
    """The page's own split (web/src/audio/speakable.ts, bundled), or a plain one."""
    if args.speakable:
        out = subprocess.run(["node", str(Path(__file__).with_name("sentences.mjs")), str(args.speakable)],
                             input=markdown.encode(), stdout=subprocess.PIPE, check=True).stdout
        return json.loads(out), "web/src/audio/speakable.ts (the page's own)"
    text = re.sub(r"^(#+|-)\s+", "", markdown, flags=re.M)
    parts = re.split(r"(?<=[.!?])\s+", text)
    return [p.strip() for p in parts if p.strip()], "a plain split at . ! ? (web/node_modules missing)"


def read_sentences(server: Server, token: str, sentences: list[str], in_flight: int) -> dict:
    """The sentences read with `in_flight` requests at once, in order, as the page asks for
    them: when each was asked for, its first byte and its end, relative to the first request."""
    lock = threading.Lock()
    next_index = [0]
    done: list[dict | None] = [None] * len(sentences)
    failures: list[str] = []
    start = time.perf_counter()

    def worker() -> None:
        while True:
            with lock:
                i = next_index[0]
                if i >= len(sentences) or failures:
                    return
                next_index[0] += 1
            asked = time.perf_counter() - start
            body = json.dumps({"text": sentences[i]}).encode()
            status, _, wav, first, total = server.request("POST", "/api/voice/speech", token, body)
            if status != 200:
                failures.append(f"sentence {i}: {status} {wav[:200]!r}")
                return
            done[i] = {"asked": asked, "first": asked + first, "end": asked + total, "latency": total,
                       "audio": wav_seconds(wav)}

    workers = [threading.Thread(target=worker) for _ in range(min(in_flight, len(sentences)))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    if failures:
        raise RuntimeError("; ".join(failures))
    return {"first_audio": done[0]["first"], "total": max(d["end"] for d in done), "sentences": done}


def playback_gaps(sentences: list[dict]) -> tuple[float, int]:
    """Silence a listener would hear if each sentence played as soon as it had arrived and
    the one before had ended: total seconds and how many gaps (beyond the first wait)."""
    end = sentences[0]["first"] + sentences[0]["audio"]
    gap_total, gaps = 0.0, 0
    for s in sentences[1:]:
        ready = s["end"]
        if ready > end:
            gap_total += ready - end
            gaps += 1
        end = max(end, ready) + s["audio"]
    return gap_total, gaps


def long_answer(args, server: Server, token: str) -> tuple[list[str], list[str]]:
    markdown = answer_markdown()
    sentences, splitter = sentences_of(args, markdown)
    whole = " ".join(sentences)
    n_words = len(whole.split())
    if len(whole.encode()) > 16 * 1024:
        raise RuntimeError(f"the answer is {len(whole.encode())} bytes, over Skald's 16 KiB for one request")
    log(f"  a {n_words}-word answer, {len(sentences)} sentences, {len(whole.encode())} bytes")

    def first_audio(kind: str) -> float:
        # The page's opening: the first sentence, and two more fetched ahead at once.
        take = sentences[:3] if kind == "page" else sentences[:1]
        return read_sentences(server, token, take, len(take))["first_audio"]

    log("  time to first audio, by sentence")
    firsts = rounds(["page", "alone"], args.ttfa_runs, first_audio)

    def whole_or_sentences(kind: str) -> dict:
        if kind == "whole":
            body = json.dumps({"text": whole}).encode()
            status, headers, wav, first, total = server.request("POST", "/api/voice/speech", token, body)
            if status == 503 and b"took longer than" in wav:
                # Skald's own limit for one passage stopped it: the time is a lower bound.
                log(f"    the whole answer was stopped by Skald's time limit after {total:.0f} s")
                return {"first_audio": total, "total": total, "audio": None, "stopped": True}
            if status != 200 or headers.get("x-skald-speech-engine") != "piper":
                raise RuntimeError(f"the whole answer answered {status} {headers}: {wav[:300]!r}")
            return {"first_audio": first, "total": total, "audio": wav_seconds(wav), "stopped": False}
        read = read_sentences(server, token, sentences, 2)
        read["audio"] = sum(s["audio"] for s in read["sentences"])
        return read

    log("  the whole answer: one request, and sentence by sentence with two in flight")
    runs = rounds(["whole", "sentences"], args.answer_runs, whole_or_sentences, warm_up=False)
    # A run Skald stopped counts as longer than any finished one; if the median is such a
    # run, the baseline is a lower bound and each ratio against it an upper bound.
    stopped = sum(r["stopped"] for r in runs["whole"])
    whole_first = [r["first_audio"] for r in runs["whole"]]
    ranked = sorted(runs["whole"], key=lambda r: (r["stopped"], r["first_audio"]))
    middle = ranked[(len(ranked) - 1) // 2: len(ranked) // 2 + 1]
    bound = any(r["stopped"] for r in middle)
    base = min(r["first_audio"] for r in middle) if bound else median(whole_first)
    by_sentence_first = [r["first_audio"] for r in runs["sentences"]]
    by_sentence_total = [r["total"] for r in runs["sentences"]]
    latencies = [s["latency"] for r in runs["sentences"] for s in r["sentences"]]
    gaps = [playback_gaps(r["sentences"]) for r in runs["sentences"]]
    finished = [r["audio"] for r in runs["whole"] if not r["stopped"]]
    audio_sentences = median([r["audio"] for r in runs["sentences"]])

    def row(what: str, values: list[float], with_p95: bool, ratio: bool = True) -> str:
        spread = f"{p95(values):.2f}" if with_p95 else f"{min(values):.2f}–{max(values):.2f}"
        times = (("< " if bound else "") + f"{median(values) / base:.3f}") if ratio else "—"
        return f"| {what} | {len(values)} | {median(values):.2f} | {spread} | {times} |"

    n3, n1 = args.ttfa_runs, args.answer_runs
    if bound:
        baseline = (f"| first audio, whole answer in one request (baseline) | {n1} | > {base:.0f}: stopped by Skald's "
                    f"limit in {stopped} of {n1} runs | — | 1 |")
    else:
        baseline = row("first audio, whole answer in one request (baseline: it comes all at once)", whole_first, False)
    rows = [
        "| what | runs | median s | p95 s (or min–max) | × baseline |",
        "| --- | ---: | ---: | ---: | ---: |",
        baseline,
        row("first audio, by sentence: the first alone", firsts["alone"], n3 >= 20),
        row("first audio, by sentence: the page's opening (first + 2 ahead at once)", firsts["page"], n3 >= 20),
        row("first audio, by sentence: 2 in flight", by_sentence_first, False),
        row("all audio, by sentence: every sentence, 2 in flight", by_sentence_total, False),
        row(f"one sentence's request, 2 in flight ({len(sentences)} × {n1} requests)", latencies, True, ratio=False),
    ]
    whole_audio = (f"{median(finished) / 60:.1f} min in one request (RTF {median([r['total'] for r in runs['whole'] if not r['stopped']]) / median(finished):.3f}) and "
                   if finished else "")
    notes = [
        f"The answer: {n_words} words of Markdown (headings, paragraphs, a list), {len(sentences)} sentences by "
        f"{splitter}, {len(whole.encode())} bytes; read aloud it lasts {whole_audio}"
        f"{audio_sentences / 60:.1f} min sentence by sentence "
        f"(RTF {median(by_sentence_total) / audio_sentences:.3f}, two requests at once).",
        f"Sentence by sentence, played as each arrives: {median([g for g, _ in gaps]):.2f} s of gaps after the first "
        f"sentence (median over runs; {max(n for _, n in gaps)} gaps at most in a run).",
    ]
    if stopped:
        notes.append(
            f"Skald stopped the whole answer in {stopped} of {n1} runs: one passage may take 30 s + 20 ms a byte "
            f"({30 + 0.02 * len(whole.encode()):.0f} s for these {len(whole.encode())} bytes; src/voice/speech.rs), "
            "which assumes reading takes a tenth of the audio's length."
        )
    return rows, notes


# --- the whole ----------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skald", type=Path, required=True)
    parser.add_argument("--engine", type=Path, required=True, help="skald-voice")
    parser.add_argument("--runtime", type=Path, required=True, help="libonnxruntime.so")
    parser.add_argument("--espeak", type=Path, required=True)
    parser.add_argument("--whisper-cli", type=Path, required=True)
    parser.add_argument("--piper-python", type=Path, required=True)
    parser.add_argument("--whisper-wheel", type=Path, required=True)
    parser.add_argument("--piper-wheel", type=Path, required=True)
    parser.add_argument("--speakable", type=Path, help="web/src/audio/speakable.ts bundled as ES module")
    parser.add_argument("--threads", type=int, default=min(len(os.sched_getaffinity(0)), 8))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ttfa-runs", type=int, default=10)
    parser.add_argument("--answer-runs", type=int, default=3)
    parser.add_argument("--only", default="1,2,3", help="which parts, e.g. 1,3")
    parser.add_argument("--versions", default="", help="a line saying what was compared")
    args = parser.parse_args()
    parts = set(args.only.split(","))

    cpu = next((l.split(":", 1)[1].strip() for l in subprocess.run(
        ["lscpu"], stdout=subprocess.PIPE, text=True).stdout.splitlines() if l.startswith("Model name")), "?")
    load_before = os.getloadavg()
    began = time.time()
    with tempfile.TemporaryDirectory(prefix="skald-voice-bench-") as tmp:
        work = Path(tmp)
        log("starting skald serve and adding the model and the voice over HTTP")
        server = Server(args.skald, work / "server",
                        sorted({args.whisper_wheel.parent.resolve(), args.piper_wheel.parent.resolve()}))
        try:
            status, setup = server.json("POST", "/api/setup", server.launch_token, {"name": "Ada", "password": PASSWORD})
            if status != 201:
                raise RuntimeError(f"setup answered {status}: {setup}")
            token = setup["token"]
            status, model = server.json("POST", "/api/voice/models", token, {"path": str(args.whisper_wheel)})
            if status not in (200, 201):
                raise RuntimeError(f"adding the speech model answered {status}: {model}")
            status, voice = server.json("POST", "/api/voice/voices", token, {"path": str(args.piper_wheel)})
            if status not in (200, 201):
                raise RuntimeError(f"adding the voice answered {status}: {voice}")
            model_file = server.data / "voice" / "models" / f"{model['id']}.bin"
            voice_file = server.data / "voice" / "voices" / f"{voice['id']}.onnx"
            status, overview = server.json("GET", "/api/voice", token)
            if overview["speech"]["engine"] != "piper" or not overview["transcription"]["available"]:
                raise RuntimeError(f"the server cannot do both: {overview}")

            sections = []
            if "1" in parts:
                log("1. transcription")
                sections.append((
                    f"### 1. Transcription (Whisper {model['id']}, {model_file.stat().st_size / 1e6:.0f} MB ggml file "
                    f"converted by Skald; {args.threads} threads; median of {args.runs} interleaved runs; "
                    "wall-clock per run, process start and model load included)",
                    transcription(args, server, token, model_file, work), []))
            if "2" in parts:
                log("2. speech")
                sections.append((
                    f"### 2. Speech (Piper voice {voice['id']}, {voice['sample_rate']} Hz; median of {args.runs} "
                    "interleaved runs; wall-clock per run)",
                    speech(args, server, token, voice_file, work), []))
            if "3" in parts:
                log("3. a 2,000-word answer read aloud")
                rows, notes = long_answer(args, server, token)
                sections.append((
                    "### 3. A 2,000-word answer read aloud through skald serve (POST /api/voice/speech)",
                    rows, notes))
        finally:
            server.stop()

    minutes = (time.time() - began) / 60
    load_after = os.getloadavg()
    print("## Voice benchmark\n")
    print(f"CPU: {cpu}; {len(os.sched_getaffinity(0))} cores; load average {load_before[0]:.1f} at the start, "
          f"{load_after[0]:.1f} at the end; took {minutes:.1f} min.")
    if args.versions:
        print(args.versions)
    print("RTF = processing seconds / audio seconds (below 1 is faster than real time). "
          "× baseline: median against the baseline's median, measured in the same invocation; "
          "fastest runs: the least disturbed run of each against the baseline's, when the machine is busy.\n")
    for title, rows, notes in sections:
        print(title + "\n")
        print("\n".join(rows) + "\n")
        for note in notes:
            print(note + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
