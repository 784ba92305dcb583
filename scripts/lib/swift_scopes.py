"""The types and functions of a Swift file, with where each begins and ends: what
scripts/check-architecture.py and scripts/expectation-less-tests.py read.

Comments and string literals are blanked first (scripts/long-functions.py's
`blank_comments_and_strings`, so that a brace or a `#expect` in a string or a comment counts for
nothing); then one walk over the tokens matches each `{` of a type (`struct`, `class`, `enum`,
`actor`, `extension`, `protocol`) or of a function (`func`, `init`, `deinit`, `subscript`, a
computed `var`) with its `}`. A closure belongs to the function around it. Standard library only.
"""

import importlib.util
import os
import re

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("long_functions", os.path.join(_HERE, "..", "long-functions.py"))
_long_functions = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_long_functions)

blank_comments_and_strings = _long_functions.blank_comments_and_strings
TOKEN = _long_functions.TOKEN
TYPE_KEYWORDS = _long_functions.TYPE_KEYWORDS
DECLARATION_WORDS = _long_functions.DECLARATION_WORDS
body_start = _long_functions.body_start


class Scope:
    """A type or a function: `kind` is "type" or "function"; `names` are the enclosing scopes'
    names and its own, outermost first; `start` is the position of its keyword, `open` and
    `close` of its braces, in `code` (the file with comments and strings blanked)."""

    def __init__(self, kind, names, start, open_, close, code):
        self.kind, self.names, self.start, self.open, self.close, self.code = kind, names, start, open_, close, code

    @property
    def name(self):
        return self.names[-1]

    @property
    def body(self):
        return self.code[self.open + 1 : self.close]

    @property
    def line(self):
        return self.code.count("\n", 0, self.start) + 1


class SwiftFile:
    def __init__(self, path):
        self.path = path
        with open(path, encoding="utf-8", errors="replace") as file:
            self.text = file.read()
        self.code = blank_comments_and_strings(self.text)
        self.scopes = _scopes(self.code)

    def line_of(self, position):
        return self.code.count("\n", 0, position) + 1

    def enclosing(self, position, kind=None):
        """The scopes around `position`, outermost first (of `kind` only, if given)."""
        return [s for s in self.scopes if s.open < position < s.close and (kind is None or s.kind == kind)]


def _scopes(code):
    tokens = [(m.group(0), m.start()) for m in TOKEN.finditer(code)]
    found = []
    braces = []  # (kind, name, start, open position)
    pending = []  # what the next `{` opens: (kind, name, start position)
    i = 0
    while i < len(tokens):
        word, position = tokens[i]
        previous = tokens[i - 1][0] if i else ""
        following = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if previous == ".":
            i += 1
            continue
        if (
            word in TYPE_KEYWORDS
            and re.match(r"[A-Za-z_`]", following)
            and following not in (DECLARATION_WORDS | {"in", "as", "is"})
        ):
            name, i = following.strip("`"), i + 2
            while i + 1 < len(tokens) and tokens[i][0] == "." and re.match(r"[A-Za-z_`]", tokens[i + 1][0]):
                name, i = name + "." + tokens[i + 1][0].strip("`"), i + 2
            pending.append(("type", name, position))
            continue
        head = None
        if word == "func" and following:
            head = following.strip("`")
            i += 2
        elif word == "init" and following in ("(", "?", "!", "<"):
            head, i = "init", i + 1
        elif word in ("deinit", "subscript") and following in ("{", "(", "<"):
            head, i = word, i + 1
        elif word == "var" and re.match(r"[A-Za-z_`]", following):
            if i + 2 < len(tokens) and tokens[i + 2][0] == ":":
                head, i = following.strip("`"), i + 2
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
            if pending:
                kind, name, start = pending.pop()
                braces.append((kind, name, start, position))
            else:
                braces.append(("block", None, position, position))
        elif word == "}":
            if braces:
                kind, name, start, opened = braces.pop()
                if kind in ("type", "function"):
                    names = [b[1] for b in braces if b[0] in ("type", "function")] + [name]
                    found.append(Scope(kind, names, start, opened, position, code))
            pending.clear()
        i += 1
    return found


def swift_files(root, folder):
    for directory, folders, files in os.walk(os.path.join(root, folder)):
        folders[:] = sorted(f for f in folders if f not in (".build", ".git", ".swiftpm"))
        for name in sorted(files):
            if name.endswith(".swift"):
                yield os.path.join(directory, name)
