"""Messages of the batch layer, in Spanish and English: what is wrong with a
file, and the summary of a run. (The messages for bad values in a row come
from the core's catalogs.)"""

from __future__ import annotations

from typing import Any

PROBLEMS: dict[str, dict[str, str]] = {
    "not_found": {
        "es": "{file}: no existe el archivo",
        "en": "{file}: no such file",
    },
    "unknown_suffix": {
        "es": "{file}: formato desconocido por su extensión '{suffix}'; use .csv, .parquet o .xlsx",
        "en": "{file}: unknown format by its suffix '{suffix}'; use .csv, .parquet or .xlsx",
    },
    "empty": {
        "es": "{file}: el archivo está vacío",
        "en": "{file}: the file is empty",
    },
    "no_rows": {
        "es": "{file}: tiene encabezado pero ninguna fila de datos",
        "en": "{file}: has a header but no rows of data",
    },
    "not_utf8": {
        "es": "{file}, línea {line}: el texto no es UTF-8 (byte 0x{byte:02X} en la posición "
              "{column}); guárdelo como «CSV UTF-8»",
        "en": "{file}, line {line}: the text is not UTF-8 (byte 0x{byte:02X} at position "
              "{column}); save it as 'CSV UTF-8'",
    },
    "ragged": {
        "es": "{file}, línea {line}: tiene {found} valores, pero el encabezado tiene {expected} "
              "columnas (¿separador '{separator}' correcto? use --separator)",
        "en": "{file}, line {line}: has {found} values, but the header has {expected} columns "
              "(is the separator '{separator}' right? see --separator)",
    },
    "open_quote": {
        "es": "{file}, línea {line}: unas comillas abiertas aquí no se cierran nunca",
        "en": "{file}, line {line}: a quoted value opened here is never closed",
    },
    "unparsable": {
        "es": "{file}, cerca de la línea {line}: no se puede leer: {detail}",
        "en": "{file}, near line {line}: cannot be read: {detail}",
    },
    "looks_like": {
        "es": "{file}: no es CSV: parece un archivo {kind}; dele la extensión correcta",
        "en": "{file}: is not CSV: it looks like a {kind} file; give it the right suffix",
    },
    "not_format": {
        "es": "{file}: no es un archivo {kind} válido ({detail})",
        "en": "{file}: is not a valid {kind} file ({detail})",
    },
    "missing_columns": {
        "es": "{file}: faltan columnas requeridas: {columns}. Columnas del archivo: {found}",
        "en": "{file}: required columns are missing: {columns}. The file's columns: {found}",
    },
    "duplicate_column": {
        "es": "{file}: la columna '{column}' aparece más de una vez",
        "en": "{file}: the column '{column}' appears more than once",
    },
    "unnamed_column": {
        "es": "{file}: la columna {position} no tiene nombre en el encabezado",
        "en": "{file}: column {position} has no name in the header",
    },
    "same_field": {
        "es": "{file}: las columnas {columns} dan el mismo campo '{field}'",
        "en": "{file}: the columns {columns} all give the field '{field}'",
    },
    "clashing_column": {
        "es": "{file}: la columna '{column}' tiene el nombre de una columna del resultado; "
              "cámbiele el nombre",
        "en": "{file}: the column '{column}' has the name of a column of the result; rename it",
    },
    "bad_map": {
        "es": "{file}: mapa de columnas no válido: {detail}",
        "en": "{file}: invalid column map: {detail}",
    },
    "bad_separator": {
        "es": "--separator: '{separator}' no sirve; indique un solo carácter, como ',' o ';'",
        "en": "--separator: '{separator}' cannot be used; give one character, such as ',' or ';'",
    },
    "output_exists": {
        "es": "{file}: ya existe; use --overwrite para reemplazarlo",
        "en": "{file}: already exists; use --overwrite to replace it",
    },
    "output_is_input": {
        "es": "{file}: la salida no puede ser el archivo de entrada",
        "en": "{file}: the output cannot be the input file",
    },
    "same_output": {
        "es": "{file}: {option} y {other} son el mismo archivo; dé a cada resultado un "
              "archivo propio",
        "en": "{file}: {option} and {other} are the same file; give each output a file of "
              "its own",
    },
    "no_directory": {
        "es": "{file}: no existe la carpeta {directory}",
        "en": "{file}: the folder {directory} does not exist",
    },
    "xlsx_too_big": {
        "es": "{file}: {rows} filas no caben en una hoja .xlsx (máximo {limit}); "
              "use .csv o .parquet",
        "en": "{file}: {rows} rows do not fit in an .xlsx sheet (at most {limit}); "
              "use .csv or .parquet",
    },
    "too_many_rows": {
        "es": "{file}: tiene {n} filas; el máximo aquí es {limit}",
        "en": "{file}: has {n} rows; the limit here is {limit}",
    },
    # the rows were counted only until past the limit (variant="more")
    "too_many_rows.more": {
        "es": "{file}: tiene más de {limit} filas; el máximo aquí es {limit}",
        "en": "{file}: has more than {limit} rows; the limit here is {limit}",
    },
    "too_many_columns": {
        "es": "{file}: tiene {n} columnas; el máximo es {limit}",
        "en": "{file}: has {n} columns; the limit is {limit}",
    },
    "too_many_cells": {
        "es": "{file}: abarca {n} celdas (filas × columnas); el máximo aquí es {limit}. "
              "Si la hoja tiene celdas o formato lejos de los datos, bórrelos, o guárdela "
              "como CSV",
        "en": "{file}: spans {n} cells (rows × columns); the limit here is {limit}. If the "
              "sheet has cells or formatting far from the data, delete them, or save it as CSV",
    },
    "too_much_text": {
        "es": "{file}: sus celdas suman {n} bytes de texto una vez leídas; el máximo aquí es "
              "{limit}",
        "en": "{file}: its cells hold {n} bytes of text once read; the limit here is {limit}",
    },
    "too_unzipped": {
        "es": "{file}: descomprimido ocupa {n} bytes; el máximo aquí es {limit}",
        "en": "{file}: uncompressed it takes {n} bytes; the limit here is {limit}",
    },
    "cr_line_ends": {
        "es": "{file}, línea {line}: tiene un CR suelto (el final de línea de los archivos "
              "antiguos de Mac, o un carácter perdido); guárdelo con finales de línea LF o CRLF",
        "en": "{file}, line {line}: holds a bare CR (the line end of old Mac files, or a stray "
              "one); save it with LF or CRLF line ends",
    },
    "unsupported_type": {
        "es": "{file}: la columna '{column}' es de tipo {dtype}, que no se puede usar aquí; "
              "{hint}",
        "en": "{file}: the column '{column}' is of type {dtype}, which cannot be used here; "
              "{hint}",
    },
    "cannot_write": {
        "es": "{file}: no se puede escribir: {detail}",
        "en": "{file}: cannot be written: {detail}",
    },
    "xlsx_cell_too_long": {
        "es": "{file}: el valor de la columna '{column}' (participante {participant}) tiene "
              "{n} caracteres; una celda .xlsx admite {limit} como máximo; use .csv o .parquet",
        "en": "{file}: the value of column '{column}' (participant {participant}) has {n} "
              "characters; an .xlsx cell holds at most {limit}; use .csv or .parquet",
    },
}

