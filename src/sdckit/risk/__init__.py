"""Risk measures: how exposed a record or a file is."""
