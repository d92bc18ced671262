"""String-to-grid functions and the program compositionality score (seed 003).

* :mod:`cogen.programs.functions`  the six settings, sampled with NumPy; inputs, outputs, groups
* :mod:`cogen.programs.code`       Python code extracted from a model's reply, fenced or not (bounded)
* :mod:`cogen.programs.analysis`   Σn_z, Σm_z and L(P+) of a Python program, by static analysis
  (:mod:`~cogen.programs.values`: what counts as a value; :mod:`~cogen.programs.variables`: values
  carried by variables; :mod:`~cogen.programs.entry`: which function is the program)
* :mod:`cogen.programs.sandbox`    E: a program run on the 16 inputs, confined by the kernel
  (:mod:`~cogen.programs.isolation`: bubblewrap; :mod:`~cogen.programs.seccomp`: the filters;
  :mod:`~cogen.programs.protocol`: what the scorer accepts from a server; ``_sandbox_child``: the server)
* :mod:`cogen.programs.score`      L(P), C(P), the T1/T2/T3 types, averages; :mod:`~cogen.programs.tables`:
  the paper's Tables 1 and 2 in Markdown
* :mod:`cogen.programs.text`       untrusted text cleaned before it is shown
* :mod:`cogen.programs.styles`     programs of known structure that solve a function (oracles)
"""
