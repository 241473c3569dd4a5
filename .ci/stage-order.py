#!/usr/bin/env python3
"""Fails (exit 1) when an import goes against the layering of the workspace.

- shared/src: its top-level modules are stages, in the order of STAGES
  (shared/src/lib.rs documents it); a stage may name only itself and the
  stages before it. Every `crate::` path of a file counts, in `use` lines,
  code and doc links alike, and so does `super::` that climbs to the crate
  root; test code (`tests.rs`, `tests/` folders, everything after a file's
  first `#[cfg(test)]`) may reach anywhere.
- coordinator/src: a command (`commands/X`) uses no other command, and the
  infrastructure outside `commands/` uses none (`main.rs` dispatches to them).

Run from the checkout root, or give it as the only argument.
"""
import os
import re
import sys

# Lowest first. `units` uses nothing; `job` is made of a puzzle and its space,
# and every stage after it works on a job.
STAGES = ["units", "puzzle", "space", "job", "kernel", "files", "search"]


def code_of(text):
    """The text before the first `#[cfg(test)]`: tests may import anything."""
    i = text.find("#[cfg(test)]")
    return text if i < 0 else text[:i]


def rust_files(root):
    """(module path as a list, file path) of every non-test .rs file."""
    for folder, _, files in os.walk(root):
        parts = os.path.relpath(folder, root).split(os.sep)
        parts = [] if parts == ["."] else parts
        if "tests" in parts:
            continue
        for name in sorted(files):
            if not name.endswith(".rs") or name == "tests.rs":
                continue
            stem = name[:-3]
            module = parts if stem in ("mod", "lib", "main") else parts + [stem]
            yield module, os.path.join(folder, name)


def top_level_targets(module, text):
    """The crate's top-level modules that `text` (the file of `module`) names:
    `crate::a`, `crate::{a, b::c}`, and `super::…` that climbs out of the
    file's own top-level module."""
    found = set()
    for m in re.finditer(r"\bcrate::(\{[^}]*\}|[a-z_][a-z0-9_]*)", text):
        item = m.group(1)
        if item.startswith("{"):
            # Top-level names inside the braces (nested braces are flattened
            # by the regex; their first name before `::` is what counts).
            for part in item[1:].split(","):
                name = part.strip().split("::")[0].strip("{ }")
                if re.fullmatch(r"[a-z_][a-z0-9_]*", name or ""):
                    found.add(name)
        else:
            found.add(item)
    # `super::` from a file whose module is a::b::c names a::b::…; a mod.rs or
    # a/b.rs declared as `mod b` alike: the parent of `module`.
    for m in re.finditer(r"\b((?:super::)+)([a-z_][a-z0-9_]*)", text):
        ups = m.group(1).count("super::")
        base = module[: len(module) - ups]
        if ups <= len(module) and base:
            found.add(base[0])
        elif ups <= len(module):
            found.add(m.group(2))
    found.discard("self")
    return found


def check_shared(root, errors):
    rank = {s: i for i, s in enumerate(STAGES)}
    lib = open(os.path.join(root, "lib.rs")).read()
    declared = set(re.findall(r"^\s*pub\s+mod\s+([a-z_][a-z0-9_]*)\s*;", lib, re.M))
    for missing in sorted(declared - set(STAGES)):
        errors.append(f"{root}/lib.rs declares `{missing}`, which is not in STAGES of {sys.argv[0]}")
    for module, path in rust_files(root):
        if not module:
            continue  # lib.rs
        me = module[0]
        text = code_of(open(path).read())
        for target in sorted(top_level_targets(module, text)):
            if target == me or target not in rank:
                continue
            if rank[target] > rank.get(me, -1):
                errors.append(f"{path}: stage `{me}` uses `{target}`, a later stage ({' → '.join(STAGES)})")


def check_coordinator(root, errors):
    commands_dir = os.path.join(root, "commands")
    if not os.path.isdir(commands_dir):
        errors.append(f"{root}: no commands/ folder (one module per subcommand)")
        return
    commands = {
        n[:-3] if n.endswith(".rs") else n
        for n in os.listdir(commands_dir)
        if n != "mod.rs" and (n.endswith(".rs") or os.path.isdir(os.path.join(commands_dir, n)))
    }
    for module, path in rust_files(root):
        if module in ([], ["commands"]):
            continue  # main.rs dispatches, commands/mod.rs declares
        text = code_of(open(path).read())
        named = set(re.findall(r"\bcrate::commands::([a-z_][a-z0-9_]*)", text))
        if re.search(r"\bcrate::commands\b(?!::)", text) or re.search(r"\bcrate::\{[^}]*\bcommands\b", text):
            named.add("*")
        if module[0] == "commands":
            mine = module[1]
            # A sibling through super:: from commands/X.rs (super = commands)
            # or from commands/X/Y.rs (super::super = commands).
            depth = len(module) - 1
            ups = "super::" * depth
            named |= set(re.findall(r"\b" + re.escape(ups) + r"([a-z_][a-z0-9_]*)", text)) & commands
            named.discard(mine)
            for other in sorted(named):
                errors.append(f"{path}: command `{mine}` uses command `{other}`; move what they share out of commands/")
        else:
            for other in sorted(named):
                errors.append(f"{path}: infrastructure `{'::'.join(module)}` uses command `{other}`")


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    errors = []
    check_shared(os.path.join(top, "shared/src"), errors)
    check_coordinator(os.path.join(top, "coordinator/src"), errors)
    for e in errors:
        print("stage order:", e, file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"stage order: shared/src {' → '.join(STAGES)}; coordinator commands independent")


if __name__ == "__main__":
    main()
