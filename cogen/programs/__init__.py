"""String-to-grid functions and the program compositionality score (seed 003).

* :mod:`cogen.programs.functions`  the six settings, sampled with NumPy; inputs, outputs, groups
* :mod:`cogen.programs.analysis`   Σn_z, Σm_z and L(P+) of a Python program, by static analysis
* :mod:`cogen.programs.sandbox`    E: a program run on the 16 inputs in a separate, limited process
* :mod:`cogen.programs.score`      L(P), C(P), the T1/T2/T3 types, averages and the Table-1 report
* :mod:`cogen.programs.code`       Python code extracted from a model's reply, fenced or not
* :mod:`cogen.programs.styles`     programs of known structure that solve a function (oracles)
"""
