"""The codes a determination speaks in (rules §7), in their order: statuses,
reasons for no entitlement, warnings. Texts for each are in the i18n
catalogs. Kept apart from `article19` (which builds the rules as Polars
expressions) so that code without Polars can read them too."""

from __future__ import annotations

REASONS = ("not_covered", "not_separated", "refund_requested", "insufficient_service")
STATUSES = ("eligible", "not_yet_eligible", "not_entitled")
WARNINGS = (
    "service_exceeds_span",
    "start_before_determination",
    "implausible_entry_age",
    "retirement_annuity_may_apply",
    "act_3_2013_accruals_frozen",
    "act_3_2013_ages_may_apply",
    "act_3_2013_minimum_may_apply",
)
