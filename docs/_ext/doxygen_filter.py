"""Doxygen INPUT_FILTER for the SDK headers (docs/Doxyfile): reads a header, prints it with its
plain comments made Doxygen comments, so the headers keep their ordinary comment style.

- A comment block (/* */ or //) that a declaration follows at once documents it: /** or ///.
- A comment after code on its line documents that member: /**< or ///<.
- The file's opening comment ("tide/x.h: what it is ...") documents the file (@file).
- A field named `requires` (TidePluginInfo's; a C++20 keyword that Doxygen's parser takes as
  one even in C) is written REQUIRES_FIELD, which scripts/docs.sh turns back in the XML.
- Section banners (/* ==== */, /* --- Memory --- */) and comments a blank line or a
  preprocessor line follows stay plain.
"""

import re
import sys

BANNER = re.compile(r"^\s*(/\*|//)\s*(={3,}|-{3}|\s*\*/)")
BLOCK_OPEN = re.compile(r"^(\s*)/\*(?![*!])")
LINE_COMMENT = re.compile(r"^(\s*)//(?![/!])")
TRAILING_BLOCK = re.compile(r"^(?P<code>\s*\S.*?;|\s*\S.*?,|\s*\S.*?\{)(?P<space>\s*)/\*(?![*!<])")
TRAILING_LINE = re.compile(r"^(?P<code>\s*[^/\s].*?)(?P<space>\s+)//(?![/!<])")
REQUIRES = re.compile(r"\brequires;")
REQUIRES_FIELD = "tide_doxygen_requires_field"
FILE_TITLE = re.compile(r"^(/\*|//) (tide/[\w/.]+): ")


def code_follows(lines, i):
    """Whether the line after a comment ending at line i is a declaration."""
    if i + 1 >= len(lines):
        return False
    nxt = lines[i + 1].strip()
    return bool(nxt) and not nxt.startswith("#") and not nxt.startswith("}")


def block_end(lines, i):
    j = i
    while "*/" not in lines[j]:
        j += 1
    return j


def line_block_end(lines, i):
    j = i
    while j + 1 < len(lines) and LINE_COMMENT.match(lines[j + 1]):
        j += 1
    return j


def outside_string(code):
    return code.count('"') % 2 == 0


def convert(lines):
    out = list(lines)
    i = 0
    if lines and FILE_TITLE.match(lines[0]):
        # "/* tide/x.h: text" -> "/** @file tide/x.h" and the text below it.
        m = FILE_TITLE.match(lines[0])
        style = "/**" if m.group(1) == "/*" else "///"
        cont = " *" if style == "/**" else "///"
        rest = lines[0][m.end() :]
        out[0] = "%s @file %s\n%s %s" % (style, m.group(2), cont, rest)
        if style == "/**":
            i = block_end(lines, 0) + 1
        else:
            end = line_block_end(lines, 0)
            for k in range(1, end + 1):
                out[k] = LINE_COMMENT.sub(r"\1///", lines[k], count=1)
            i = end + 1
    while i < len(lines):
        line = lines[i]
        if BANNER.match(line):
            i = block_end(lines, i) + 1 if line.lstrip().startswith("/*") else i + 1
            continue
        m = BLOCK_OPEN.match(line)
        if m:
            end = block_end(lines, i)
            if code_follows(lines, end):
                out[i] = BLOCK_OPEN.sub(r"\1/**", line, count=1)
            i = end + 1
            continue
        m = LINE_COMMENT.match(line)
        if m:
            end = line_block_end(lines, i)
            if code_follows(lines, end):
                for k in range(i, end + 1):
                    out[k] = LINE_COMMENT.sub(r"\1///", lines[k], count=1)
            i = end + 1
            continue
        m = TRAILING_BLOCK.match(line)
        if m and outside_string(m.group("code")):
            out[i] = line[: m.end("space")] + "/**<" + line[m.end() :]
            i = block_end(lines, i) + 1
            continue
        m = TRAILING_LINE.match(line)
        if m and outside_string(m.group("code")) and not line.lstrip().startswith("#"):
            out[i] = line[: m.end("space")] + "///<" + line[m.end() :]
        i += 1
    return [REQUIRES.sub(REQUIRES_FIELD + ";", line) for line in out]


def main():
    with open(sys.argv[1]) as f:
        lines = f.read().split("\n")
    sys.stdout.write("\n".join(convert(lines)))


if __name__ == "__main__":
    main()
