"""Column maps: a file's own column names mapped to the rules §1 fields.

A map is a TOML file with one table, `[columns]`, of `"file column" = "field"`
pairs (see docs/columns.example.toml); several spellings may give one field.
Columns the map does not name keep their names: a column already named as a
field is that field, any other is carried through to the output unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..bounded import BadToml, Refused, load_toml, read_bounded, shown
from ..fields import FIELD_NAMES
from .errors import FileProblem

ColumnsArg = Mapping[str, str] | str | Path | None
MAX_MAP_BYTES = 1 << 20  # a map of every column of the widest sheet is ~500 kB


def load_column_map(columns: ColumnsArg, extra: tuple[str, ...] = ()) -> dict[str, str]:
    """{file column: field} from a mapping or a TOML file; checked. `extra`:
    names a command reads besides the fields (`sex` for a projection)."""
    if columns is None:
        return {}
    name = "--columns"
    if isinstance(columns, (str, Path)):
        path = Path(columns)
        name = shown(path, 120)
        try:
            raw = read_bounded(path, MAX_MAP_BYTES)
        except Refused as exc:
            if exc.reason == "no_file":
                raise FileProblem("not_found", file=name) from None
            raise FileProblem("bad_map", file=name, detail=exc) from None
        try:
            data = load_toml(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise FileProblem("bad_map", file=name, detail=shown(exc, 160)) from None
        except BadToml as exc:  # its line; nested values too (tomllib recurses)
            raise FileProblem("bad_map", file=name, detail=exc) from None
        table = data.get("columns")
        if not isinstance(table, dict):
            raise FileProblem("bad_map", file=name,
                              detail="it needs a [columns] table of \"file column\" = \"field\"")
        columns = table
    mapping: dict[str, str] = {}
    for source, field in columns.items():
        if not isinstance(field, str) or (field not in FIELD_NAMES and field not in extra):
            raise FileProblem("bad_map", file=name,
                              detail=f"'{source}' = {field!r}: the field must be one of "
                                     f"{', '.join((*FIELD_NAMES, *extra))}")
        # several names may give one field (spellings of one export); only a
        # file holding two of them is refused, in renames()
        mapping[str(source).strip()] = field
    return mapping


def renames(file: str, names: list[str], mapping: Mapping[str, str]) -> dict[str, str]:
    """{file column: field} for the columns this file has, with every clash named."""
    rename = {n: mapping[n] for n in names if n in mapping and mapping[n] != n}
    targets = set(FIELD_NAMES) | set(mapping.values())
    given: dict[str, list[str]] = {}
    for n in names:
        field = mapping.get(n, n)
        if field in targets:
            given.setdefault(field, []).append(n)
    for field, sources in given.items():
        if len(sources) > 1:
            raise FileProblem("same_field", file=file, field=field,
                              columns=", ".join(f"'{s}'" for s in sources))
    return rename
