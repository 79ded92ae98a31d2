"""The resampling engine: cells, replicate tables, intervals, p-values, bootstrap results and
statistics across runs, and the torch.distributed reduction. It knows no metric family.
"""
