#!/usr/bin/env python3
"""Lints the security settings the compiler cannot see: what the page may run, what the
window may ask of the shell, and whether a release build could open the web inspector.

    tests/lint/config.py [ROOT]

ROOT is the checkout to read (default: this one); point it at a copy to try a change.

1. The Content-Security-Policy. The backend serves the page, so the header the browser and
   the window obey is the one `Boundary::new` builds in src/http/boundary.rs (Tauri's own
   `app.security.csp` is null: it would only apply to pages Tauri serves itself). The lint
   reads that string from the source, and fails when scripts may come from anything but
   the page's own origin ('self', a nonce or a hash): no 'unsafe-inline', no 'unsafe-eval'
   (nor any other 'unsafe-…' keyword), no wildcard, scheme or remote host. It also fails
   when another place in src/ or src-tauri/ sets the header, or a <meta> tag in the page
   does, since the lint would not be reading the policy that wins.
2. The Tauri capabilities (src-tauri/capabilities/, and any inline in tauri.conf.json).
   Every window, webview, permission and remote URL a capability grants must be on
   ALLOWED_GRANTS below; anything new fails until someone has reviewed it and added it to
   that list on purpose.
3. The web inspector in a release build. Tauri enables devtools in release builds only
   through its `devtools` feature, so no Cargo.toml of the workspace may ask for it (nor
   may any crate of the resolved graph, checked by scripts that pass --metadata). A call
   that opens or enables the inspector in src/ or src-tauri/ (`open_devtools`,
   `.devtools(true)`, WebKitGTK's `set_enable_developer_extras(true)`, `inspector()`) must
   sit under `cfg(debug_assertions)`, as the shell's test hooks do; tauri.conf.json may not
   turn `devtools` on for a window.

Exit 1, listing every breach.
"""

import glob
import json
import os
import re
import subprocess
import sys
import tomllib

# What the capabilities grant today, per capability identifier: the main window is Skald's
# own loopback page, which talks to the core over HTTP; it needs no IPC at all. A grant is
# "window:<label>", "webview:<label>", "permission:<identifier>" (with " scope=<json>" when
# the entry carries allow/deny scopes), "remote:<url pattern>", "local:false" or
# "platforms:<list>".
ALLOWED_GRANTS = {
    "main-window": {"window:main"},
}

# Where the page's Content-Security-Policy is built, and the variable it is built in.
CSP_SOURCE = "src/http/boundary.rs"
CSP_BINDING = "csp"

# Script sources that keep scripts to the page's own origin.
SAFE_SCRIPT_SOURCES = {"'self'", "'none'", "'strict-dynamic'", "'report-sample'"}
SAFE_SCRIPT_PATTERN = re.compile(r"^'(nonce-[A-Za-z0-9+/=_-]+|sha(256|384|512)-[A-Za-z0-9+/=_-]+)'$")

# Calls that open or enable the web inspector, and the argument that makes each harmless.
INSPECTOR_CALLS = [
    (re.compile(r"\bopen_devtools\s*\("), None),
    (re.compile(r"\.devtools\s*\(((?:[^()]|\([^()]*\))*)\)"), "false"),
    (re.compile(r"\bset_enable_developer_extras\s*\(((?:[^()]|\([^()]*\))*)\)"), "false"),
    (re.compile(r"\.inspector\s*\("), None),
]
DEBUG_ONLY = re.compile(r"(?<![\w(!])cfg!?\(\s*debug_assertions\s*\)")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    problems = []
    problems += check_csp(root)
    problems += check_capabilities(root)
    problems += check_devtools(root)
    if problems:
        for problem in problems:
            print(f"config lint: {problem}", file=sys.stderr)
        sys.exit(1)
    print("config lint: CSP, capabilities and devtools settings pass")


# --- 1. Content-Security-Policy -------------------------------------------------------


