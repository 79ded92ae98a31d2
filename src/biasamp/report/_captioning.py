"""The captioning section of the audit report (LIC, DBAC, caption gender statistics).

Registered here (importing this module registers it; :mod:`biasamp.report`
does) from the data that :func:`biasamp.captioning.section.audit_section`
computes: the captioning package sits below the report and does not import
it. The section runs when :func:`~biasamp.audit` is given ``captions=``
(``biasamp audit``: a ``caption_pred`` column, or ``--captions-pred``), and
is left out of the report otherwise. A streamed audit runs it on its sample
of test rows (:mod:`biasamp.report._stream`).
"""

from __future__ import annotations

from biasamp.captioning.section import CITATION, HOW_TO_READ, KEY, NEEDS, TITLE, audit_section
from biasamp.report._inputs import AuditInputs, AuditOptions
from biasamp.report._registry import FigureSpec, SectionData, register_section


@register_section(KEY, title=TITLE, citation=CITATION, how_to_read=HOW_TO_READ, needs=NEEDS,
                  applicable=lambda inp: inp.captions is not None, order=70, omit_when_skipped=True,
                  scales={"LIC": "predictability", "DBAC": "predictability"})
def _captioning_section(inp: AuditInputs, opt: AuditOptions) -> SectionData:
    hard = inp.task_pred is not None and not inp.is_soft("task_pred")  # DBAC's model-side targets are labels
    data = audit_section(inp.attr, inp.task, inp.captions, task_pred=inp.task_pred if hard else None,
                         n_iter=opt.n_iter, n_boot=opt.n_boot, level=opt.level, random_state=opt.seed("captioning"),
                         progress=opt.progress)
    notes = list(data["notes"])
    if inp.weight is not None:
        notes.append("LIC, DBAC and the caption statistics ignore sample_weight: every image counts once")
    return SectionData(summary=data["summary"], tables=data["tables"],
                       figures=[FigureSpec(**f) for f in data["figures"]], notes=notes)
