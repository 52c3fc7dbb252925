"""The 14 records of test2.csv (ZIPCode, Age, Disease) that the command-line tests share."""

DATA = """ZIPCode,Age,Disease
47677,29,gastric ulcer
47602,22,gastritis
47678,27,stomach cancer
47905,43,gastritis
47909,52,flu
47906,47,bronchitis
47605,30,bronchitis
47673,36,pneumonia
47607,32,stomach cancer
47677,25,flu
47911,55,gastritis
47603,38,pneumonia
47906,41,flu
47678,28,gastritis
"""
