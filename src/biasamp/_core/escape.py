"""Text from the data (group, class and column names, titles) made safe for each output format.

Names in a report come from the user's data, so they may hold anything: HTML,
Markdown links, newlines, terminal escape sequences, NUL bytes, bidirectional
overrides, TeX commands. Every renderer passes every piece of text through the
one function of its format (docs/safety.md):

* :func:`plain` — the shared first step: one line, no control character.
  C0 and C1 controls and DEL are written as visible escapes (``\\x1b``), the
  bidirectional embedding, override and isolate controls (U+202A–U+202E,
  U+2066–U+2069) as ``\\u202e`` (so a name cannot reorder the text after it),
  lone surrogates (undecodable bytes of a file name) as ``\\udcff``; line
  breaks (``\\n``, ``\\r``, U+0085, U+2028, U+2029, ...) become one space.
* :func:`terminal` — :func:`plain` (newlines kept on request, for messages).
* :func:`markdown` — :func:`plain`, then ``\\``, a ``<`` that could open
  raw HTML or an autolink, a ``&`` that could open an entity, and the ``](``
  of a link escaped (no raw HTML, no link, no autolink, no new block); ``|``
  too in a table cell. Emphasis characters (``*``, ``_``) are left as they
  are: they change the look of a name, never the document.
* :func:`tex` — :func:`plain`, then LaTeX's special characters escaped.
* :func:`yaml_str` — a YAML double-quoted scalar: the exact value, every
  character YAML cannot hold raw (controls, DEL, C1, line separators, bidi
  controls, U+FEFF, U+FFFE/U+FFFF, surrogates) as a ``\\u`` escape.
* :func:`plot` — :func:`plain`, then ``$`` escaped for matplotlib's mathtext,
  or TeX's specials when ``text.usetex`` is on.
* HTML (:mod:`biasamp.report._html`): :func:`plain`, then :func:`html.escape`.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["markdown", "plain", "plot", "terminal", "tex", "yaml_str"]

_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f" + _BIDI + "\ud800-\udfff]")
_BREAK = re.compile("\r\n|[" + _BREAKS + "]")


def _visible(m: re.Match) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def plain(text: Any, *, newlines: bool = False) -> str:
    """``text`` as printable text: controls, bidi controls and surrogates visible; line breaks as spaces.

    With ``newlines=True`` a ``\\n`` (and ``\\r\\n``) is kept (a multi-line
    message); other line breaks still become a space.

    >>> plain("a\\x1b[2Jb\\nc\\u202ed")
    'a\\\\x1b[2Jb c\\\\u202ed'
    """
    text = str(text)
    if newlines:
        text = "\n".join(_BREAK.sub(" ", part) for part in text.replace("\r\n", "\n").split("\n"))
    else:
        text = _BREAK.sub(" ", text)
    return _CONTROL.sub(_visible, text.replace("\t", " "))


def terminal(text: Any, *, newlines: bool = False) -> str:
    """Text for a terminal: no escape sequence reaches it (see :func:`plain`)."""
    return plain(text, newlines=newlines)


_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")  # the start of raw HTML or of an autolink (not "<0.001")
_MD_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")  # an entity would show another character


def markdown(text: Any, *, cell: bool = False) -> str:
    """Text for Markdown (GitHub-flavoured): no raw HTML, link, autolink or new block; ``cell``: ``|`` escaped."""
    text = _MD_ENTITY.sub("&amp;", plain(text).replace("\\", "\\\\"))
    text = _MD_TAG.sub("&lt;", text).replace("](", "\\](")
    return text.replace("|", "\\|") if cell else text


_TEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}


def tex(text: Any) -> str:
    """Plain text for LaTeX: one line (no comment end, no paragraph break), special characters escaped."""
    return "".join(_TEX_SPECIAL.get(c, c) for c in plain(text))


_YAML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029" + _BIDI
                          + "\ud800-\udfff\ufeff\ufffe\uffff]")


def yaml_str(value: Any) -> str:
    """A YAML double-quoted scalar holding ``value`` exactly, with nothing YAML cannot read raw.

    >>> yaml_str("a\\x7fb\\u2028")
    '"a\\\\u007fb\\\\u2028"'
    """
    text = json.dumps(str(value), ensure_ascii=False)  # JSON escapes ", \\ and C0 controls
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def plot(text: Any, *, usetex: bool = False) -> str:
    """Text for a matplotlib label: no mathtext (``$`` escaped), or every TeX special escaped with usetex."""
    if usetex:
        return tex(text)
    return plain(text).replace("$", r"\$")
