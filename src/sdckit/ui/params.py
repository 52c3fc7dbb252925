"""The one parameters object of the workbench's own: the k of the k-anonymity check on the Measure
page (what ``sdckit check -k`` requires), generated into its form like every method's."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from sdckit.params import MethodParams, Whole


class ViolationParams(MethodParams):
    """Equivalence classes (records sharing every quasi-identifier) smaller than k, counted as
    sdckit check -k counts them."""

    k: Annotated[Whole, Field(ge=1, description="k of k-anonymity: a smaller class is a violation.")] = 5
