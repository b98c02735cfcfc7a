"""Pure string emitters for generated C99: identifiers, literals, comments, array declarations.

Nothing here touches the filesystem; every function returns a ``str`` (or raises
:class:`~sensorbudget.export.errors.ExportError`).
"""

from __future__ import annotations

import json
import re
import textwrap
import unicodedata

import numpy as np

from .errors import ExportError

from .numeric import NUMERICS  # noqa: F401  (re-exported: the names of numeric.Numeric)
#: Prefix of every generated C symbol unless the user names the model.
DEFAULT_NAME = "sbmodel"
#: No generated line is longer than this.
MAX_LINE = 100

#: C89-C23 keywords, C++ keywords (headers end up in Arduino/C++ builds) and names of the standard
#: library that a generated symbol must not shadow.
C_RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto if inline
int long register restrict return short signed sizeof static struct switch typedef union unsigned
void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn
_Static_assert _Thread_local _BitInt _Decimal32 _Decimal64 _Decimal128 alignas alignof bool
constexpr false nullptr static_assert thread_local true typeof typeof_unqual
asm catch class const_cast decltype delete dynamic_cast explicit export friend mutable namespace
new noexcept operator private protected public reinterpret_cast static_cast template this throw
try typeid typename using virtual wchar_t char8_t char16_t char32_t concept consteval constinit
co_await co_return co_yield requires and and_eq bitand bitor compl not not_eq or or_eq xor xor_eq
NULL EOF errno assert main stdin stdout stderr offsetof size_t ptrdiff_t int8_t int16_t int32_t
int64_t uint8_t uint16_t uint32_t uint64_t intptr_t uintptr_t FILE va_list
""".split())

MAX_NAME = 40  # leaves room for suffixes within C99's 63 significant characters


def sanitize_identifier(text: str) -> str:
    """ASCII identifier characters from arbitrary text: accents stripped, other characters
    become '_' (the result may start with a digit: it follows a prefix, or see
    :func:`_suggest`)."""
    ascii_text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode()
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", ascii_text)).strip("_")


def check_identifier(name: str, what: str = "name") -> str:
    """Validate a user-chosen C prefix (raises :class:`ExportError` with the reason)."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        suggestion = _suggest(name)
        raise ExportError(f"{what}={name!r} is not a C identifier (letters, digits and '_', "
                          f"starting with a letter); try {suggestion!r}")
    if len(name) > MAX_NAME:
        raise ExportError(f"{what}={name!r} has {len(name)} characters; the limit is {MAX_NAME}")
    for candidate in (name, name.upper()):
        if candidate in C_RESERVED or candidate.lower() in C_RESERVED:
            raise ExportError(f"{what}={name!r} is a C/C++ reserved word or standard name")
    return name


def _suggest(name) -> str:
    """A valid prefix close to ``name`` for an error message (found by hypothesis: '0' was
    suggested for '0')."""
    text = sanitize_identifier(str(name)).lstrip("0123456789_")[:MAX_NAME]
    return text if text and text.lower() not in C_RESERVED else DEFAULT_NAME


#: C99 5.2.4.1: significant initial characters of a macro name or internal identifier.
SIGNIFICANT = 63


def macro_names(prefix: str, labels) -> list:
    """Unique upper-case macro names ``PREFIX_<LABEL>`` for labels (collisions get ``_2``, ...),
    at most 63 characters long so they stay distinct for any C99 compiler (labels are cut to
    fit, leaving room for a 6-character suffix; found by hypothesis)."""
    room = max(1, min(MAX_NAME, SIGNIFICANT - len(prefix) - 1 - 6))
    out, seen = [], set()
    for i, label in enumerate(labels):
        base = sanitize_identifier(label).upper()[:room].rstrip("_") or f"N{i}"
        name, n = f"{prefix}_{base}", 2
        while name in seen:
            name, n = f"{prefix}_{base}_{n}", n + 1
        seen.add(name)
        out.append(name)
    return out


def c_string(text: str) -> str:
    """A C string literal for ``text``: UTF-8 bytes, non-printables as octal, no trigraphs."""
    out = []
    for byte in str(text).encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\?':
            out.append("\\" + ch)
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def c_comment(text) -> str:
    """Text safe in a ``/* */`` comment: JSON-quoted ASCII, no comment delimiters or trigraphs."""
    quoted = json.dumps(text if isinstance(text, str) else text, ensure_ascii=True, sort_keys=True)
    return quoted.replace("*/", "*\\/").replace("/*", "/\\*").replace("??", "?\\?")


def c_float(value) -> str:
    """float32 literal that parses back to exactly ``np.float32(value)`` (9 significant digits)."""
    v = np.float32(value)
    if not np.isfinite(v):
        raise ExportError(f"cannot write the non-finite value {float(value)!r} as a C float")
    text = "%.9g" % float(v)
    if not re.search(r"[.eE]", text):
        text += ".0"
    return text + "f"


def c_double(value) -> str:
    """double literal that parses back to exactly ``float(value)`` (17 significant digits)."""
    v = float(value)
    if not np.isfinite(v):
        raise ExportError(f"cannot write the non-finite value {v!r} as a C double")
    text = "%.17g" % v
    return text if re.search(r"[.eE]", text) else text + ".0"


