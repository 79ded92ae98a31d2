"""The registry of report sections, and what a section builder returns.

A metric family of :func:`biasamp.audit` is a :class:`SectionBuilder` (title,
citation, "how to read", an ``applicable(inputs)`` test and a
``compute(inputs, options)`` function) registered with
:func:`register_section`; :func:`section_builders` lists them in report order.
``compute`` returns a :class:`SectionData`: summary rows, detail tables,
:class:`FigureSpec` plots and notes. :mod:`biasamp.report` re-exports these
names (its public face) and imports the built-in builders
(``biasamp.report._sections``), which register themselves here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from biasamp.report._config import AuditConfig
from biasamp.report._inputs import AuditInputs

__all__ = ["BASE_RATES", "SCALES", "FigureSpec", "SectionBuilder", "SectionData", "register_section",
           "section_builders"]

#: what a headline number compares (:meth:`Report.overview <biasamp.Report.overview>` sets measures of one
#: kind against another): ``"difference"``, rates subtracted (BiasAmp->, DP); ``"ratio"``, rates divided (DI,
#: differential fairness' log-ratio epsilon); ``"predictability"``, how well an attacker predicts one variable
#: from the other (DPA, LA)
SCALES = ("difference", "ratio", "predictability")

#: the name of the detail table of each group's rate of each task class in the labels and in the predictions
#: (columns ``class``, ``group``, ``n``, ``small``, ``headline``, ``rate_true``, ``rate_pred``), kept by a
#: section that counts them; the overview reads it from whichever section has it
BASE_RATES = "base rates"


@dataclass(eq=False)
class FigureSpec:
    """A plot, described by its data (rendered to SVG only by the HTML layer).

    Attributes
    ----------
    key : str
        Identifier, unique within its section.
    title : str
    kind : {"hbar", "grouped_bar", "strip", "line"}
        ``"hbar"``: horizontal bars of ``value`` per ``label``, one panel per
        ``facet``, sorted by ``|value|``; ``"grouped_bar"``: bars of ``value``
        per ``x``, one bar per ``hue``, one panel per ``facet``; ``"strip"``:
        the distribution of ``value`` per ``label`` (points and their mean);
        ``"line"``: ``value`` against ``x``, one line per ``label``, with a
        ``low``/``high`` band where given (curves, :mod:`biasamp.curves`).
    data : pandas.DataFrame
        Long-format data with the columns the kind needs. Optional columns,
        used where present:

        * ``facet``: one panel per value, each with its own value axis (so
          A->T and T->A are each readable whatever their scale);
        * ``low``, ``high``: an interval of ``value`` (error bars on
          ``"hbar"`` and ``"grouped_bar"``, a band on ``"line"``);
        * ``n``: a size: the group size of a ``"grouped_bar"`` hue, shown in
          the legend (``"female (n=1,204)"``, a range where it varies), or
          the support of an ``"hbar"`` bar, shown after its label;
        * ``small`` (bool): a group (or pair) below the minimum size: drawn
          pale and hatched, and marked "small" in the legend or label;
        * ``effect``: ``"grouped_bar"`` only: how much the ``x`` category
          matters (e.g. its metric gap), which ranks the categories.

        Charts stay readable at hundreds of categories: a ``"grouped_bar"``
        panel shows at most 12 ``x`` (fewer with many hues), those of largest
        ``|effect|``, or without ``effect`` of largest gap (max - min of
        ``value`` over the hues not flagged ``small``); ``"hbar"`` shows the
        25 largest ``|value|`` per panel, ``"strip"`` the 20 largest
        ``|mean|``, ``"line"`` the 8 largest ``max |value|``. What is left
        out (how many, the largest effect among them) is written on the
        figure and appended to the caption in the HTML.
    caption : str
    """

    key: str
    title: str
    kind: str
    data: pd.DataFrame
    caption: str = ""


@dataclass(eq=False)
class SectionData:
    """What a builder's ``compute`` returns; :func:`~biasamp.audit` adds the builder's metadata.

    Attributes
    ----------
    summary : list of dict
        One dict per headline number, with keys among ``biasamp.report.SUMMARY_COLUMNS``.
    tables : dict of str -> pandas.DataFrame
        Detail tables (per pair, per class, per iteration, ...).
    figures : list of FigureSpec
    notes : list of str
    """

    summary: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    figures: list = field(default_factory=list)
    notes: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class SectionBuilder:
    """A metric family of the report.

    Attributes
    ----------
    key : str
        Stable identifier (JSON key, HTML anchor).
    title : str
    citation : str
        The paper the metric comes from.
    how_to_read : str
        A few sentences for the reader of the report.
    needs : str
        What the inputs must contain (shown when the section is skipped).
    applicable : callable
        ``applicable(inputs: AuditInputs) -> bool``.
    compute : callable
        ``compute(inputs: AuditInputs, options: AuditConfig) -> SectionData``.
    order : float
        Position in the report (ascending).
    omit_when_skipped : bool
        Leave the section out of the report, instead of listing it as
        skipped, when its inputs are absent (an optional input such as the
        captions).
    scales : mapping of str to str
        What each headline metric (by its ``metric`` column) compares, one
        of :data:`SCALES`; the overview groups the readings by it. A metric
        not in it is compared with none.
    """

    key: str
    title: str
    citation: str
    how_to_read: str
    needs: str
    applicable: Callable[[AuditInputs], bool]
    compute: Callable[[AuditInputs, AuditConfig], SectionData]
    order: float = 100.0
    omit_when_skipped: bool = False
    scales: Mapping[str, str] = field(default_factory=dict)


_BUILDERS: dict[str, SectionBuilder] = {}


def register_section(
    key: str,
    *,
    title: str,
    citation: str,
    how_to_read: str,
    needs: str,
    applicable: Callable[[AuditInputs], bool],
    order: float = 100.0,
    omit_when_skipped: bool = False,
    scales: Mapping[str, str] | None = None,
) -> Callable:
    """Decorator registering ``compute(inputs, options) -> SectionData`` as a report section.

    Registering a builder is all it takes to add a metric family to
    :func:`~biasamp.audit` and to every rendering of :class:`~biasamp.Report`; re-registering a
    key replaces the builder.

    Parameters
    ----------
    key, title, citation, how_to_read, needs, applicable, order, omit_when_skipped
        The section's key, its title, citation, "how to read" text and what it
        needs, a predicate ``applicable(inputs)``, its place in the report
        (sections are sorted by ``order``), and whether it is left out rather
        than listed as skipped when not applicable; see
        ``biasamp.report.SectionBuilder``.
    scales : mapping of str to str, optional
        What each of its headline metrics compares (``{"DI": "ratio"}``;
        values among ``"difference"``, ``"ratio"``, ``"predictability"``),
        for the overview (:meth:`Report.overview <biasamp.Report.overview>`).

    Returns
    -------
    callable
        The decorator; it returns ``compute`` unchanged.

    Examples
    --------
    >>> from biasamp.report import SectionData, register_section, section_builders
    >>> @register_section("example", title="Example", citation="-", how_to_read="-",
    ...                   needs="nothing", applicable=lambda inputs: False, order=999)
    ... def _example(inputs, options):
    ...     return SectionData()
    >>> "example" in [b.key for b in section_builders()]
    True
    >>> from biasamp.report import _BUILDERS; del _BUILDERS["example"]  # clean up
    """

    unknown = sorted(set((scales or {}).values()) - set(SCALES))
    if unknown:
        raise ValueError(f"scales of section {key!r} must be among {list(SCALES)}, got {unknown}")

    def deco(compute: Callable[[AuditInputs, AuditConfig], SectionData]) -> Callable:
        _BUILDERS[key] = SectionBuilder(key, title, citation, how_to_read, needs, applicable, compute, order,
                                        omit_when_skipped, dict(scales or {}))
        return compute

    return deco


#: functions giving sections derived from other declarations (``biasamp.report._sections``: the section of every
#: registered count-based family that writes none of its own); a registered builder of the same key wins
DERIVED: list[Callable[[], list[SectionBuilder]]] = []


def _builders() -> dict[str, SectionBuilder]:
    out = dict(_BUILDERS)
    for derive in DERIVED:
        for builder in derive():
            out.setdefault(builder.key, builder)
    return out


def section_builders() -> list[SectionBuilder]:
    """The section builders, registered or derived (a count-based family's declared section), in report order."""
    return sorted(_builders().values(), key=lambda b: (b.order, b.key))


def section_builder(key: str) -> SectionBuilder | None:
    """The builder of section ``key`` (registered or derived), None if there is none."""
    return _builders().get(key)
