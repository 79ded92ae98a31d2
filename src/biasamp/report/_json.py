"""The JSON form of a :class:`~biasamp.Report`: its schema, its check, and the tables in it.

:data:`REPORT_JSON_SCHEMA` (re-exported by :mod:`biasamp.report`) describes
what :meth:`Report.to_json <biasamp.Report.to_json>` writes;
``_check_report_json`` checks a parsed document against it (the subset of
JSON Schema it uses) before :meth:`Report.from_dict <biasamp.Report.from_dict>`
rebuilds the report; a table is written as ``{"columns", "rows"}``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from biasamp._core.results import to_builtin

__all__ = ["REPORT_JSON_SCHEMA", "SCHEMA_ID"]

SCHEMA_ID = "biasamp.report/1"


def _table_to_json(frame: pd.DataFrame) -> dict:
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index()
    return {
        "columns": [str(c) for c in frame.columns],
        "rows": [[to_builtin(v) for v in row] for row in frame.itertuples(index=False, name=None)],
    }


def _table_from_json(obj: dict) -> pd.DataFrame:
    rows = [[tuple(v) if isinstance(v, list) else v for v in row] for row in obj["rows"]]
    return pd.DataFrame(rows, columns=obj["columns"])


REPORT_JSON_SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "biasamp report",
    "type": "object",
    "required": ["schema", "biasamp_version", "title", "inputs", "options", "summary", "sections"],
    "properties": {
        "schema": {"const": SCHEMA_ID},
        "biasamp_version": {"type": "string"},
        "title": {"type": "string"},
        "source": {"type": "string"},
        "inputs": {"type": "object"},
        "options": {"type": "object"},
        "overview": {
            # Report.overview(), written for readers of the JSON; from_json recomputes it from the sections
            "type": "object",
            "required": ["disagree", "level", "attributes"],
            "properties": {
                "attributes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["attribute", "disagree", "explanation", "pairs", "headlines", "base_rates"],
                        "properties": {
                            "attribute": {"type": "string"},
                            "explanation": {"type": "array", "items": {"type": "string"}},
                            "pairs": {"type": "array", "items": {"type": "string"}},
                            "headlines": {"type": "array", "items": {"type": "object"}},
                            "base_rates": {"type": "array", "items": {"type": "object"}},
                        },
                    },
                },
            },
        },
        "summary": {"$ref": "#/$defs/table"},
        "sections": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "title", "citation", "how_to_read", "status", "message", "summary",
                             "tables", "figures", "notes"],
                "properties": {
                    "key": {"type": "string"},
                    "title": {"type": "string"},
                    "citation": {"type": "string"},
                    "how_to_read": {"type": "string"},
                    "status": {"enum": ["ok", "error", "skipped"]},
                    "message": {"type": "string"},
                    "summary": {"$ref": "#/$defs/table"},
                    "tables": {"type": "object", "additionalProperties": {"$ref": "#/$defs/table"}},
                    "figures": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["key", "title", "kind", "data", "caption"],
                            "properties": {
                                "key": {"type": "string"},
                                "title": {"type": "string"},
                                "kind": {"enum": ["hbar", "grouped_bar", "strip", "line"]},
                                "data": {"$ref": "#/$defs/table"},
                                "caption": {"type": "string"},
                            },
                        },
                    },
                    "notes": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
    "$defs": {
        "table": {
            "type": "object",
            "required": ["columns", "rows"],
            "properties": {
                "columns": {"type": "array", "items": {"type": "string"}},
                "rows": {"type": "array", "items": {"type": "array"}},
            },
        },
    },
}
"""JSON Schema (draft 2020-12) of :meth:`Report.to_json`."""

_JSON_TYPES = {"object": dict, "array": list, "string": str}


def _check_report_json(obj: Any) -> None:
    """Check ``obj`` against :data:`REPORT_JSON_SCHEMA` (the subset it uses); ``ValueError`` naming the path."""

    def fail(path: str, what: str) -> None:
        raise ValueError(f"not a biasamp report: {path or 'the top level'}: {what}")

    def walk(value: Any, schema: dict, path: str) -> None:
        if "$ref" in schema:
            schema = REPORT_JSON_SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
        if "const" in schema and value != schema["const"]:
            fail(path, f"expected {schema['const']!r}, got {value!r}"[:200])
        if "enum" in schema and value not in schema["enum"]:
            fail(path, f"expected one of {schema['enum']}, got {value!r}"[:200])
        kind = schema.get("type")
        if kind is not None and not isinstance(value, _JSON_TYPES[kind]):
            fail(path, f"expected a JSON {kind}, got {type(value).__name__}")
        if kind == "object":
            missing = [k for k in schema.get("required", ()) if k not in value]
            if missing:
                fail(path, f"missing key(s) {missing}")
            for k, sub in schema.get("properties", {}).items():
                if k in value:
                    walk(value[k], sub, f"{path}.{k}" if path else k)
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                for k, v in value.items():
                    if k not in schema.get("properties", {}):
                        walk(v, extra, f"{path}[{k!r}]")
        elif kind == "array" and "items" in schema:
            for i, v in enumerate(value):
                walk(v, schema["items"], f"{path}[{i}]")
        if schema is REPORT_JSON_SCHEMA["$defs"]["table"]:
            width = len(value["columns"])
            for i, row in enumerate(value["rows"]):
                if len(row) != width:
                    fail(f"{path}.rows[{i}]", f"{len(row)} cells for {width} columns")

    if not isinstance(obj, dict):
        fail("", f"expected a JSON object, got {type(obj).__name__}")
    if obj.get("schema") != SCHEMA_ID:
        fail("schema", f"{obj.get('schema')!r}, expected {SCHEMA_ID!r}"[:200])
    _check_values(obj, fail)
    walk(obj, REPORT_JSON_SCHEMA, "")
    numeric = ("value", "ci_low", "ci_high", "p_value", "n", "min_detectable")
    for i, section in enumerate(obj["sections"]):
        columns = section["summary"]["columns"]
        for j, row in enumerate(section["summary"]["rows"]):
            for c, cell in zip(columns, row):
                if c in numeric and cell is not None and (isinstance(cell, bool)
                                                          or not isinstance(cell, (int, float))):
                    fail(f"sections[{i}].summary.rows[{j}]", f"{c} must be a number or null, got {cell!r}"[:200])
                if c not in numeric and not isinstance(cell, (str, type(None))):
                    fail(f"sections[{i}].summary.rows[{j}]", f"{c} must be a string or null, got {cell!r}"[:200])
        for name, table in [("summary", section["summary"]), *((f"tables[{k!r}]", t)
                                                              for k, t in section["tables"].items())]:
            for j, row in enumerate(table["rows"]):
                for cell in row:  # a cell is a scalar, or a list of scalars (a tuple, e.g. a pair)
                    if isinstance(cell, dict) or (isinstance(cell, list)
                                                  and any(isinstance(v, (list, dict)) for v in cell)):
                        fail(f"sections[{i}].{name}.rows[{j}]", "a table cell must be a value or a list of values")


_MAX_DEPTH = 32
"""Deepest nesting of a report's JSON (the reports biasamp writes nest about 8 deep)."""
_MAX_INT = 2**63
"""Largest integer in a report's JSON: renderers turn numbers into floats (10**400 overflows)."""


def _check_values(obj: Any, fail: Any) -> None:
    """``fail`` for JSON nested deeper than :data:`_MAX_DEPTH` or an integer beyond :data:`_MAX_INT`
    (iteratively: a deep document cannot exhaust the stack here)."""
    stack = [(obj, 0, "")]
    while stack:
        value, depth, path = stack.pop()
        if depth > _MAX_DEPTH:
            fail(path, f"nested more than {_MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            stack.extend((v, depth + 1, f"{path}.{k}" if path else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, depth + 1, f"{path}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _MAX_INT:
            fail(path, f"an integer of {len(str(abs(value)))} digits, beyond 2**63")
