#!/usr/bin/env python3
"""Every normative statement of the wire contracts and of the security promises has a test, and
every test names a statement that exists.

A statement carries its id in the doc, in square brackets at the end of its sentence or table row:
P-<area>-<n> in docs/PROTOCOL.md, S-<area>-<n> in docs/SMP.md, SEC-<area>-<n> in docs/SECURITY.md
(an id inside `inline code` or a fenced block is an example, not a statement). A test names the
statements it backs in a comment inside its body, `// [P-REQ-8]` (several ids may share one
comment); a step of the VM script names one in a shell comment, `# [P-DATA-7]`, in
Scripts/bluez/*.sh.

Fails (exit 1), listing each, when a statement no test names, a test names an id that no doc
defines, or a doc defines an id twice. Prints one closing line:
  statements: N statements, M tests naming them, K ids unmatched

  python3 Scripts/check-statements.py
"""
import glob
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DOCS = ["docs/PROTOCOL.md", "docs/SMP.md", "docs/SECURITY.md"]
ID = re.compile(r"\[((?:P|S|SEC)-[A-Z][A-Z0-9]*-[0-9]+)\]")
TEST = re.compile(r"^\s*@Test\b")


def defined_ids(path):
    """{id: [line numbers]} of the statements in one doc, examples left out."""
    found = {}
    fenced = False
    with open(os.path.join(ROOT, path), encoding="utf-8") as doc:
        for number, line in enumerate(doc, 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if fenced:
                continue
            for statement in ID.findall(re.sub(r"`[^`]*`", "", line)):
                found.setdefault(statement, []).append(number)
    return found


def named_ids():
    """{id: set of tests}; a Swift test is its file and the line of the @Test above the comment,
    a shell step its file and line."""
    named = {}
    sources = sorted(glob.glob(os.path.join(ROOT, "Tests", "**", "*.swift"), recursive=True))
    sources += sorted(glob.glob(os.path.join(ROOT, "Scripts", "bluez", "*.sh")))
    for path in sources:
        relative = os.path.relpath(path, ROOT)
        test = None
        with open(path, encoding="utf-8") as source:
            for number, line in enumerate(source, 1):
                if path.endswith(".swift") and TEST.match(line):
                    test = number
                for statement in ID.findall(line):
                    where = f"{relative}:{test if path.endswith('.swift') and test else number}"
                    named.setdefault(statement, set()).add(where)
    return named


def main():
    problems = []
    defined = {}
    for doc in DOCS:
        if not os.path.exists(os.path.join(ROOT, doc)):
            continue
        for statement, lines in defined_ids(doc).items():
            places = [f"{doc}:{line}" for line in lines] + defined.get(statement, [])
            defined[statement] = places
    for statement, places in sorted(defined.items()):
        if len(places) > 1:
            problems.append(f"defined more than once: [{statement}] at {', '.join(sorted(places))}")
    named = named_ids()
    untested = sorted(set(defined) - set(named))
    unknown = sorted(set(named) - set(defined))
    for statement in untested:
        problems.append(f"no test names [{statement}] ({defined[statement][0]})")
    for statement in unknown:
        problems.append(f"[{statement}] is named by {', '.join(sorted(named[statement]))} but no doc defines it")
    for problem in problems:
        print(problem)
    tests = set().union(*named.values()) if named else set()
    print(f"statements: {len(defined)} statements, {len(tests)} tests naming them, "
          f"{len(untested) + len(unknown)} ids unmatched")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
