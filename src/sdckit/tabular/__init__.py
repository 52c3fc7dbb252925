"""Tabular data protection: tables from microdata, primary sensitivity rules, secondary cell
suppression with an attacker audit, controlled rounding, controlled tabular adjustment and the cell
key method (``sdckit table <method>``). Importing the package registers the methods."""

from sdckit.tabular import audit, cellkey, cta, rounding, suppression  # noqa: F401  (registers the methods)
