"""The structural check of a report page and the hostile strings it is tried with: shared by
the ``py_pages`` fuzz target and the report's tests (a plain module: importing it instruments
nothing, unlike the targets).
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

#: Hostile fragments: each breaks out of one HTML, script, attribute or Plotly context.
HOSTILE = (
    '<img src=x onerror="document.documentElement.dataset.xss=1">',
    "</script><script>document.documentElement.dataset.xss=2</script>",
    "\"'><svg onload=\"document.documentElement.dataset.xss=3\">",
    "</title></textarea></style><script>document.documentElement.dataset.xss=4</script>",
    "<b>bold</b><br><a href=\"javascript:document.documentElement.dataset.xss=5\">link</a>",
    "&amp;&lt;&#60;&#x3c; <!-- --> <![CDATA[ ]]>",
    "\u2028\u2029 line separators",
    "{{ 7*7 }}{% raw %}%{y}%{hovertext}",
    "javascript:void(0)",
    " x\" onmouseover=\"document.documentElement.dataset.xss=6\" y=\"",
)
ALLOWED_TAGS = frozenset(["html", "head", "meta", "title", "style", "script", "body", "h1",
                          "h2", "h3", "h4", "p", "b", "code", "div", "section", "table", "thead",
                          "tbody", "tr", "th", "td", "span", "ul", "li", "select", "option",
                          "label", "details", "summary", "dl", "dt", "dd", "footer"])
ALLOWED_ATTRS = frozenset(["lang", "charset", "class", "id", "data-design", "data-key",
                           "data-value", "value", "selected", "hidden", "type"])
MARKER = re.compile(r"sbX\d+;")


class _Scan(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems, self.text, self.scripts, self.styles = [], [], [], []
        self._script = None

    def handle_starttag(self, tag, attrs):
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"element <{tag}>")
        for name, value in attrs:
            if name not in ALLOWED_ATTRS:
                self.problems.append(f"attribute {name}= on <{tag}>")
            if value and MARKER.search(value):
                self.problems.append(f"a marker in the attribute {name}= of <{tag}>")
        if tag in ("script", "style"):
            self._script = [dict(attrs).get("type"), dict(attrs).get("id"), ""]
            (self.scripts if tag == "script" else self.styles).append(self._script)

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._script = None
        elif tag not in ALLOWED_TAGS:
            self.problems.append(f"end tag </{tag}>")

    def handle_data(self, data):
        if self._script is not None:
            self._script[2] += data
        else:
            self.text.append(data)

    def handle_comment(self, data):
        self.problems.append("a comment")

    def handle_pi(self, data):
        self.problems.append("a processing instruction")

    def unknown_decl(self, data):
        self.problems.append("a declaration")


def check_page(text: str, plotly: str, script: str) -> dict:
    """Check a rendered page's structure; returns {"text": the page's text outside scripts,
    "json": the parsed JSON blocks by id}. AssertionError names the first problem: an
    element or attribute the template does not write, a marker (``sbX<n>;``) outside text and
    the JSON blocks, a JSON block with a raw ``<``, scripts other than plotly.js, the two JSON
    blocks and ``report.js``."""
    scan = _Scan()
    scan.feed(text)
    scan.close()
    assert not scan.problems, scan.problems[:5]
    kinds = [(s[0], s[1]) for s in scan.scripts]
    assert kinds == [(None, None), ("application/json", "sb-figures"),
                     ("application/json", "sb-data"), (None, None)], kinds
    assert scan.scripts[0][2] == plotly and scan.scripts[3][2] == script, "a script changed"
    assert len(scan.styles) == 1 and not MARKER.search(scan.styles[0][2]), "the style changed"
    blocks = {}
    for _, name, body in scan.scripts[1:3]:
        assert not re.search("[<>&\u2028\u2029]", body), f"a raw character in {name}"
        blocks[name] = json.loads(body)
    shown = "".join(scan.text)
    in_json = sum(len(MARKER.findall(s[2])) for s in scan.scripts[1:3])       # "style" has none
    assert len(MARKER.findall(text)) == len(MARKER.findall(shown)) + in_json, \
        "a marker outside text and JSON"
    return {"text": shown, "json": blocks}


def rename(tree, mapping: dict):
    """``tree`` with every string (value or key) in ``mapping`` replaced by its image."""
    if isinstance(tree, dict):
        return {mapping.get(k, k) if isinstance(k, str) else k: rename(v, mapping)
                for k, v in tree.items()}
    if isinstance(tree, list):
        return [rename(v, mapping) for v in tree]
    return mapping.get(tree, tree) if isinstance(tree, str) else tree
