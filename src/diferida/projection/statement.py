"""The projection's assumptions stated in words (es/en) for the printed
workbook: one (label, value) pair per assumption, numbers as numbers. The
record itself (`runner.assumptions_of`, the .assumptions.json sidecar)
keeps its keys; here a reader sees none of them. An item of the record
with no words yet is listed under "other recorded items" with its key
(tests/test_print_layout.py holds that list empty)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from ..i18n import catalog, fmt_date
from ..words import pct
from ..workbook import Year
from .mortality import MAX_AGE

# the record's items stated below; any other is listed with its key
STATED = {"rules", "valuation_date", "fiscal_year", "payments", "start_rule",
          "horizon_fiscal_years", "mortality", "sex", "discount_rates", "discount", "cola",
          "cola_rule", "rounding", "determinations_as_of", "valuation_date_rule",
          "benefit_status", "claim", "claim_notes", "claim_rates", "by", "sensitivity",
          "back_pay",  # stated with the claim (claim_valuation, claim_rates)
          "relief",
          "properties"}
STATED_MORTALITY = {"table", "description", "improvement", "improvement_source", "base_year",
                    "source", "notes", "fractional_ages", "switch", "last_age", "scale"}


def rate_text(label: str) -> str:
    return pct(Decimal(label))


def rules_text(rules: dict[str, Any], lang: str) -> str:
    return catalog(lang)["workbook"]["rules"].format(name=rules["name"],
                                                     version=rules["version"])


def relief_words(relief: dict[str, Any], lang: str) -> str:
    """A rules set's post-start adjustments in one paragraph (relief_record)."""
    ww = catalog(lang)["workbook"]["assumptions"]
    parts = []
    for a in relief["adjustments"]:
        band = ""
        if "from_monthly" in a or "below_monthly" in a:
            band = ww["relief_band"].format(lo=a.get("from_monthly", "0"),
                                            hi=a.get("below_monthly", "—"))
        kind = a["kind"]
        if kind == "cola":
            what = (ww["relief_cola_rate"].format(rate=pct(Decimal(a["rate"])))
                    if "rate" in a else ww["relief_cola_series"].format(
                        first=a["series"][0][0], last=a["series"][-1][0],
                        after=pct(Decimal(a["after_series"])) if "after_series" in a
                        else ww["relief_none_after"]))
        elif kind == "raise":
            what = ww["relief_raise"].format(rate=pct(Decimal(a["rate"])),
                                             cap=a["cap_monthly"]) if "cap_monthly" in a \
                else ww["relief_raise_uncapped"].format(rate=pct(Decimal(a["rate"])))
        elif kind == "floor":
            what = ww["relief_floor"].format(amount=a["minimum_monthly"])
        else:
            what = ww["relief_one_time"].format(amount=a["amount"])
        parts.append(ww["relief_item"].format(date=a["date"], what=what, band=band,
                                              who=ww[f"relief_who_{a['who']}"],
                                              citation=a["citation"]))
    return ww["relief_value"].format(citation=relief["citation"], items=" ".join(parts))


