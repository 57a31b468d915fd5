"""swvp.inference._kernels."""
