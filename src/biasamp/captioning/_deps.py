"""The one place the captioning package imports biasamp's private helpers.

Every other module of :mod:`biasamp.captioning` imports these names from here
(or from public modules), so a move of a private module elsewhere in the
package is a change to this file alone.
"""

from __future__ import annotations

from biasamp._core.labels import _as_array, check_consistent_length, encode_labels
from biasamp._core.progress import progress_bar
from biasamp._core.results import ResultMixin, fmt
from biasamp._engine.resample import check_random_state, seed_sequence
from biasamp._engine.runs import _check_n_boot as check_n_boot
from biasamp._engine.runs import _check_n_iter as check_n_iter_bound
from biasamp._engine.runs import combined_standard_error, confidence_interval, iterations_and_data_intervals
from biasamp.predictability._attackers import _check_attacker, single_threaded
from biasamp.predictability._metrics import _PARALLEL_MIN_SECONDS, _idle_cores

__all__ = [
    "combined_standard_error",
    "_PARALLEL_MIN_SECONDS",
    "ResultMixin",
    "_as_array",
    "_check_attacker",
    "_idle_cores",
    "check_consistent_length",
    "check_n_boot",
    "check_n_iter_bound",
    "check_random_state",
    "confidence_interval",
    "encode_labels",
    "fmt",
    "iterations_and_data_intervals",
    "progress_bar",
    "seed_sequence",
    "single_threaded",
]
