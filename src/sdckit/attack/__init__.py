"""Attacks: an adversary for every protection (``sdckit attack``).

Every module here that declares an attack (``register_attack("name", Params, ...)``) is discovered by
:data:`sdckit.attack.base.ATTACKS` without being imported; the command line lists and runs them in the
order that registry gives. An attack is written independently of the method whose release it attacks:
it reads the original, the release (and the held-out control records) as an adversary would, and
counts how often it wins (:mod:`sdckit.attack.base`).
"""
