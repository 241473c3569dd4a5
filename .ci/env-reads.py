#!/usr/bin/env python3
"""Fails (exit 1) when code below the commands reads the environment.

Each binary reads its environment where it reads its arguments: in
`main.rs`, in the argument definitions (`cli.rs`, `args.rs`, and clap's
`env = "..."` attributes anywhere) — never deeper, so that what a run does
follows from its command line and what `main` passes down. Test code
(`#[cfg(test)]` modules, tests/, examples/) may read what it likes."""
import pathlib, re, sys

ALLOWED = {"main.rs", "cli.rs", "args.rs"}
READ = re.compile(r"\benv::var(_os)?\s*\(")
bad = []
for root in ("shared/src", "coordinator/src", "worker/src", "proto/src"):
    for path in sorted(pathlib.Path(root).rglob("*.rs")):
        if path.name in ALLOWED or path.name == "tests.rs" or "tests" in path.parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip().startswith("#[cfg(test)]"):
                break
            if READ.search(line) and not line.strip().startswith("//"):
                bad.append(f"{path}:{number}: {line.strip()}")
if bad:
    print("environment read below the commands (read it in main.rs or the argument definitions):")
    print("\n".join(bad))
    sys.exit(1)
print("environment reads: only in main.rs and the argument definitions")