def check_csp(root):
    problems = []
    path = os.path.join(root, CSP_SOURCE)
    try:
        code = strip_comments(read(path))
    except OSError as err:
        return [f"{CSP_SOURCE}: cannot read it ({err}); the lint reads the page's CSP there"]
    policy = csp_literal(code)
    if policy is None:
        return [
            f"{CSP_SOURCE}: found no `let {CSP_BINDING} = format!(\"…\")` to read the page's "
            "Content-Security-Policy from; if it moved, point CSP_SOURCE in tests/lint/config.py at it"
        ]
    problems += [f"{CSP_SOURCE}: {p}" for p in script_policy_problems(policy)]

    # The header must be set in that one place, or the lint reads a policy that may lose.
    setters = []
    for file in rust_files(root, ["src", "src-tauri"]):
        text = read(file)
        if "content_security_policy" not in text.lower() and "content-security-policy" not in text.lower():
            continue  # the lexer below is slow; most files cannot match
        text = strip_comments(text)
        for m in re.finditer(r"CONTENT_SECURITY_POLICY|\"content-security-policy\"", text, re.IGNORECASE):
            setters.append(f"{rel(root, file)}:{line_of(text, m.start())}")
    ours = [s for s in setters if s.startswith(CSP_SOURCE + ":")]
    if not ours:
        problems.append(f"{CSP_SOURCE} no longer sends the Content-Security-Policy header it builds")
    for other in sorted(set(setters) - set(ours)):
        problems.append(
            f"{other} names the Content-Security-Policy header too, and the lint checks only the policy "
            f"{CSP_SOURCE} builds: set the header in that one place (or teach tests/lint/config.py the other)"
        )
    for page in glob.glob(os.path.join(root, "web", "*.html")) + glob.glob(
        os.path.join(root, "web", "src", "**", "*.html"), recursive=True
    ):
        if re.search(r"http-equiv\s*=\s*[\"']?content-security-policy", read(page), re.IGNORECASE):
            problems.append(f"{rel(root, page)} carries a CSP <meta> tag; the server's header is the page's one policy")

    # Tauri's own CSP applies only to pages it serves, but if someone sets one, it must be as strict.
    conf = tauri_conf(root)
    security = (conf or {}).get("app", {}).get("security", {})
    for key in ("csp", "devCsp"):
        value = security.get(key)
        if value is None:
            continue
        if isinstance(value, dict):
            value = "; ".join(
                f"{name} {' '.join(v) if isinstance(v, list) else v}" for name, v in value.items()
            )
        problems += [f"tauri.conf.json app.security.{key}: {p}" for p in script_policy_problems(value)]
    return problems


def csp_literal(code):
    """The policy in `let csp = format!("…" …)`, with `{port}` and the like left as words."""
    m = re.search(r"\blet\s+" + CSP_BINDING + r"\s*=\s*format!\s*\(\s*", code)
    if not m:
        return None
    literal = rust_string_at(code, m.end())
    if literal is None:
        return None
    return literal.replace("{{", "{").replace("}}", "}")


def rust_string_at(code, i):
    """The value of the Rust string literal (plain or raw) starting at code[i], or None."""
    raw = re.match(r'r(#*)"', code[i:])
    if raw:
        end = code.find('"' + raw.group(1), i + raw.end())
        return None if end < 0 else code[i + raw.end() : end]
    if i >= len(code) or code[i] != '"':
        return None
    out, j = [], i + 1
    escapes = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}
    while j < len(code):
        c = code[j]
        if c == '"':
            return "".join(out)
        if c == "\\":
            nxt = code[j + 1]
            if nxt == "\n":  # a line continuation eats the newline and the next line's indent
                j += 2
                while j < len(code) and code[j] in " \t\n\r":
                    j += 1
                continue
            out.append(escapes.get(nxt, nxt))
            j += 2
            continue
        out.append(c)
        j += 1
    return None


def script_policy_problems(policy):
    directives = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            directives.setdefault(words[0].lower(), words[1:])
    problems = []
    # script-src, or default-src standing in for it, and the finer script directives if any.
    base = "script-src" if "script-src" in directives else "default-src"
    if base not in directives:
        return [f"the CSP has neither script-src nor default-src, so any script may run: {policy!r}"]
    script_directives = [base] + [d for d in ("script-src-elem", "script-src-attr") if d in directives]
    for directive in script_directives:
        for source in directives[directive]:
            lowered = source.lower()
            if "unsafe" in lowered:
                problems.append(f"the CSP's {directive} allows {source}: scripts must not be inline or eval'd")
            elif lowered not in SAFE_SCRIPT_SOURCES and not SAFE_SCRIPT_PATTERN.match(source):
                problems.append(
                    f"the CSP's {directive} allows {source}: scripts may come only from the page's own origin ('self')"
                )
    return problems


# --- 2. Tauri capabilities --------------------------------------------------------------


