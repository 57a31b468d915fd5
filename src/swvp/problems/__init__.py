"""Training problems: a structure's data tuple, its compiled operations for the learning engine, and a Python class.

``chain`` (label sequences of order 1 or 2), ``tree`` (graph-based dependency trees of order 1 or 2) and ``latent``
(label sequences explained by latent states). Each implements :mod:`swvp.learn.ops`; the tasks build them.
"""
