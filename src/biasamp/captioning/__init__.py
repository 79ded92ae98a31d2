"""Bias amplification in image captions: LIC, DBAC and caption statistics.

* :func:`lic`: leakage in captioning (Hirota, Nakashima & Garcia 2022);
* :func:`dbac`: directional bias amplification in captioning (Nair, Tokas &
  Kerner 2025), both directions;
* :func:`caption_gender_stats`: gender error, neutral rate and ratio of
  captions (Burns et al. 2018), no attacker;
* :func:`caption_labels`: words found in captions as a label matrix, so that
  the co-occurrence metrics run on captions;
* :func:`caption_section`: the data of a report section for a result;
* the word lists :data:`GENDER_WORDS`, :data:`RACE_WORDS`,
  :data:`COCO_OBJECT_WORDS`, and :func:`tokenize`.
"""

from ._text import (
    COCO_OBJECT_WORDS,
    GENDER_WORDS,
    MASK_TOKEN,
    RACE_WORDS,
    UNK_TOKEN,
    tokenize,
)
from .dbac import DBACDirectionResult, DBACResult, dbac
from .lic import LICResult, lic
from .section import CAPTION_COLUMNS, caption_section
from .stats import CaptionGenderStats, caption_gender_stats, caption_labels

__all__ = [
    "CAPTION_COLUMNS",
    "COCO_OBJECT_WORDS",
    "GENDER_WORDS",
    "MASK_TOKEN",
    "RACE_WORDS",
    "UNK_TOKEN",
    "CaptionGenderStats",
    "DBACDirectionResult",
    "DBACResult",
    "LICResult",
    "caption_gender_stats",
    "caption_labels",
    "caption_section",
    "dbac",
    "lic",
    "tokenize",
]
