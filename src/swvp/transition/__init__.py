"""swvp.transition: the arc-standard system (arc_standard.py), its compiled moves (_kernels.py) and DP beam search
with a selector-compatible trace (beam.py, _beam_kernels.py). Training runs in the learning engine
(:mod:`swvp.problems.transition`); users hold :class:`swvp.TransitionDependencyParser`."""
