#!/usr/bin/env python3
"""Checks that a built skald (or skald-voice) binary runs on any x86-64 CPU: that it requires nothing
beyond x86-64-v2 (SSE4.2, POPCNT) except in code that runs only after a check of the
CPU it is on.

    tests/portable.py BINARY [TARGET_DIR]

It disassembles BINARY (objdump) and finds every function holding instructions of a
later level: AVX, AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE (x86-64-v3), and AVX-512 or AMX.
Each such function must be one of:

  - llama.cpp's or whisper.cpp's (defined in the static libraries llama-cpp-sys-2 and
    whisper-rs-sys built, found under TARGET_DIR): Skald runs llama.cpp only after
    `fit::check_cpu` found the CPU has its baseline, and skald-voice whisper.cpp only after
    its own check of the same; never AVX-512 or AMX, which are not compiled in at all;
  - OpenSSL's (defined in the libcrypto.a openssl-src built): OpenSSL picks its assembly
    at run time from the CPU's own report (OPENSSL_ia32cap);
  - a function whose name states the instructions it needs (`find_raw_avx2`,
    `compress_avx2`, `impl_avx`): a crate's runtime-dispatched variant.

And no static initializer (what runs before `main`, on every CPU) may reach, through its
direct calls, any function holding such instructions. Last, ggml's own build settings
(its CMakeCache.txt) must match what `fit::COMPILED_FOR` says Skald checks for: not built
for the builder's CPU, the baseline on, AVX-512 and AMX off. Exit 1, listing what breaks
a rule.
"""

import collections
import glob
import os
import re
import subprocess
import sys

# `tzcnt` is `rep bsf`, which older CPUs run as `bsf`: compilers emit it for any target.
V3_MNEMONICS = {
    "andn", "bextr", "blsi", "blsmsk", "blsr", "bzhi", "mulx", "pdep", "pext", "rorx",
    "sarx", "shlx", "shrx", "lzcnt", "movbe",
}
ISA_NAMED = re.compile(r"avx|xop|ifma|vaes|vpclmul|sha512ext|_montx|mulx|sqrx|_[0-9]+x(_|$)|x[0-9]+_|"
                       r"ChaCha20_|_fe64_|_win5|sm3|sm4|block_loop|_IV$|gcm|ghash|rsaz|bn_|ecp_nistz256|"
                       r"aesni", re.I)
FUNCTION = re.compile(r"^([0-9a-f]+) <(.*)>:$")
CALL = re.compile(r"\bcall[q]?\s+[0-9a-f]+ <([^>+]*)(\+0x[0-9a-f]+)?>")


def level(mnemonic, operands):
    """'512' for AVX-512/AMX, 'v3' for x86-64-v3, None for v2 and below."""
    if "%zmm" in operands or "{%k" in operands or mnemonic.startswith(("ldtilecfg", "sttilecfg", "tileload", "tdp")):
        return "512"
    if mnemonic.startswith("k") and "%k" in operands:
        return "512"
    if (mnemonic.startswith("v") and mnemonic not in ("verr", "verw")) or "%ymm" in operands:
        return "v3"
    if mnemonic in V3_MNEMONICS:
        return "v3"
    return None


def disassemble(binary):
    """Per function: the highest level it holds, and the functions it calls directly."""
    levels, calls = {}, collections.defaultdict(set)
    process = subprocess.Popen(["objdump", "-d", "--no-show-raw-insn", "-C", binary],
                               stdout=subprocess.PIPE, text=True, errors="replace", bufsize=1 << 20)
    function = None
    for line in process.stdout:
        match = FUNCTION.match(line)
        if match:
            function = match.group(2)
            continue
        parts = line.split("\t", 2)
        if function is None or len(parts) < 2:
            continue
        instruction = parts[1].strip()
        if not instruction:
            continue
        mnemonic, _, operands = instruction.partition(" ")
        found = level(mnemonic, operands)
        if found and levels.get(function) != "512":
            levels[function] = found
        if mnemonic.startswith("call"):
            target = CALL.search(instruction)
            if target:
                calls[function].add(target.group(1))
    if process.wait() != 0:
        sys.exit(f"portable: objdump failed on {binary}")
    return levels, calls


def base(name):
    """A function's name without what the compiler adds to its copies."""
    return re.sub(r" \[clone [^]]*\]$", "", name).removesuffix(".cold")


