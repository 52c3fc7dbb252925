"""``sdckit ui``: a local browser workbench over the library (describe, measure, protect, compare,
export). Its forms are generated from the parameters objects of the registries, its figures are the
measures' own, and its long runs are jobs in processes of their own (:mod:`sdckit.ui.jobs`)."""
