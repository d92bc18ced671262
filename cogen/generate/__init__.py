"""The seeded rejection sampler of COGITAO-style samples (Numba kernels in ``_sampler``)."""

from cogen.generate.program import Program, compile_domain, stream_seed

__all__ = ["Program", "compile_domain", "stream_seed"]