def defined_in(archives):
    """The names of the functions the static libraries define (demangled)."""
    names = set()
    for archive in archives:
        output = subprocess.run(["nm", "-C", "--defined-only", archive], capture_output=True, text=True,
                                errors="replace").stdout
        for line in output.splitlines():
            fields = line.split(" ", 2)
            if len(fields) == 3 and fields[1] in "TtWw":
                names.add(base(fields[2]))
    return names


# fit::COMPILED_FOR's names for ggml's CMake options.
GGML_OPTIONS = {"sse4.2": "GGML_SSE42", "avx": "GGML_AVX", "avx2": "GGML_AVX2", "fma": "GGML_FMA",
                "f16c": "GGML_F16C", "bmi2": "GGML_BMI2"}


def build_settings(target):
    """What ggml's CMake builds said of each x86 option, and what Skald checks for."""
    problems = []
    fit = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "providers", "local", "fit.rs")
    declared = re.search(r"pub const COMPILED_FOR: &\[&str\] = &\[([^]]*)\];", open(fit).read())
    checked = set(re.findall(r'"([^"]+)"', declared.group(1))) if declared else set()
    wanted = {GGML_OPTIONS[f] for f in checked if f in GGML_OPTIONS}
    caches = glob.glob(f"{target}/*/build/llama-cpp-sys-2-*/out/build/CMakeCache.txt")
    caches += glob.glob(f"{target}/*/build/whisper-rs-sys-*/out/build/CMakeCache.txt")
    for cache in caches:
        options = dict(re.findall(r"^(GGML_[A-Z0-9_]+):BOOL=(\w+)$", open(cache).read(), re.M))
        if options.get("GGML_NATIVE") != "OFF":
            problems.append(f"{cache}: ggml was built for the builder's CPU (GGML_NATIVE)")
        for option, value in options.items():
            x86 = re.match(r"GGML_(SSE|AVX|AMX|FMA|F16C|BMI)", option)
            if x86 and (value == "ON") != (option in wanted):
                problems.append(f"{cache}: {option} is {value}, but fit::COMPILED_FOR checks for {sorted(checked)}")
    return problems, len(caches)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) > 2 else os.environ.get("CARGO_TARGET_DIR", "target")
    llama_archives = glob.glob(f"{target}/*/build/llama-cpp-sys-2-*/out/**/*.a", recursive=True)
    llama_archives += glob.glob(f"{target}/*/build/whisper-rs-sys-*/out/**/*.a", recursive=True)
    crypto_archives = glob.glob(f"{target}/*/build/openssl-sys-*/out/openssl-build/install/lib/libcrypto.a")
    if not llama_archives:
        sys.exit(f"portable: no llama.cpp libraries under {target}: build with --features local-model first")
    llama, crypto = defined_in(llama_archives), defined_in(crypto_archives)
    levels, calls = disassemble(binary)

    problems = []
    for function, found in sorted(levels.items()):
        name = base(function)
        if name in crypto or ISA_NAMED.search(name):
            continue
        if name in llama:
            if found == "512":
                problems.append(f"ggml's {function} holds AVX-512/AMX, which must not be compiled in")
            continue
        problems.append(f"{function} holds {'AVX-512/AMX' if found == '512' else 'x86-64-v3'} instructions "
                        "and runs without a check of the CPU")

    # What runs before main, on every CPU.
    initializers = [f for f in calls.keys() | levels.keys() if f.startswith("_GLOBAL__sub_I_")]
    seen, queue = set(), list(initializers)
    while queue:
        function = queue.pop()
        if function in seen:
            continue
        seen.add(function)
        if function in levels and not ISA_NAMED.search(base(function)) and base(function) not in crypto:
            problems.append(f"{function} holds {levels[function]} instructions and runs before main")
        queue.extend(calls.get(function, ()))

    settings_problems, caches = build_settings(target)
    problems.extend(settings_problems)
    if not caches:
        problems.append(f"no CMakeCache.txt of ggml under {target}")

    tally = collections.Counter(levels.values())
    print(f"portable: {binary}: {len(levels)} functions use instructions beyond x86-64-v2 "
          f"({tally['v3']} v3, {tally['512']} AVX-512/AMX), {len(initializers)} initializers "
          f"reaching {len(seen)} functions")
    if problems:
        for problem in problems[:50]:
            print(f"  {problem}")
        print(f"portable: {len(problems)} problems")
        sys.exit(1)
    print("portable: every such function is llama.cpp's or whisper.cpp's (after the CPU check) or picked at run time")


if __name__ == "__main__":
    main()