SUMMARY: dict[str, dict[str, str]] = {
    "es": {
        "title": "Resumen de {input}",
        "read": "Filas leídas:      {n}",
        "determined": "Determinadas:      {n}",
        "status": "  {status}: {n}",
        "rejected": "Rechazadas:        {n} ({problems} problemas)",
        "blank": "Líneas en blanco omitidas: {n}",
        "output": "Resultado:  {path}",
        "rejects": "Rechazos:   {path}",
        "no_rejects_file": "Rechazos (sin --rejects, los primeros {shown} de {problems}):",
        "more_rejects": "… y {n} más; use --rejects ARCHIVO para guardarlos todos",
        "rules": "Reglas {rules}, fecha de la determinación {as_of}",
        "time": "Tiempo: {total:.2f} s (lectura {read:.2f}, evaluación {evaluate:.2f}, "
                "escritura {write:.2f}); {rate:,.0f} filas/s",
        "carried": "Columnas llevadas tal cual: {columns}",
        "strict": "--strict: hay filas rechazadas",
        "interrupted": "Interrumpido: no se escribió ningún resultado (los archivos que ya "
                       "existían quedan como estaban)",
        "interrupted_after": "Interrumpido después de escribir los resultados: {paths} están "
                             "completos",
        "progress": "Evaluando",
        "accounting": "ERROR INTERNO: las cuentas no cuadran: {detail}",
    },
    "en": {
        "title": "Summary of {input}",
        "read": "Rows read:         {n}",
        "determined": "Determined:        {n}",
        "status": "  {status}: {n}",
        "rejected": "Rejected:          {n} ({problems} problems)",
        "blank": "Blank lines skipped: {n}",
        "output": "Output:   {path}",
        "rejects": "Rejects:  {path}",
        "no_rejects_file": "Rejects (no --rejects given, the first {shown} of {problems}):",
        "more_rejects": "… and {n} more; use --rejects FILE to keep them all",
        "rules": "Rules {rules}, determination date {as_of}",
        "time": "Time: {total:.2f} s (reading {read:.2f}, evaluating {evaluate:.2f}, "
                "writing {write:.2f}); {rate:,.0f} rows/s",
        "carried": "Columns carried through: {columns}",
        "strict": "--strict: some rows were rejected",
        "interrupted": "Interrupted: no output was written (files that already existed are "
                       "left as they were)",
        "interrupted_after": "Interrupted after the outputs were written: {paths} are "
                             "complete",
        "progress": "Evaluating",
        "accounting": "INTERNAL ERROR: the row accounting does not add up: {detail}",
    },
}


def problem_text(code: str, lang: str, params: dict[str, Any]) -> str:
    templates = PROBLEMS[f"{code}.{params['variant']}" if "variant" in params else code]
    return templates.get(lang, templates["en"]).format(**params)


def summary_text(lang: str, key: str, **params: Any) -> str:
    return SUMMARY.get(lang, SUMMARY["en"])[key].format(**params)
