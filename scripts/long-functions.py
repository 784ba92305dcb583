#!/usr/bin/env python3
"""Lists the Swift functions a reader cannot see whole: bodies longer than N lines.

A body is counted from the line of its `func`, `init`, `deinit` or `subscript` keyword (or of
the `var` of a computed property) to the line of its matching closing brace, both included; a
closure is not a function of its own, so it counts toward the function that holds it, and a
nested function is listed both on its own and inside the one around it. Braces, keywords and
parentheses inside comments and string literals (plain, multi-line, raw, with interpolations)
are ignored. Protocol requirements, which have no body, are not listed. The name printed is the
function's with its enclosing types and extensions (`SnapshotBuilder.build`).

Usage:
  scripts/long-functions.py [--over N] [--fail-over M] [PATH ...]

PATH is a Swift file or a folder searched for *.swift; without one, the library's and tools'
sources: Sources and Examples. Prints how many bodies run over 60 and
over 80 lines, then every body over N (default 60), longest first, as
`LINES  NAME  FILE:LINE`. Exit status 0, or 1 with --fail-over M when a body runs over M lines.

Standard library only.
"""

import argparse
import glob
import os
import re
import sys

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_PATHS = ["Sources", "Examples"]
SKIPPED_FOLDERS = {".build", ".git", ".swiftpm", "Packages", "Generated"}  # Generated: protoc's code


def blank_comments_and_strings(text):
    """Returns `text` with comments and string literals replaced by spaces, newlines kept.

    The result has the same length and the same lines as `text`, so positions and line numbers
    carry over. String interpolations (`\\(...)`, `\\#(...)` in raw strings) are blanked with
    their string; the strings inside them are followed, so that their quotes and parentheses
    do not end anything early.
    """
    out = list(text)
    n = len(text)
    # Each frame: ("code", paren_depth) for code (the outermost, or an interpolation), or
    # ("string", hashes, multiline) inside a literal.
    stack = [("code", 0)]
    i = 0

    def blank(start, end):
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        frame = stack[-1]
        in_literal = len(stack) > 1
        if frame[0] == "code":
            c = text[i]
            if text.startswith("//", i):
                end = text.find("\n", i)
                end = n if end < 0 else end
                blank(i, end)
                i = end
                continue
            if text.startswith("/*", i):
                depth, j = 1, i + 2
                while j < n and depth:
                    if text.startswith("/*", j):
                        depth, j = depth + 1, j + 2
                    elif text.startswith("*/", j):
                        depth, j = depth - 1, j + 2
                    else:
                        j += 1
                blank(i, j)
                i = j
                continue
            match = re.compile(r'(#*)("""|")').match(text, i)
            if c in '#"' and match and (c == '"' or match.group(1)):
                hashes = len(match.group(1))
                multiline = match.group(2) == '"""'
                start = i
                i = match.end()
                stack.append(("string", hashes, multiline))
                if not in_literal:
                    blank(start, i)
                continue
            if c == "(":
                stack[-1] = ("code", frame[1] + 1)
            elif c == ")":
                if in_literal and frame[1] == 0:
                    # The end of an interpolation: back into its string.
                    stack.pop()
                    blank(i, i + 1)
                    i += 1
                    continue
                stack[-1] = ("code", frame[1] - 1)
            if in_literal:
                blank(i, i + 1)
            i += 1
            continue
        # Inside a string literal.
        _, hashes, multiline = frame
        terminator = ('"""' if multiline else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        if text.startswith(escape, i):
            after = i + len(escape)
            if after < n and text[after] == "(":
                stack.append(("code", 0))
                blank(i, after + 1)
                i = after + 1
                continue
            blank(i, after + 1)
            i = after + 1
            continue
        if text.startswith(terminator, i):
            stack.pop()
            blank(i, i + len(terminator))
            i += len(terminator)
            continue
        if text[i] == "\n" and not multiline:
            # An unterminated single-line literal: give up on it rather than on the file.
            stack.pop()
            i += 1
            continue
        blank(i, i + 1)
        i += 1
    return "".join(out)


TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|`[^`\n]*`|->|\S")
TYPE_KEYWORDS = {"struct", "class", "enum", "actor", "extension", "protocol"}
# Words that begin another declaration: met before a `{`, they end a body-less requirement.
DECLARATION_WORDS = {
    "func", "init", "deinit", "subscript", "var", "let", "case", "typealias", "associatedtype",
    "struct", "class", "enum", "actor", "extension", "protocol", "static", "public", "private",
    "internal", "fileprivate", "package", "open", "mutating", "nonmutating", "nonisolated",
    "override", "final", "required", "convenience", "import",
}


class Function:
    def __init__(self, name, path, line, end_line):
        self.name, self.path, self.line, self.end_line = name, path, line, end_line

    @property
    def length(self):
        return self.end_line - self.line + 1


def functions_in(path):
    """Every function, initializer, subscript and computed property with a body in one file."""
    with open(path, encoding="utf-8", errors="replace") as file:
        code = blank_comments_and_strings(file.read())
    line_starts = [0] + [m.end() for m in re.finditer("\n", code)]

    def line_of(position):
        low, high = 0, len(line_starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if line_starts[middle] <= position:
                low = middle
            else:
                high = middle - 1
        return low + 1

    tokens = [(m.group(0), m.start()) for m in TOKEN.finditer(code)]
    found = []
    # Each open brace: (kind, name, start token index) where kind is "type", "function" or
    # "block" (closures, statements, accessors).
    braces = []
    pending = []  # what the next `{` opens: ("type" | "function", name, start position)
    i = 0
    while i < len(tokens):
        word, position = tokens[i]
        previous = tokens[i - 1][0] if i else ""
        following = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if previous == ".":
            i += 1
            continue
        if word in TYPE_KEYWORDS and re.match(r"[A-Za-z_`]", following) and following not in (
            DECLARATION_WORDS | {"in", "as", "is"}
        ):
            name, i = following.strip("`"), i + 2
            while i + 1 < len(tokens) and tokens[i][0] == "." and re.match(r"[A-Za-z_`]", tokens[i + 1][0]):
                name, i = name + "." + tokens[i + 1][0].strip("`"), i + 2  # extension Outer.Inner
            pending.append(("type", name, position))
            continue
        head = None
        if word == "func" and following:
            head = following.strip("`")
            if not re.match(r"[A-Za-z_]", head):  # an operator
                head = "func " + head
            i += 2
        elif word == "init" and following in ("(", "?", "!", "<"):
            head = "init"
            i += 1
        elif word in ("deinit", "subscript") and following in ("{", "(", "<"):
            head = word
            i += 1
        elif word == "var" and re.match(r"[A-Za-z_`]", following):
            if i + 2 < len(tokens) and tokens[i + 2][0] == ":":
                head = following.strip("`")
                i += 2
            else:
                i += 1
                continue
        if head is not None:
            body = body_start(tokens, i, code, is_property=word == "var")
            if body is not None:
                pending.append(("function", head, position))
                i = body
            continue
        if word == "{":
            if pending and pending[-1][0] == "type":
                kind, name, start = pending.pop()
                braces.append(("type", name, start))
            elif pending and pending[-1][0] == "function":
                kind, name, start = pending.pop()
                braces.append(("function", name, start))
            else:
                braces.append(("block", None, position))
        elif word == "}":
            if braces:
                kind, name, start = braces.pop()
                if kind == "function":
                    qualified = ".".join([b[1] for b in braces if b[0] in ("type", "function")] + [name])
                    found.append(Function(qualified, path, line_of(start), line_of(position)))
            pending.clear()  # a type keyword without its body was not one (`for actor in ...`)
        i += 1
    return found