def check_capabilities(root):
    problems = []
    capabilities = []  # (where, capability object)
    folder = os.path.join(root, "src-tauri", "capabilities")
    for path in sorted(glob.glob(os.path.join(folder, "**", "*"), recursive=True)):
        if os.path.isdir(path):
            continue
        where = rel(root, path)
        if not path.endswith(".json"):
            problems.append(f"{where}: a capability file the lint cannot read (only .json); convert it or teach the lint")
            continue
        try:
            data = json.loads(read(path))
        except ValueError as err:
            problems.append(f"{where}: not JSON ({err})")
            continue
        # A file holds one capability, a list of them, or {"capabilities": [...]}.
        items = data.get("capabilities", [data]) if isinstance(data, dict) else data
        capabilities += [(where, c) for c in items]
    conf = tauri_conf(root)
    for c in (conf or {}).get("app", {}).get("security", {}).get("capabilities", []):
        if isinstance(c, dict):  # inline; a bare string names a file read above
            capabilities.append(("tauri.conf.json app.security.capabilities", c))

    seen = set()
    for where, capability in capabilities:
        ident = capability.get("identifier", "")
        if ident in seen:
            problems.append(f"{where}: a second capability named {ident!r}")
        seen.add(ident)
        allowed = ALLOWED_GRANTS.get(ident)
        extra = sorted(grants_of(capability) - (allowed or set()))
        if allowed is None:
            problems.append(
                f"{where}: capability {ident!r} is not on the lint's allowed list; it grants {extra or 'nothing yet'}. "
                "Review what it lets the page do, then add it to ALLOWED_GRANTS in tests/lint/config.py on purpose"
            )
            continue
        for grant in extra:
            problems.append(
                f"{where}: capability {ident!r} grants {grant}, which is not on the lint's allowed list. "
                "Review what it lets the page do, then add it to ALLOWED_GRANTS in tests/lint/config.py on purpose"
            )
    return problems


def grants_of(capability):
    grants = set()
    grants |= {f"window:{w}" for w in capability.get("windows", [])}
    grants |= {f"webview:{w}" for w in capability.get("webviews", [])}
    for entry in capability.get("permissions", []):
        if isinstance(entry, str):
            grants.add(f"permission:{entry}")
        else:
            scope = {k: v for k, v in entry.items() if k != "identifier"}
            grants.add(f"permission:{entry.get('identifier')} scope={json.dumps(scope, sort_keys=True)}")
    for url in (capability.get("remote") or {}).get("urls", []):
        grants.add(f"remote:{url}")
    if capability.get("local") is False:
        grants.add("local:false")
    if "platforms" in capability:
        grants.add(f"platforms:{','.join(sorted(capability['platforms']))}")
    known = {"$schema", "identifier", "description", "windows", "webviews", "permissions", "remote", "local", "platforms"}
    grants |= {f"unknown key:{k}" for k in capability if k not in known}
    return grants


# --- 3. devtools in a release build ---------------------------------------------------------


def check_devtools(root):
    problems = []
    for manifest in workspace_manifests(root):
        where = rel(root, manifest)
        data = tomllib.loads(read(manifest))
        for table_name, deps in dependency_tables(data):
            spec = deps.get("tauri")
            if isinstance(spec, dict) and "devtools" in spec.get("features", []):
                problems.append(f"{where} [{table_name}] tauri asks for the `devtools` feature: release builds would get the inspector")
        for feature, enables in data.get("features", {}).items():
            for item in enables:
                if re.fullmatch(r"tauri\??/devtools", item):
                    problems.append(f"{where} feature `{feature}` enables tauri/devtools: release builds would get the inspector")

    for file in rust_files(root, ["src", "src-tauri"]):
        code = read(file)
        if not re.search(r"devtools|developer_extras|inspector", code):
            continue  # the lexer below is slow; most files cannot match
        code = strip_comments(code, blank_strings=True)
        for pattern, harmless in INSPECTOR_CALLS:
            for m in pattern.finditer(code):
                if harmless is not None and m.group(1).strip() in (harmless, "cfg!(debug_assertions)"):
                    continue
                if not under_debug_cfg(code, m.start()):
                    problems.append(
                        f"{rel(root, file)}:{line_of(code, m.start())}: `{m.group(0)}` can open the web inspector in a "
                        "release build; put it under #[cfg(debug_assertions)] (or `if cfg!(debug_assertions)`)"
                    )

    conf = tauri_conf(root)
    for window in (conf or {}).get("app", {}).get("windows", []):
        if window.get("devtools"):
            problems.append(f"tauri.conf.json: window {window.get('label', 'main')!r} has devtools on")
    return problems