def method_rows(a: dict[str, Any], lang: str) -> list[tuple[str, Any]]:
    """The assumptions of one projection (the record's `assumptions`)."""
    w = catalog(lang)["compare_report"]["assumptions"]
    ww = catalog(lang)["workbook"]["assumptions"]
    mort = a["mortality"]
    last_age = mort.get("last_age", MAX_AGE)
    out: list[tuple[str, Any]] = []
    if "rules" in a:
        r = a["rules"]
        out.append((ww["rules"], w["rules_value"].format(name=r["name"], title=r["title"],
                                                         version=r["version"])))
    if "relief" in a:
        out.append((ww["relief"], relief_words(a["relief"], lang)))
    out.append((ww["valuation_date"], date.fromisoformat(a["valuation_date"])))
    if "determinations_as_of" in a:
        # the label states the rule (valuation_date_rule): measured from the valuation
        # date, determined as of this day
        out.append((ww["determinations_as_of"], date.fromisoformat(a["determinations_as_of"])))
    out.append((w["fiscal_year"], w["fiscal_year_value"]))
    out.append((w["payments"], w["payments_value"].format(last_age=last_age)))
    rule = str(a["start_rule"])
    out.append((w["start"], w["start_age"].format(age=int(rule[4:].split()[0]))
                if rule.startswith("age:") else w["start_eligibility"]))
    if "benefit_status" in a:
        out.append((ww["benefit_status"], ww["benefit_status_value"]))
    if "claim" in a:
        out += claim_rows(a, lang)
    horizon = a.get("horizon_fiscal_years")
    if horizon is None:
        out.append((w["horizon"], w["horizon_none"].format(last_age=last_age)))
    else:
        from .engine import first_fiscal_year
        first = first_fiscal_year(date.fromisoformat(a["valuation_date"]))
        out.append((w["horizon"], ww["horizon_last"].format(years=f"{int(horizon):,}",
                                                            fy=first + int(horizon) - 1)))
    rates = ", ".join(rate_text(x) for x in a["discount_rates"])
    out.append((w["discount"], w["discount_value"].format(rates=rates)))
    cola = Decimal(str(a["cola"]))
    out.append((w["cola"], w["cola_none"] if cola == 0 else
                ww["cola_rule"].format(cola=pct(cola))))
    out.append((w["rounding"], ww["rounding_value"]))
    out.append((ww["section_mortality"], None))
    out += mortality_rows(a, lang)
    out += valuation_rows(a, lang)
    return out


def claim_rows(a: dict[str, Any], lang: str) -> list[tuple[str, Any]]:
    """When the members who could be paid at the valuation date claim."""
    ww = catalog(lang)["workbook"]["assumptions"]
    rates = a.get("claim_rates")
    if not rates:
        return [(ww["claim"], ww["claim_valuation"])]
    out: list[tuple[str, Any]] = [(ww["claim"], ww["claim_rates"].format(
        basis=ww[f"basis_{rates['basis']}"], file=rates["file"], sha256=rates["sha256"]))]
    if rates["basis"] == "age" and int(rates["first"]) > 0:
        out.append((ww["claim_notes"], ww["claim_first_age"].format(age=int(rates["first"]))))
    return out


def valuation_rows(a: dict[str, Any], lang: str) -> list[tuple[str, Any]]:
    """The breakdown, the sensitivity grid and the method's properties."""
    from .options import AGE_BAND_YEARS, SENSITIVITY_MORTALITY, SENSITIVITY_STEP

    ww = catalog(lang)["workbook"]["assumptions"]
    out: list[tuple[str, Any]] = []
    # the method's properties (`properties`) are stated where they arise: the
    # rounding row (per member, per group, a first payment past the horizon)
    # and the switch of rates (mortality)
    if "by" in a or "sensitivity" in a:
        out.append((ww["section_valuation"], None))
    if "by" in a:
        dims = str(a["by"]).split(" ")[0].split(",")
        out.append((ww["by"], ww["by_value"].format(
            dims=", ".join(ww[f"dim_{d}"] for d in dims), years=AGE_BAND_YEARS)))
    if "sensitivity" in a:
        low, high = (f"{x:g}" for x in SENSITIVITY_MORTALITY)
        out.append((ww["sensitivity"], ww["sensitivity_value"].format(
            step=pct(SENSITIVITY_STEP), low=low, high=high)))
    return out