def c_int(value, ctype: str) -> str:
    """Integer literal of ``ctype`` (int16_t, int32_t, int64_t, int, unsigned)."""
    v = int(value)
    if ctype in ("int32_t", "int64_t"):
        return f"INT{ctype[3:5]}_C({v})"
    return str(v) if ctype != "unsigned" else f"{v}u"


def literal(value, ctype: str) -> str:
    if ctype == "float":
        return c_float(value)
    if ctype == "double":
        return c_double(value)
    if ctype == "const char *":
        return c_string(value)
    return c_int(value, ctype)


def pack(items, indent: str, width: int = MAX_LINE, sep: str = ", ") -> list:
    """``items`` joined by ``sep`` into lines of at most ``width`` characters (with
    ``indent``); an item longer than a line gets a line of its own. Lines but the last end with
    ``sep`` stripped of trailing blanks."""
    lines, cur = [], ""
    for item in items:
        trial = item if not cur else cur + sep + item
        if cur and len(indent + trial) + len(sep.rstrip()) > width:
            lines.append(indent + cur + sep.rstrip())
            cur = item
        else:
            cur = trial
    lines.append(indent + cur)
    return lines


def wrap_literal(literal_text: str, indent: str, width: int = MAX_LINE) -> list:
    """A C string literal split into adjacent literals (the compiler joins them) of lines at
    most ``width`` characters; escapes are never cut."""
    body = literal_text[1:-1]
    pieces = re.findall(r"\\[0-7]{3}|\\.|.", body, flags=re.S)
    room = width - len(indent) - 3                  # quotes and a separator
    lines, cur = [], ""
    for piece in pieces:
        if cur and len(cur) + len(piece) > room:
            lines.append(f'{indent}"{cur}"')
            cur = ""
        cur += piece
    lines.append(f'{indent}"{cur}"')
    return lines


def line_comment(text: str, lead: str = "", width: int = MAX_LINE) -> str:
    """``/* text */`` (already-safe text: :func:`c_comment`) at indentation ``lead``, ending in a
    newline: one line when it fits in ``width`` columns, else the text wrapped at blanks (a word
    longer than a line, such as a long channel name, is cut) on `` * `` lines between ``/*``
    and `` */``."""
    one = f"{lead}/* {text} */"
    if len(one) <= width:
        return one + "\n"
    if "*/" in text or "/*" in text:
        raise ExportError(f"comment {text[:40]!r} contains a comment delimiter")
    body = textwrap.wrap(text, width - len(lead) - 3, break_long_words=True,
                         break_on_hyphens=False)
    return f"{lead}/*\n" + "".join(f"{lead} * {b}\n" for b in body) + f"{lead} */\n"


#: the mark of a blank where :func:`fit` may break a line (``{{ br }}`` in a template), and of
#: a place between two tokens where it may break (``{{ join }}``: nothing when not broken), and
#: of the start of a trailing comment (``{{ note }}``: its own line above the code when the line
#: does not fit)
BREAK, JOIN, NOTE = "\x01", "\x02", "\x03"
_MARKS = re.compile("[\x01\x02\x03]")


def fit(text: str, width: int = MAX_LINE) -> str:
    """``text`` (lines of C, the places where each may break marked :data:`BREAK` or
    :data:`JOIN`) as lines of at most ``width`` characters, ending in a newline: each line
    by :func:`fit_line` (a line without marks stays as it is), so a template may pass a whole
    routine through the filter and mark only the lines a long name can push past the limit."""
    body = text[:-1] if text.endswith("\n") else text
    if not _MARKS.search(body):                 # nothing to place: the text as it is
        return body + "\n"
    return "".join(fit_line(line, width) if _MARKS.search(line) else line + "\n"
                   for line in body.split("\n"))


def fit_line(text: str, width: int = MAX_LINE) -> str:
    """``text`` (one line of C, the places where it may break marked :data:`BREAK` or
    :data:`JOIN`) as lines of at most ``width`` characters, ending in a newline.

    When the line fits, each BREAK is a blank and each JOIN nothing; otherwise the pieces
    between marks are packed greedily, continuation lines indented 8 columns deeper than the
    first (4 and ending in a backslash on a preprocessor line). A piece longer than the room
    stays whole (the emitters put the marks; test_line_length checks the longest names). The
    one way generated lines are kept short (no rewrap pass afterwards). A trailing comment
    after :data:`NOTE` (with the blanks before it) stays where it is when the whole line fits,
    else goes on its own line above the code (wrapped by :func:`line_comment` when it is
    longer than a line itself: a long channel name).
    """
    if NOTE in text:
        code, note = text.rstrip("\n").split(NOTE, 1)
        lead = code[:len(code) - len(code.lstrip(" "))]
        whole = fit_line(code + note, width)       # the note keeps its blanks when it stays
        if whole.count("\n") == 1 and len(whole) - 1 <= width:
            return whole
        if len(lead + note.strip()) <= width:
            return lead + note.strip() + "\n" + fit_line(code, width)
        notes = re.findall(r"/\*(.*?)\*/", note)     # each comment wrapped on its own
        return "".join(line_comment(n.strip(), lead, width) for n in notes) + fit_line(code, width)
    parts = re.split(f"({BREAK}|{JOIN})", text.rstrip("\n"))
    lead = parts[0][:len(parts[0]) - len(parts[0].lstrip(" "))]
    pieces = [parts[0][len(lead):]] + parts[2::2]
    glue = [" " if mark == BREAK else "" for mark in parts[1::2]]
    macro = pieces[0].startswith("#")
    joined = lead + pieces[0] + "".join(g + p for g, p in zip(glue, pieces[1:]))
    if len(joined) <= width:
        return joined + "\n"
    room = width - (2 if macro else 0)
    indent = lead + " " * (4 if macro else 8)
    lines, line = [], lead + pieces[0]
    for g, piece in zip(glue, pieces[1:]):
        if len(line) + len(g) + len(piece) <= room:
            line += g + piece
        else:
            lines.append(line)
            line = indent + piece
    lines.append(line)
    return (" \\\n" if macro else "\n").join(lines) + "\n"


