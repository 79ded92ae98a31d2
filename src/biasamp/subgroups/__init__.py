"""The subgroup scan: where a statistic lives, with intervals adjusted for the selection (docs/scan.md)."""

from biasamp.subgroups._accumulator import ScanAccumulator
from biasamp.subgroups._levels import FeatureLevels
from biasamp.subgroups._result import ScanResult
from biasamp.subgroups._scan import feature_levels, scan

__all__ = ["FeatureLevels", "ScanAccumulator", "ScanResult", "feature_levels", "scan"]
