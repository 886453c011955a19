"""Reading files of participants: formats, encodings, separators, row numbers,
and every way a file can be unusable (a clear message, nothing written)."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest
import xlsxwriter

from diferida.batch import FileProblem, evaluate_file, load_table, read_table, row_numbers
from diferida.batch.io import first_row, kind_of
from tests.conftest import AS_OF
from tests.worked_examples import ONE, example

ROOT = Path(__file__).resolve().parents[1]
HEADER = ("participant_id,birth_date,entry_date,separation_date,creditable_service_years,"
          "average_compensation,group,refund_requested,office")
SPEC_1 = "spec-1,1970-05-10,1988-07-01,2010-06-30,22,30000.00,general,false,San Juan"
SPEC_3 = "spec-3,1972-11-02,1995-08-01,2015-07-31,12.25,28500.00,general,false,Ponce"
BAD_DATE = "bad-1,1970-13-01,1988-07-01,2010-06-30,22,30000.00,general,false,Ponce"


def csv_bytes(*lines: str, sep: str = ",", eol: str = "\n") -> bytes:
    return (eol.join(line.replace(",", sep) for line in lines) + eol).encode()


def run(tmp_path: Path, data: bytes, name: str = "members.csv", **kw):
    src = tmp_path / name
    src.write_bytes(data)
    out, rej = tmp_path / "out.csv", tmp_path / "rejects.csv"
    summary = evaluate_file(src, out, rej, as_of=AS_OF, **kw)
    return summary, pl.read_csv(out, infer_schema=False), pl.read_csv(rej, infer_schema=False)


def problem(data: bytes, name: str = "members.csv", **kw) -> FileProblem:
    with pytest.raises(FileProblem) as exc:
        read_table(data, name, **kw)
    return exc.value


# ----------------------------------------------------------------- formats


def test_a_utf8_csv_with_or_without_bom_reads_the_same():
    plain = read_table(csv_bytes(HEADER, SPEC_1), "m.csv")
    bom = read_table(b"\xef\xbb\xbf" + csv_bytes(HEADER, SPEC_1), "m.csv")
    assert plain.equals(bom)
    assert plain.columns[0] == "participant_id"


def test_a_semicolon_csv_is_recognised_by_its_header():
    frame = read_table(csv_bytes(HEADER, SPEC_1, sep=";"), "m.csv")
    assert frame.row(0) == tuple(SPEC_1.split(","))


def test_a_separator_given_by_the_user_is_used():
    data = csv_bytes(HEADER, SPEC_1, sep="|")
    assert read_table(data, "m.csv", separator="|").row(0) == tuple(SPEC_1.split(","))


def test_windows_line_endings_read_as_plain_lines():
    assert read_table(csv_bytes(HEADER, SPEC_1, eol="\r\n"), "m.csv").row(0)[-1] == "San Juan"


def test_every_csv_column_is_read_as_the_text_the_file_holds():
    line = "007,1970-05-10,1988-07-01,2010-06-30,22.0,3e4,general,FALSE,0012"
    frame = read_table(csv_bytes(HEADER, line), "m.csv")
    assert set(frame.dtypes) == {pl.String}
    assert frame.row(0) == tuple(line.split(","))


def test_parquet_with_typed_columns_is_evaluated_like_its_text(tmp_path):
    text = read_table(csv_bytes(HEADER, SPEC_1, SPEC_3), "m.csv")
    typed = text.with_columns(
        pl.col("birth_date", "entry_date", "separation_date").str.to_date(),
        pl.col("creditable_service_years").cast(pl.Decimal(8, 4)),
        pl.col("average_compensation").cast(pl.Decimal(12, 2)),
        pl.col("refund_requested") == "true",
    )
    typed.write_parquet(tmp_path / "m.parquet")
    (tmp_path / "m.csv").write_bytes(csv_bytes(HEADER, SPEC_1, SPEC_3))
    evaluate_file(tmp_path / "m.parquet", tmp_path / "a.parquet", as_of=AS_OF)
    evaluate_file(tmp_path / "m.csv", tmp_path / "b.parquet", as_of=AS_OF)
    a, b = pl.read_parquet(tmp_path / "a.parquet"), pl.read_parquet(tmp_path / "b.parquet")
    assert a.equals(b)
    assert a["annual_amount"].cast(pl.String).to_list() == [ONE.annual_text,
                                                           example(3).annual_text]
    assert a.schema["monthly_amount"] == pl.Decimal(20, 2)


@pytest.mark.parametrize("service,compensation", [
    ("-1.5", "30000.00"),           # negative service
    ("22", "-10.00"),               # compensation below zero
    ("22", "0.00"),                 # compensation zero
    ("100000", "30000.00"),         # more whole digits than service allows
    ("22", "1000000000000.00"),     # more whole digits than money allows
    ("22.5", "30000.5"),            # fewer places than the field: exact
])
def test_parquet_exact_decimals_are_read_as_numbers_with_the_text_rules(tmp_path, service,
                                                                       compensation):
    # A Parquet decimal with no more places than its field is read as a
    # number (no text round trip): every value gets what its text would get.
    row = f"p1,1970-05-10,1988-07-01,2010-06-30,{service},{compensation},general,false,Ponce"
    (tmp_path / "m.csv").write_bytes(csv_bytes(HEADER, row))
    text = read_table(csv_bytes(HEADER, row), "m.csv")
    typed = text.with_columns(
        pl.col("birth_date", "entry_date", "separation_date").str.to_date(),
        pl.col("creditable_service_years").cast(pl.Decimal(12, 4)),
        pl.col("average_compensation").cast(pl.Decimal(18, 2)),
        pl.col("refund_requested") == "true",
    )
    typed.write_parquet(tmp_path / "m.parquet")
    for src in ("m.parquet", "m.csv"):
        evaluate_file(tmp_path / src, tmp_path / f"{src}.out.csv", tmp_path / f"{src}.rej.csv",
                      as_of=AS_OF)
    out = [pl.read_csv(tmp_path / f"{s}.out.csv", infer_schema=False)
           for s in ("m.parquet", "m.csv")]
    assert out[0].equals(out[1])
    # the same rejects (the row numbers are the formats' own: 1 in Parquet, 2 in CSV)
    rej = [pl.read_csv(tmp_path / f"{s}.rej.csv", infer_schema=False).select(
        "participant_id", "field", "code") for s in ("m.parquet", "m.csv")]
    assert rej[0].equals(rej[1])


def write_xlsx(path: Path, rows: list[list], date_columns=(1, 2, 3)) -> None:
    import datetime as dt

    wb = xlsxwriter.Workbook(path)
    ws = wb.add_worksheet()
    fmt = wb.add_format({"num_format": "dd/mm/yyyy"})
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            if value is None:
                continue
            if isinstance(value, dt.date) and c in date_columns:
                ws.write_datetime(r, c, dt.datetime.combine(value, dt.time()), fmt)
            else:
                ws.write(r, c, value)
    wb.close()


def test_an_excel_sheet_with_date_cells_numbers_and_a_blank_row_is_read_by_its_row_numbers(
        tmp_path):
    from datetime import date

    header = HEADER.split(",")
    good = ["spec-1", date(1970, 5, 10), date(1988, 7, 1), date(2010, 6, 30), 22, 30000,
            "general", False, "San Juan"]
    bad = ["bad-1", "1970-13-01", date(1988, 7, 1), date(2010, 6, 30), 22, 30000,
           "general", False, "Ponce"]
    write_xlsx(tmp_path / "m.xlsx", [header, good, [None] * 9, bad, [1004, *good[1:]]])
    table = load_table(tmp_path / "m.xlsx")
    assert table.rows.to_list() == [2, 4, 5]  # row 3 is empty
    assert table.blank == 1
    assert table.frame.row(0)[:6] == ("spec-1", "1970-05-10", "1988-07-01", "2010-06-30",
                                      "22", "30000")
    assert table.frame["participant_id"].to_list() == ["spec-1", "bad-1", "1004"]

    summary = evaluate_file(tmp_path / "m.xlsx", tmp_path / "out.xlsx", tmp_path / "rej.xlsx",
                            as_of=AS_OF, lang="en")
    out = pl.read_excel(tmp_path / "out.xlsx")
    rej = pl.read_excel(tmp_path / "rej.xlsx")
    assert out["participant_id"].to_list() == ["spec-1", "1004"]
    assert out["annual_amount"].to_list() == [10200.0, 10200.0]
    assert rej.select("row", "participant_id", "field").rows() == [(4, "bad-1", "birth_date")]
    assert (summary.rows_read, summary.rows_determined, summary.rows_rejected) == (3, 2, 1)


# ----------------------------------------------------------------- row numbers


def test_rejects_name_the_line_a_text_editor_shows_even_after_blank_lines_and_multiline_values(
        tmp_path):
    data = csv_bytes(HEADER, SPEC_1, "", SPEC_3.replace("Ponce", '"Ponce\nSur"'), BAD_DATE)
    summary, out, rej = run(tmp_path, data)
    # line 1 header, 2 spec-1, 3 blank, 4-5 spec-3 (value over two lines), 6 the bad row
    assert rej.select("row", "participant_id", "field").rows() == [("6", "bad-1", "birth_date")]
    assert out["office"].to_list() == ["San Juan", "Ponce\nSur"]
    assert summary.blank == 1


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
@pytest.mark.parametrize("chunk_rows", [1, 2, 1000])
@pytest.mark.parametrize("extra", ["", ",x"])
def test_blank_lines_in_a_file_without_quotes_are_skipped_counted_and_numbered(
        tmp_path, eol, chunk_rows, extra):
    # no quote anywhere, so rows are read on the fast path; a long row beside
    # a blank line must not make up for its missing separators
    first = SPEC_1 + extra if extra else SPEC_1
    data = csv_bytes(HEADER, "", first, "", "", SPEC_3, BAD_DATE, eol=eol)
    if extra:
        exc = problem(data)
        assert (exc.code, exc.line) == ("ragged", 3)
        return
    summary, out, rej = run(tmp_path, data, chunk_rows=chunk_rows)
    # line 1 header, 2 blank, 3 spec-1, 4-5 blank, 6 spec-3, 7 the bad row
    assert rej.select("row", "participant_id", "field").rows() == [("7", "bad-1", "birth_date")]
    assert out["participant_id"].to_list() == ["spec-1", "spec-3"]
    assert summary.blank == 3 and summary.rows_read == 3


@pytest.mark.parametrize("chunk_rows", [1, 3, 1000])
def test_a_blank_line_after_the_header_in_a_file_with_quotes_is_skipped(tmp_path, chunk_rows):
    data = csv_bytes(HEADER, "", "", SPEC_1.replace("San Juan", '"San Juan, PR"'), "", BAD_DATE)
    summary, out, rej = run(tmp_path, data, chunk_rows=chunk_rows)
    assert rej.select("row", "participant_id").rows() == [("6", "bad-1")]
    assert out["office"].to_list() == ["San Juan, PR"]
    assert summary.blank == 3


def test_row_numbers_follow_the_convention_of_each_format():
    assert (first_row("csv"), first_row("xlsx"), first_row("parquet")) == (2, 2, 1)
    assert row_numbers("csv", [0, 3]).to_list() == [2, 5]
    assert row_numbers("parquet", [0, 3]).to_list() == [1, 4]
    table = load_table(csv_bytes(HEADER, SPEC_1, "", SPEC_3), "m.csv")
    assert row_numbers("csv", [1], table.rows).to_list() == [4]


def test_parquet_rejects_are_numbered_from_one(tmp_path):
    read_table(csv_bytes(HEADER, SPEC_1, BAD_DATE), "m.csv").write_parquet(tmp_path / "m.parquet")
    evaluate_file(tmp_path / "m.parquet", tmp_path / "o.csv", tmp_path / "r.csv", as_of=AS_OF)
    assert pl.read_csv(tmp_path / "r.csv")["row"].to_list() == [2]


# ----------------------------------------------------------------- unusable files


def test_an_empty_file_is_refused():
    assert problem(b"").code == "empty"
    assert problem(b"\xef\xbb\xbf\n").code == "empty"


def test_a_header_without_rows_is_refused():
    assert problem(csv_bytes(HEADER)).code == "no_rows"


def test_a_file_without_a_required_column_names_it():
    exc = problem(csv_bytes(HEADER.replace("separation_date", "sep_date"), SPEC_1))
    assert exc.code == "missing_columns"
    assert "separation_date" in str(exc) and "sep_date" in str(exc)


def test_a_column_named_twice_is_refused():
    assert problem(csv_bytes(HEADER + ",office", SPEC_1 + ",x")).code == "duplicate_column"


def test_a_column_named_like_a_result_column_is_refused():
    exc = problem(csv_bytes(HEADER.replace("office", "status"), SPEC_1))
    assert exc.code == "clashing_column" and "status" in str(exc)


def test_a_short_line_is_refused_with_its_line_number():
    exc = problem(csv_bytes(HEADER, SPEC_1, SPEC_3.rsplit(",", 1)[0]))
    assert exc.code == "ragged" and exc.line == 3
    assert "8" in str(exc) and "9" in str(exc)


def test_a_long_line_is_refused_with_its_line_number():
    exc = problem(csv_bytes(HEADER, SPEC_1, SPEC_1, SPEC_3 + ",extra"))
    assert exc.code == "ragged" and exc.line == 4


def test_a_wrong_separator_is_reported_as_ragged_lines():
    exc = problem(csv_bytes(HEADER, SPEC_1.replace(",", ";")))
    assert exc.code == "ragged" and exc.line == 2


def test_a_latin1_file_is_refused_with_the_line_of_the_first_bad_byte():
    data = csv_bytes(HEADER, SPEC_1, SPEC_3.replace("Ponce", "Mayagüez")).replace(
        "ü".encode(), b"\xfc")
    exc = problem(data)
    assert exc.code == "not_utf8" and exc.line == 3 and "0xFC" in str(exc)
    assert "UTF-8" in exc.text("es")


def test_an_unclosed_quote_is_refused_with_the_line_where_it_opens():
    exc = problem(csv_bytes(HEADER, SPEC_1, SPEC_3.replace("Ponce", '"Ponce'), SPEC_1))
    assert exc.code == "open_quote" and exc.line == 3


def test_a_file_that_is_not_what_its_suffix_says_is_refused():
    parquet = io.BytesIO()
    pl.DataFrame({"a": [1]}).write_parquet(parquet)
    assert problem(parquet.getvalue(), "m.csv").code == "looks_like"
    assert problem(csv_bytes(HEADER, SPEC_1), "m.parquet").code == "not_format"
    assert problem(csv_bytes(HEADER, SPEC_1), "m.xlsx").code == "not_format"
    assert problem(csv_bytes(HEADER, SPEC_1), "m.txt").code == "unknown_suffix"


def test_an_unusable_file_writes_no_output(tmp_path):
    src = tmp_path / "m.csv"
    src.write_bytes(csv_bytes(HEADER, SPEC_1, SPEC_3.rsplit(",", 1)[0]))
    with pytest.raises(FileProblem):
        evaluate_file(src, tmp_path / "o.csv", tmp_path / "r.csv", as_of=AS_OF, chunk_rows=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv"]


def test_an_existing_output_is_kept_without_overwrite(tmp_path):
    src, out = tmp_path / "m.csv", tmp_path / "o.csv"
    src.write_bytes(csv_bytes(HEADER, SPEC_1))
    out.write_text("keep me")
    with pytest.raises(FileProblem) as exc:
        evaluate_file(src, out, as_of=AS_OF)
    assert exc.value.code == "output_exists"
    assert out.read_text() == "keep me"
    evaluate_file(src, out, as_of=AS_OF, overwrite=True)
    assert pl.read_csv(out)["participant_id"].to_list() == ["spec-1"]


def test_the_output_cannot_be_the_input(tmp_path):
    src = tmp_path / "m.csv"
    src.write_bytes(csv_bytes(HEADER, SPEC_1))
    with pytest.raises(FileProblem) as exc:
        evaluate_file(src, src, as_of=AS_OF, overwrite=True)
    assert exc.value.code == "output_is_input"


def test_kinds_come_from_the_suffix_whatever_its_case():
    assert [kind_of(n) for n in ("a.CSV", "b.Parquet", "c.xlsx")] == ["csv", "parquet", "xlsx"]


# ----------------------------------------------------------------- column maps


def test_spanish_headers_are_read_through_the_example_column_map(tmp_path):
    spanish = ("id_participante,fecha_nacimiento,fecha_ingreso,fecha_separacion,años_servicio,"
               "retribucion_promedio,grupo,reembolso,oficina")
    summary, out, rej = run(tmp_path, csv_bytes(spanish, SPEC_1),
                            columns=ROOT / "docs" / "columns.example.toml")
    assert out.select("participant_id", "oficina", "route", "annual_amount").rows() == [
        ("spec-1", "San Juan", ONE.route, ONE.annual_text)]
    assert summary.carried == ["oficina"]


def test_spanish_headers_without_a_map_are_refused_naming_the_missing_fields():
    exc = problem(csv_bytes("id_participante,fecha_nacimiento", "x,1970-01-01"))
    assert exc.code == "missing_columns" and "birth_date" in str(exc)


def test_a_map_that_gives_one_field_from_two_columns_of_the_file_is_refused():
    header = HEADER.replace("office", "fecha_nacimiento")
    exc = problem(csv_bytes(header, SPEC_1), columns={"fecha_nacimiento": "birth_date"})
    assert exc.code == "same_field"


def test_a_map_to_an_unknown_field_is_refused(tmp_path):
    bad = tmp_path / "map.toml"
    bad.write_text('[columns]\nfecha = "birthday"\n')
    assert problem(csv_bytes(HEADER, SPEC_1), columns=bad).code == "bad_map"


def test_carried_columns_named_like_the_engines_working_columns_come_back_unchanged(tmp_path):
    header = HEADER.replace("office", "covered,service_units,_ok")
    summary, out, rej = run(tmp_path, csv_bytes(header, SPEC_1.replace("San Juan", "a,b,c")))
    assert out.select("covered", "service_units", "_ok").rows() == [("a", "b", "c")]
    assert out["annual_amount"].to_list() == [ONE.annual_text]