def body_start(tokens, i, code, is_property):
    """The index of the `{` that opens the body of the declaration whose head starts at `i`.

    None when the declaration has no body (a protocol requirement): another declaration, a
    closing brace or a `;` comes first at the head's own depth. For a property, a `=` or the end
    of its line first also means no body (a stored property, or a closure that initializes it).
    """
    depth = 0
    line_end = code.find("\n", tokens[i][1]) if i < len(tokens) else -1
    while i < len(tokens):
        word, position = tokens[i]
        if word in ("(", "[", "<"):
            depth += 1
        elif word in (")", "]", ">"):
            depth = max(0, depth - 1)
        elif depth == 0:
            if word == "{":
                return i
            if word in ("}", ";") or word in DECLARATION_WORDS:
                return None
            if is_property and (word == "=" or (line_end >= 0 and position > line_end)):
                return None
        elif word == "{" and is_property:
            return None
        i += 1
    return None


def swift_files(paths):
    for pattern in paths:
        matches = sorted(glob.glob(os.path.join(REPOSITORY, pattern) if not os.path.isabs(pattern) else pattern))
        if not matches and os.path.exists(pattern):
            matches = [pattern]
        for match in matches:
            if os.path.isfile(match):
                if match.endswith(".swift"):
                    yield match
                continue
            for folder, folders, files in os.walk(match):
                folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS)
                for name in sorted(files):
                    if name.endswith(".swift"):
                        yield os.path.join(folder, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", metavar="PATH", help="Swift files or folders")
    parser.add_argument("--over", type=int, default=60, metavar="N", help="list bodies over N lines (60)")
    parser.add_argument("--fail-over", type=int, metavar="M", help="exit 1 when a body runs over M lines")
    arguments = parser.parse_args()
    functions = []
    for path in swift_files(arguments.paths or DEFAULT_PATHS):
        functions.extend(functions_in(path))
    functions.sort(key=lambda f: (-f.length, f.path, f.line))
    over_60 = sum(1 for f in functions if f.length > 60)
    over_80 = sum(1 for f in functions if f.length > 80)
    print(f"{len(functions)} function bodies; {over_60} over 60 lines, {over_80} over 80")
    for function in functions:
        if function.length <= arguments.over:
            break
        shown = os.path.relpath(function.path, REPOSITORY) if function.path.startswith(REPOSITORY) else function.path
        print(f"{function.length:5}  {function.name}  {shown}:{function.line}")
    if arguments.fail_over is not None and functions and functions[0].length > arguments.fail_over:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
