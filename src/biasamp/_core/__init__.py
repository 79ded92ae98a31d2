"""The core layer: inputs (labels, rows, weights), result helpers, deprecations, progress, atomic writes.

Nothing here imports a metric family, the engine, the report or the CLI.
"""
