"""``python -m treeexplorer``: the command line (see :mod:`treeexplorer.cli`)."""

import sys

from treeexplorer.cli import main

if __name__ == "__main__":
    sys.exit(main())
