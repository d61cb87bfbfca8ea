"""Make the shared test helpers (``tests/_oracle.py``) importable as ``_oracle``."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
