"""ARCHITECTURE.md and CONTRIBUTING.md live at the repository's root, where GitHub shows them, and
in the site through docs/architecture.md and docs/contributing.md, which include them. Their links
are relative to the root; this rewrites them as the site needs while they are included: a link to
the other root page goes to its page in the site, a link into docs/ to that page, and a link to a
source file (core/LAYERS, a header) becomes the path in code, since the site has no source tree."""

import re

ROOT_PAGES = {"ARCHITECTURE.md": "architecture.md", "CONTRIBUTING.md": "contributing.md"}
LINK = re.compile(r"\[([^\]]+)\]\(([^)#\s]+)(#[^)\s]*)?\)")


def _rewrite(match):
    text, target, anchor = match.group(1), match.group(2), match.group(3) or ""
    if "://" in target:
        return match.group(0)
    if target in ROOT_PAGES:
        return "[%s](%s%s)" % (text, ROOT_PAGES[target], anchor)
    if target.startswith("docs/"):
        return "[%s](%s%s)" % (text, target[len("docs/") :], anchor)
    return text if text.startswith("`") else "`%s`" % text


def _on_include_read(app, relative_path, parent_docname, content):
    if relative_path.name in ROOT_PAGES:
        content[0] = LINK.sub(_rewrite, content[0])


def setup(app):
    app.connect("include-read", _on_include_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
