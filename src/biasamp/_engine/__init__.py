"""The resampling engine: cells, replicate tables, intervals, p-values, bootstrap results and
statistics across runs, threshold sweeps (one sort per score column; the kernels are the
families'), and the torch.distributed reduction. It knows no metric family.
"""
