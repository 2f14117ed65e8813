"""Piper (PyPI piper-tts) with its voice loaded once: the lower bound of what reading a
passage costs, with no process start and no model load. Run by the venv's python from
bench/voice/run.py. One JSON line in ({"text"}), one out ({"seconds", "audio_seconds"}).
    python piper_warm.py VOICE.onnx SENTENCE_SILENCE
"""

import json
import sys
import time

from piper import PiperVoice, SynthesisConfig


def main() -> None:
    voice = PiperVoice.load(sys.argv[1])
    silence = float(sys.argv[2])
    config = SynthesisConfig()
    # Warm up ONNX Runtime's first run, as a loaded voice would be.
    list(voice.synthesize("Hello.", config))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        text = json.loads(line)["text"]
        start = time.perf_counter()
        chunks = list(voice.synthesize(text, config))
        seconds = time.perf_counter() - start
        samples = sum(len(c.audio_int16_bytes) // 2 for c in chunks)
        rate = chunks[0].sample_rate if chunks else voice.config.sample_rate
        audio = samples / rate + silence * max(0, len(chunks) - 1)
        print(json.dumps({"seconds": seconds, "audio_seconds": audio}), flush=True)


if __name__ == "__main__":
    main()