def check_resolved_tauri_features(metadata):
    """The features cargo resolved for tauri, from `cargo metadata` JSON: no devtools."""
    packages = {p["id"]: p["name"] for p in metadata["packages"]}
    return [
        f"the resolved dependency graph enables tauri's `devtools` feature ({node['id']}): "
        "some crate asks for it; release builds would get the inspector"
        for node in (metadata.get("resolve") or {}).get("nodes", [])
        if packages.get(node["id"]) == "tauri" and "devtools" in node.get("features", [])
    ]


def under_debug_cfg(code, at):
    """Whether code[at] is inside a statement or block gated by cfg(debug_assertions): the
    statement's own attributes, or the header of any enclosing block (`#[cfg(..)] fn f() {`,
    `if cfg!(debug_assertions) {`). An `else` block's header is just `else`, so it is not."""
    headers = [code[statement_start(code, at) : at]]
    depth, i = 0, at - 1
    while i >= 0:
        c = code[i]
        if c == "}":
            depth += 1
        elif c == "{":
            if depth == 0:
                headers.append(code[statement_start(code, i) : i])
            else:
                depth -= 1
        i -= 1
    return any(DEBUG_ONLY.search(h) for h in headers)


def statement_start(code, at):
    """Where the statement or item holding code[at] begins: after the last `;`, `{` or `}`."""
    i = at - 1
    while i >= 0 and code[i] not in ";{}":
        i -= 1
    return i + 1


# --- helpers ---------------------------------------------------------------------------------


def strip_comments(code, blank_strings=False):
    """Rust code with its comments blanked, newlines and offsets intact. String and char
    literals are kept, or blanked between their quotes when blank_strings (so a brace in
    a string does not count as one)."""
    out, i, n = [], 0, len(code)
    char_literal = re.compile(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'")
    while i < n:
        if code.startswith("//", i):
            j = code.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif code.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if code.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif code.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", code[i:j]))
            i = j
        elif code[i] == "'" and char_literal.match(code, i):
            j = char_literal.match(code, i).end()
            out.append(code[i:j] if not blank_strings else "'" + " " * (j - i - 2) + "'")
            i = j
        elif code[i] == '"' or (code[i] == "r" and re.match(r'r#*"', code[i:]) and not re.match(r"\w", code[i - 1 : i])):
            raw = re.match(r'r(#*)"', code[i:])
            if raw:
                end = code.find('"' + raw.group(1), i + raw.end())
                j = n if end < 0 else end + 1 + len(raw.group(1))
                body = (i + raw.end(), end if end >= 0 else n)
            else:
                j = i + 1
                while j < n and code[j] != '"':
                    j += 2 if code[j] == "\\" else 1
                body = (i + 1, min(j, n))
                j += 1
            if blank_strings:
                out.append(code[i : body[0]] + re.sub(r"[^\n]", " ", code[body[0] : body[1]]) + code[body[1] : j])
            else:
                out.append(code[i:j])
            i = j
        else:
            out.append(code[i])
            i += 1
    return "".join(out)


def rust_files(root, folders):
    for folder in folders:
        yield from sorted(glob.glob(os.path.join(root, folder, "**", "*.rs"), recursive=True))


def workspace_manifests(root):
    top = os.path.join(root, "Cargo.toml")
    members = tomllib.loads(read(top)).get("workspace", {}).get("members", [])
    found = [top]
    for member in members:
        for path in sorted(glob.glob(os.path.join(root, member, "Cargo.toml"))):
            if os.path.abspath(path) != os.path.abspath(top):
                found.append(path)
    return found


def dependency_tables(data):
    for kind in ("dependencies", "dev-dependencies", "build-dependencies"):
        if kind in data:
            yield kind, data[kind]
    for target, tables in data.get("target", {}).items():
        for kind in ("dependencies", "dev-dependencies", "build-dependencies"):
            if kind in tables:
                yield f"target.{target}.{kind}", tables[kind]


def tauri_conf(root):
    for path in (os.path.join(root, "tauri.conf.json"), os.path.join(root, "src-tauri", "tauri.conf.json")):
        if os.path.exists(path):
            return json.loads(read(path))
    return None


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def rel(root, path):
    return os.path.relpath(path, root)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--metadata":
        # `cargo metadata --format-version 1 ... | config.py --metadata`: the resolved features.
        found = check_resolved_tauri_features(json.load(sys.stdin))
        for problem in found:
            print(f"config lint: {problem}", file=sys.stderr)
        sys.exit(1 if found else 0)
    main()