def mortality_rows(a: dict[str, Any], lang: str) -> list[tuple[str, Any]]:
    w = catalog(lang)["compare_report"]["assumptions"]
    ww = catalog(lang)["workbook"]["assumptions"]
    mort = a["mortality"]
    last_age = mort.get("last_age", MAX_AGE)
    if mort["table"] == "none":
        return [(w["mortality"], w["mortality_none"].format(last_age=last_age)),
                (w["sex"], w["sex_not_used"])]
    imp = mort.get("improvement")
    out: list[tuple[str, Any]] = [
        (w["mortality"], w["mortality_table"].format(
            table=mort["table"], improvement=w["improvement_none"] if imp in (None, "none")
            else imp)),
        (ww["description"], str(mort.get("description") or "—")),
    ]
    if mort.get("improvement_source"):
        out.append((ww["improvement_source"], str(mort["improvement_source"])))
    if mort.get("base_year"):
        out.append((ww["base_year"], Year(int(mort["base_year"]))))
    src = mort.get("source") or {}
    if "package" in src:
        out.append((ww["source"], ww["source_package"].format(
            package=src["package"], version=src.get("version", "—"))))
    elif "file" in src:
        out.append((ww["source"], ww["source_file"].format(file=src["file"],
                                                           sha256=src.get("sha256", "—"))))
    if mort.get("notes"):
        out.append((ww["notes"], "\n".join(str(n) for n in mort["notes"])))
    if "scale" in mort:
        out.append((ww["mortality_scale"], float(mort["scale"])))
    out.append((ww["fractional_ages"], ww["fractional_ages_value"]))
    out.append((ww["switch"], ww["switch_value"]))
    out.append((w["sex"], sex_text(str(a["sex"]), lang)))
    return out


def sex_text(recorded: str, lang: str) -> str:
    """The record's sex assumption ("... blended 0.5 F / 0.5 M") in words."""
    import re

    w = catalog(lang)["compare_report"]["assumptions"]
    m = re.search(r"blended (?P<f>[0-9.]+) F / (?P<m>[0-9.]+) M", recorded)
    if m is None:
        return recorded
    female, male = (pct(Decimal(m[k])) for k in ("f", "m"))
    key = "sex_column" if recorded.startswith("from the file") else "sex_blended"
    return w[key].format(female=female, male=male)


def statement(info: dict[str, Any], lang: str) -> list[tuple[str, Any]]:
    """Every item of a projection's record (`runner.assumptions_of`) in
    words: the method, the mortality, the rows of the file, the results.
    A value None marks a section heading."""
    ww = catalog(lang)["workbook"]["assumptions"]
    a = info["assumptions"]
    out: list[tuple[str, Any]] = [(ww["section_method"], None)]
    out += method_rows(a, lang)
    counts = info.get("counts", {})
    if counts:
        out.append((ww["section_counts"], None))
        out += [(ww[k], v) for k, v in counts.items() if k in ww]
    totals = info.get("totals", {})
    if totals or "input" in info:
        out.append((ww["section_totals"], None))
        for k, v in totals.items():
            label = ww["payments"] if k == "payments" else ww["pv"].format(rate=rate_text(k))
            out.append((label, Decimal(str(v))))
        if "input" in info:
            out.append((ww["input"], str(info["input"])))
        if "software" in info:
            out.append((ww["software"], str(info["software"].get("diferida", "—"))))
    other = unstated(info)
    if other:
        out.append((ww["section_other"], None))
        out += other
    return out


def unstated(info: dict[str, Any]) -> list[tuple[str, Any]]:
    """Items of the record the words above do not state, with their keys."""
    ww = catalog("en")["workbook"]["assumptions"]
    out: list[tuple[str, Any]] = []
    a = info.get("assumptions", {})
    for k, v in a.items():
        if k not in STATED:
            out.append((f"assumptions.{k}", _flat(v)))
    for k, v in a.get("mortality", {}).items():
        if k not in STATED_MORTALITY:
            out.append((f"assumptions.mortality.{k}", _flat(v)))
    for k, v in info.get("counts", {}).items():
        if k not in ww:
            out.append((f"counts.{k}", v))
    for k, v in info.items():
        if k not in ("assumptions", "counts", "totals", "input", "software"):
            out.append((k, _flat(v)))
    return out


def _flat(v: Any) -> Any:
    if isinstance(v, dict):
        return "; ".join(f"{k}: {_flat(x)}" for k, x in v.items())
    if isinstance(v, list):
        return "; ".join(str(x) for x in v)
    return "—" if v is None else v


def fiscal_year_of(d: date) -> int:
    return d.year + (d.month >= 7)


def date_words(d: date, lang: str) -> str:
    return fmt_date(d, lang)
