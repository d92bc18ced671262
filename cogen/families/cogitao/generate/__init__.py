"""The seeded rejection sampler of COGITAO-style samples (Numba kernels in ``_sampler``)."""

from cogen.families.cogitao.generate.program import Program, compile_domain, stream_seed

__all__ = ["Program", "compile_domain", "stream_seed"]
