"""lsjit.io: g2o pose graphs and BAL bundle adjustment files, read by lsjit's own C++ readers
(checked as `lsjit solve` checks them: an error names the file, the line and what was
expected, as an lsjit.Error) into numpy arrays laid out for Problem.add.

    g = lsjit.io.read_g2o("sphere2500.g2o")
    g["dimension"]          # 2 or 3
    g["vertex_ids"]         # (n,) int64, file order
    g["poses"]              # (n, 4) SE2 or (n, 7) SE3 parameters (lsjit's layouts)
    g["edges"]              # (m, 2) int64: from, to
    g["measurements"]       # (m, 4) or (m, 7)
    g["sqrt_information"]   # (m, 3, 3) or (m, 6, 6): upper U with UᵀU = Ω
    g["held_constant"]      # the IDs a solve holds constant (FIX lines, else the first vertex)

    b = lsjit.io.read_bal("problem-49-7776-pre.txt")
    b["cameras"] (nc, 9), b["points"] (np, 3), b["camera_index"], b["point_index"] (nobs,),
    b["observations"] (nobs, 2)
"""

import os

from . import _lsjit


def read_g2o(path):
    return _lsjit.read_g2o(os.fspath(path))


def read_bal(path):
    return _lsjit.read_bal(os.fspath(path))