def array_declare(ctype: str, name: str, values, *, per_line: int = 6,
                  row_comments=None, size_macros=None, storage: str = "") -> str:
    """``static const`` 1-D or 2-D array declaration, rows optionally followed by a comment.

    ``size_macros`` (a tuple of macro names, one per dimension) replaces the numeric sizes;
    ``storage`` (e.g. ``"SB_CONST"``) goes between ``static const`` and the type.
    An empty 1-D array is written with one zero element (C99 has no zero-length arrays). No
    line is longer than :data:`MAX_LINE`: at most ``per_line`` items a line, fewer when they
    are wide; a long string is split into adjacent literals; a row comment that does not fit
    after its row goes on the line above it.
    """
    arr = np.asarray(values, dtype=object)
    qual = "static const char *const" if ctype == "const char *" else f"static const {ctype}"
    qual = qual.replace("static const ", f"static const {storage} ", 1) if storage else qual
    shape = arr.shape if arr.size else (1,)
    dims = size_macros or shape
    marked = f"{qual}{BREAK}{name}" + "".join(f"{JOIN}[{d}]" for d in dims) + " = {"
    if arr.size == 0:
        return fit(f"{marked}{BREAK}0 }};{NOTE}  /* empty */")
    decl = fit(marked)[:-1]
    lines = [decl]
    if arr.ndim == 1 and row_comments is None:
        items = [literal(v, ctype) for v in arr]
        if ctype == "const char *" and any(len(i) > MAX_LINE - 5 for i in items):
            for i, item in enumerate(items):
                # a split literal in parentheses: clang -Wstring-concatenation takes adjacent
                # literals in an initializer list for a missing comma
                parts = wrap_literal(item, "    ", MAX_LINE - 1)
                if len(parts) > 1:
                    parts[0], parts[-1] = "    (" + parts[0][4:], parts[-1] + ")"
                lines += parts
                lines[-1] += "," if i < len(items) - 1 else ""
        else:
            lines += _rows(items, per_line, "    ")
    for r, row in enumerate(arr if row_comments is not None or arr.ndim == 2 else []):
        sep = "," if r < len(arr) - 1 else " "
        comment = f"  /* {row_comments[r]} */" if row_comments is not None else ""
        if arr.ndim == 1:
            body = [f"    {literal(row, ctype)}{sep}"]
        else:
            body = _rows([literal(v, ctype) for v in row], per_line, "      ")
            body[0] = "    { " + body[0][6:]
            body[-1] += f" }}{sep}"
        if len(body) == 1 and len(body[0] + comment) <= MAX_LINE:
            body[0] += comment
        elif comment:
            body.insert(0, line_comment(row_comments[r], "    ")[:-1])
        lines += body
    return "\n".join(lines) + "\n};\n"


def _rows(items, per_line: int, indent: str) -> list:
    """Items in lines of at most ``per_line`` (fewer where they would pass MAX_LINE)."""
    out = []
    for i in range(0, len(items), per_line):
        out += pack(items[i:i + per_line], indent)
        out[-1] += "," if i + per_line < len(items) else ""
    return out


def block_comment(lines) -> str:
    """A ``/* ... */`` block from already-safe lines (each is checked for a stray terminator);
    a line longer than :data:`MAX_LINE` is wrapped at blanks, continued 4 columns deeper (a
    word longer than a line, such as a long channel name, is cut: only a comment's layout)."""
    body = []
    for line in lines:
        if "*/" in line or "/*" in line:
            raise ExportError(f"comment line {line[:40]!r} contains a comment delimiter")
        lead = line[:len(line) - len(line.lstrip())]
        body += textwrap.wrap(line.lstrip(), MAX_LINE - 3, initial_indent=lead,
                              subsequent_indent=lead + "    ", break_long_words=True,
                              break_on_hyphens=False) or [""]
    return "/*\n" + "\n".join((" * " + b).rstrip() for b in body) + "\n */\n"
