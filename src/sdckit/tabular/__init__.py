"""Tabular data protection: tables from microdata, primary sensitivity rules, secondary cell
suppression with an attacker audit, controlled rounding, controlled tabular adjustment and the cell
key method (``sdckit table <method>``). The registry of the methods
(:data:`sdckit.tabular.base.TABLE_METHODS`) discovers the modules that declare one, and imports a
module when its method is asked for."""
